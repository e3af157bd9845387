"""The `TelemetrySource` port (DESIGN.md principle 5).

Contract: `poll(now)` returns one `ClusterSnapshot` stamped with `now` (the caller's clock)
or raises `TelemetryError` when the cluster could not be observed; it never returns a
partial snapshot silently (`containers_complete` says whether containers were listed).
Live, the RM REST API implements it; the simulator and tests supply their own.
"""

from __future__ import annotations

from typing import Protocol

from harvester.domain import ClusterSnapshot


class TelemetryError(Exception):
    """The cluster could not be observed this time (RM down, bad answer). `dependency` names
    what failed for /readyz (loop/runner.dependency_of)."""

    dependency = "rm"


class TelemetrySource(Protocol):
    name: str

    def poll(self, now: float) -> ClusterSnapshot: ...

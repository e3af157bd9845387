"""The `HistoryStore` port (DESIGN.md principle 5).

Contract, shared by every implementation and checked by one parametrized test suite:
- writes are appends; `append_*` returns how many rows were stored;
- reads return rows ordered by time then node id, within `[since, until)`;
- `prune(before)` removes rows older than `before` and returns counts per table;
- the store never reads a clock: every time comes from the caller.
Models never write to the store themselves (principle 9): loops read history, call pure
`fit`, and persist what they got back.
"""

from __future__ import annotations

from typing import Collection, Protocol, Sequence

from harvester.domain import NodeSample
from harvester.models.job_history import JobRun
from harvester.models.margins import MarginModel
from harvester.models.utilization_classes import TenantClassModel


class StoreError(Exception):
    """The store cannot be opened or used (corrupt file, newer schema, unwritable path)."""


class HistoryStore(Protocol):
    def append_node_samples(self, samples: Sequence[NodeSample]) -> int: ...

    def node_samples(
        self, *, since: float, until: float | None = None, node_ids: Collection[str] | None = None
    ) -> list[NodeSample]: ...

    def node_ids(self) -> list[str]: ...

    def prune(self, before: float) -> dict[str, int]: ...

    def schema_version(self) -> int: ...

    def close(self) -> None: ...

    # --- harvesting (schema version 2) ----------------------------------------------------
    # Class models and margin models are stored whole per version (saving a version again
    # replaces it); `class_model()` / `margin_model()` without a version return the latest.
    # Job runs are keyed by app id (appending one again replaces it) and read back ordered by
    # finish time then app id, within `[since, until)` of their finish time.

    def save_class_model(self, model: TenantClassModel) -> int: ...

    def class_model(self, version: int | None = None) -> TenantClassModel | None: ...

    def save_margin_model(self, model: MarginModel) -> int: ...

    def margin_model(self, version: int | None = None) -> MarginModel | None: ...

    def append_job_runs(self, runs: Sequence[JobRun]) -> int: ...

    def job_runs(
        self, *, since: float, until: float | None = None, job_names: Collection[str] | None = None
    ) -> list[JobRun]: ...

"""A `TelemetrySource` over nodes held in memory: the test fake and the empty embedded cluster."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Iterable

from harvester.domain import ClusterSnapshot, ContainerInfo, NodeSample
from harvester.telemetry.source import TelemetryError


class InMemoryTelemetrySource:
    """Returns whatever nodes/containers were last `set`; `fail_with` makes polls fail."""

    def __init__(self, name: str = "memory", nodes: Iterable[NodeSample] = ()) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._nodes = tuple(nodes)
        self._containers: tuple[ContainerInfo, ...] = ()
        self._error: str | None = None

    def set(self, nodes: Iterable[NodeSample], containers: Iterable[ContainerInfo] = ()) -> None:
        with self._lock:
            self._nodes, self._containers = tuple(nodes), tuple(containers)

    def fail_with(self, error: str | None) -> None:
        with self._lock:
            self._error = error

    def poll(self, now: float) -> ClusterSnapshot:
        with self._lock:
            if self._error:
                raise TelemetryError(self._error)
            nodes = tuple(replace(n, time=now) for n in self._nodes)
            return ClusterSnapshot(
                time=now, source=self.name, nodes=nodes, containers=self._containers, containers_complete=True
            )

"""Tick that polls the cluster and appends its node samples to history.

It also keeps the newest good snapshot for the read side and for decisions, with its age:
decisions must treat a snapshot older than `telemetry.stale_after_s` as stale (no new
capacity offered, no kills). Observers (e.g. the node registry recording baselines, the fold of
each poll into per-tenant 2-minute slots) run on every good snapshot after it is stored; their
summaries join the tick's, and one that raises fails the tick (the snapshot stays the latest).
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from harvester.domain import ClusterSnapshot
from harvester.history.store import HistoryStore
from harvester.loop.runner import TickResult
from harvester.observability.metrics import Metrics
from harvester.telemetry.source import TelemetryError, TelemetrySource


Observer = Callable[[ClusterSnapshot], Mapping[str, Any]]


class RecordTelemetry:
    """`tick(now)`: poll, store samples, remember the snapshot; poll failures fail the tick."""

    def __init__(self, source: TelemetrySource, store: HistoryStore, metrics: Metrics,
                 observers: Sequence[Observer] = (), *, node_rows: bool = True) -> None:
        self._node_rows = node_rows  # store.node_sample_rows: false keeps only what observers store
        self._source = source
        self._store = store
        self._metrics = metrics
        self._observers = tuple(observers)
        self._lock = threading.Lock()
        self._latest: ClusterSnapshot | None = None

    def latest(self) -> ClusterSnapshot | None:
        with self._lock:
            return self._latest

    def age(self, now: float) -> float | None:
        latest = self.latest()
        return None if latest is None else max(0.0, now - latest.time)

    def tick(self, now: float) -> TickResult:
        try:
            snapshot = self._source.poll(now)
        except TelemetryError:
            self._metrics.record_poll(False)
            age = self.age(now)
            if age is not None:
                self._metrics.record_telemetry_age(age)
            raise
        self._metrics.record_poll(True, dict(Counter(n.state for n in snapshot.nodes)))
        self._metrics.record_telemetry_age(0.0)
        written = self._store.append_node_samples(snapshot.nodes) if self._node_rows else 0
        if written:
            self._metrics.record_rows_written("node_samples", written)
        with self._lock:
            self._latest = snapshot
        summary: dict[str, Any] = {"source": self._source.name, "nodes": len(snapshot.nodes), "rows_written": written}
        for observe in self._observers:
            summary.update(observe(snapshot))
        return TickResult(summary)

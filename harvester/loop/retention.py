"""Tick that prunes history older than the retention window (store.retention_days)."""

from __future__ import annotations

from harvester.history.store import HistoryStore
from harvester.loop.runner import TickResult
from harvester.observability.metrics import Metrics


class PruneHistory:
    def __init__(self, store: HistoryStore, retention_s: float, metrics: Metrics) -> None:
        self._store = store
        self._retention_s = retention_s
        self._metrics = metrics

    def __call__(self, now: float) -> TickResult:
        removed = self._store.prune(now - self._retention_s)
        for table, n in removed.items():
            self._metrics.record_rows_pruned(table, n)
        return TickResult({"pruned": removed, "before": now - self._retention_s})

"""Tick that prunes history older than its retention window.

Raw node samples (one row per node per poll, ~10 s) are kept `store.raw_samples_retention_days`
(default 2: enough to diagnose a recent decision); the models read the per-tenant 2-minute
slots instead, kept `store.retention_days` (default 35 ≥ the 30-day model window). Finished
job runs (Algorithm 1's job history) are kept `job_runs_retention_s`: the composition root
passes the longer of that and `harvesting.job_length.history_days`. The decision log (what the
guard acted on and why, for `harvester explain`) is kept `store.decision_log_days`. Fitted
models (class models with their margins, HDFS grids) are stored whole per version: only the
newest `model_versions_kept` versions are kept (a refit per POST once grew `class_models`
without end).
"""

from __future__ import annotations

from harvester.history.store import HistoryStore
from harvester.loop.runner import TickResult
from harvester.observability.metrics import Metrics


class PruneHistory:
    def __init__(self, store: HistoryStore, retention_s: float, metrics: Metrics, *,
                 raw_retention_s: float | None = None, job_runs_retention_s: float | None = None,
                 decisions_retention_s: float | None = None, model_versions_kept: int | None = None) -> None:
        self._store = store
        self._retention_s = retention_s
        self._raw_retention_s = retention_s if raw_retention_s is None else raw_retention_s
        self._runs_retention_s = retention_s if job_runs_retention_s is None else job_runs_retention_s
        self._decisions_retention_s = retention_s if decisions_retention_s is None else decisions_retention_s
        self._metrics = metrics
        self._versions_kept = model_versions_kept

    def tick(self, now: float) -> TickResult:
        removed = dict(self._store.prune(now - self._raw_retention_s))
        removed["tenant_slots"] = self._store.prune_tenant_slots(now - self._retention_s)
        removed["job_runs"] = self._store.prune_job_runs(now - self._runs_retention_s)
        removed["decision_log"] = self._store.prune_decisions(now - self._decisions_retention_s)
        if self._versions_kept is not None:
            removed.update(self._store.prune_model_versions(self._versions_kept))
        for table, n in removed.items():
            self._metrics.record_rows_pruned(table, n)
        return TickResult({"pruned": removed, "raw_before": now - self._raw_retention_s,
                           "slots_before": now - self._retention_s})

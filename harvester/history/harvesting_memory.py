"""In-memory side of the harvesting tables: a mixin of `MemoryHistoryStore` (same contract)."""

from __future__ import annotations

import threading
from typing import Collection, Sequence, TypeVar

from harvester.models.job_history import JobRun
from harvester.models.margins import MarginModel
from harvester.models.utilization_classes import TenantClassModel

T = TypeVar("T")


def _pick(models: dict[int, T], version: int | None) -> T | None:
    """The given version, or the latest when None; None when absent."""
    if not models:
        return None
    return models.get(max(models) if version is None else version)


class HarvestingMemoryMixin:
    _lock: threading.Lock

    def _harvesting_tables(self) -> tuple[dict[int, TenantClassModel], dict[int, MarginModel], dict[str, JobRun]]:
        # created lazily so the mixin needs no cooperation from the store's __init__
        if not hasattr(self, "_class_models"):
            self._class_models: dict[int, TenantClassModel] = {}
            self._margin_models: dict[int, MarginModel] = {}
            self._job_runs: dict[str, JobRun] = {}
        return self._class_models, self._margin_models, self._job_runs

    def save_class_model(self, model: TenantClassModel) -> int:
        with self._lock:
            self._harvesting_tables()[0][model.version] = model
        return 1 + len(model.classes) + len(model.tenants)

    def class_model(self, version: int | None = None) -> TenantClassModel | None:
        with self._lock:
            return _pick(self._harvesting_tables()[0], version)

    def save_margin_model(self, model: MarginModel) -> int:
        with self._lock:
            self._harvesting_tables()[1][model.version] = model
        return 1 + len(model.margins)

    def margin_model(self, version: int | None = None) -> MarginModel | None:
        with self._lock:
            return _pick(self._harvesting_tables()[1], version)

    def append_job_runs(self, runs: Sequence[JobRun]) -> int:
        with self._lock:
            table = self._harvesting_tables()[2]
            for r in runs:
                table[r.app_id] = r
        return len(runs)

    def prune_job_runs(self, before: float) -> int:
        with self._lock:
            table = self._harvesting_tables()[2]
            old = [k for k, r in table.items() if r.finished_at < before]
            for k in old:
                del table[k]
        return len(old)

    def job_runs(
        self, *, since: float, until: float | None = None, job_names: Collection[str] | None = None
    ) -> list[JobRun]:
        names = None if job_names is None else set(job_names)
        with self._lock:
            rows = [
                r for r in self._harvesting_tables()[2].values()
                if r.finished_at >= since and (until is None or r.finished_at < until)
                and (names is None or r.job_name in names)
            ]
        return sorted(rows, key=lambda r: (r.finished_at, r.app_id))

"""SQLite side of the harvesting tables (schema version 2): class models, margins, job runs.

A mixin of `SqliteHistoryStore` (it uses that class's `_db` connection and `_lock`), kept
apart so the store's core stays readable. The contract is in history/store.py.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
import threading
from typing import Collection, Sequence

from harvester.history.sql import window_select
from harvester.models.job_history import JobRun, RunUsage
from harvester.models.margins import ClassMargin, MarginModel
from harvester.models.patterns import Pattern, PatternParams
from harvester.models.utilization_classes import ClassParams, TenantAssignment, TenantClassModel, UtilizationClass


def params_to_json(p: ClassParams) -> str:
    return json.dumps(dataclasses.asdict(p), sort_keys=True)


def params_from_json(text: str) -> ClassParams:
    d = json.loads(text)
    patterns = PatternParams(**d.pop("patterns"))
    return ClassParams(patterns=patterns, **d)


def _nan(v: float | None) -> float:
    return math.nan if v is None else v


def _null(v: float) -> float | None:
    return None if math.isnan(v) else v


class HarvestingSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock

    def _write(self, statements: Sequence[tuple[str, Sequence[tuple]]]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                for sql, rows in statements:
                    self._db.executemany(sql, rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _latest(self, table: str, version: int | None) -> int | None:
        with self._lock:
            if version is None:
                return self._db.execute(f"SELECT MAX(version) FROM {table}").fetchone()[0]
            row = self._db.execute(f"SELECT version FROM {table} WHERE version = ?", (version,)).fetchone()
            return None if row is None else row[0]

    # --- utilization classes -------------------------------------------------------------

    def save_class_model(self, model: TenantClassModel) -> int:
        v = model.version
        self._write([
            ("DELETE FROM utilization_classes WHERE version = ?", [(v,)]),
            ("DELETE FROM tenant_classes WHERE version = ?", [(v,)]),
            ("INSERT OR REPLACE INTO class_models (version, fitted_at, params, skipped) VALUES (?, ?, ?, ?)",
             [(v, model.fitted_at, params_to_json(model.params), json.dumps([list(s) for s in model.skipped]))]),
            ("INSERT INTO utilization_classes VALUES (?, ?, ?, ?, ?, ?, ?)",
             [(v, c.class_id, c.pattern.value, c.average, c.peak, c.tenants, c.weight) for c in model.classes]),
            ("INSERT INTO tenant_classes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             [(v, a.tenant, a.class_id, a.pattern.value, a.average, a.peak, a.periodic_share, a.std, a.samples, a.fallback)
              for a in model.tenants]),
        ])
        return 1 + len(model.classes) + len(model.tenants)

    def class_model(self, version: int | None = None) -> TenantClassModel | None:
        v = self._latest("class_models", version)
        if v is None:
            return None
        with self._lock:
            head = self._db.execute("SELECT fitted_at, params, skipped FROM class_models WHERE version = ?", (v,)).fetchone()
            classes = self._db.execute(
                "SELECT class_id, pattern, average, peak, tenants, weight FROM utilization_classes WHERE version = ? "
                "ORDER BY rowid", (v,)).fetchall()
            tenants = self._db.execute(
                "SELECT tenant, class_id, pattern, average, peak, periodic_share, std, samples, fallback "
                "FROM tenant_classes WHERE version = ? ORDER BY tenant", (v,)).fetchall()
        return TenantClassModel(
            version=v, fitted_at=head[0],
            classes=tuple(UtilizationClass(r[0], Pattern(r[1]), r[2], r[3], r[4], r[5]) for r in classes),
            tenants=tuple(TenantAssignment(r[0], r[1], Pattern(r[2]), r[3], r[4], r[5], r[6], r[7], r[8]) for r in tenants),
            params=params_from_json(head[1]), skipped=tuple(tuple(s) for s in json.loads(head[2])),
        )

    # --- margins -------------------------------------------------------------------------

    def save_margin_model(self, model: MarginModel) -> int:
        v = model.version
        self._write([
            ("DELETE FROM class_margins WHERE version = ?", [(v,)]),
            ("INSERT OR REPLACE INTO margin_models (version, fitted_at, quantile, step_s, method, horizon_s) "
             "VALUES (?, ?, ?, ?, ?, ?)",
             [(v, model.fitted_at, model.quantile, model.step_s, model.method, model.horizon_s)]),
            ("INSERT INTO class_margins (version, class_id, margin, changes, mean_change, source) VALUES (?, ?, ?, ?, ?, ?)",
             [(v, m.class_id, _null(m.margin), m.changes, _null(m.mean_change), m.source) for m in model.margins]),
        ])
        return 1 + len(model.margins)

    def margin_model(self, version: int | None = None) -> MarginModel | None:
        v = self._latest("margin_models", version)
        if v is None:
            return None
        with self._lock:
            head = self._db.execute("SELECT fitted_at, quantile, step_s, method, horizon_s FROM margin_models "
                                    "WHERE version = ?", (v,)).fetchone()
            rows = self._db.execute(
                "SELECT class_id, margin, changes, mean_change, source FROM class_margins WHERE version = ? "
                "ORDER BY class_id", (v,)).fetchall()
        margins = tuple(ClassMargin(r[0], head[1], _nan(r[1]), r[2], _nan(r[3]), r[4]) for r in rows)
        return MarginModel(v, head[0], head[1], head[2], margins, method=head[3], horizon_s=head[4])

    # --- retention of model versions ----------------------------------------------------

    #: (head table, its per-version detail tables): each family keeps its newest versions.
    _VERSIONED = (
        ("class_models", ("utilization_classes", "tenant_classes")),
        ("margin_models", ("class_margins",)),
        ("hdfs_grids", ("hdfs_grid_tenants",)),
    )

    def prune_model_versions(self, keep: int) -> dict[str, int]:
        """Remove all but the newest `keep` versions of every versioned model (store.py)."""
        if keep < 1:
            raise ValueError(f"keep must be >= 1, got {keep}")
        removed: dict[str, int] = {}
        with self._lock:
            self._db.execute("BEGIN")
            try:
                for head, details in self._VERSIONED:
                    row = self._db.execute(f"SELECT version FROM {head} ORDER BY version DESC LIMIT 1 OFFSET ?",
                                           (keep - 1,)).fetchone()
                    oldest_kept = row[0] if row else None
                    for table in (head, *details):
                        removed[table] = 0 if oldest_kept is None else self._db.execute(
                            f"DELETE FROM {table} WHERE version < ?", (oldest_kept,)).rowcount
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return removed

    # --- job runs ------------------------------------------------------------------------

    def append_job_runs(self, runs: Sequence[JobRun]) -> int:
        if not runs:
            return 0
        usage = [r for r in runs if r.usage is not None]
        # a run seen again (the jobs loop re-reads a minute of overlap, and everything after a
        # restart) comes back without what only its polls while it ran knew — its peak, its
        # container-seconds, its launch (telemetry/rm_jobs.py pops them when first reported):
        # the row keeps what the first sighting knew (the larger peak, the known values)
        self._write([
            ("INSERT INTO job_runs (app_id, job_name, started_at, finished_at, peak_containers, "
             "container_seconds, launched_at, final_status, queue, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
             "ON CONFLICT(app_id) DO UPDATE SET job_name = excluded.job_name, started_at = excluded.started_at, "
             "finished_at = excluded.finished_at, peak_containers = MAX(peak_containers, excluded.peak_containers), "
             "container_seconds = COALESCE(excluded.container_seconds, container_seconds), "
             "launched_at = COALESCE(excluded.launched_at, launched_at), final_status = excluded.final_status, "
             "queue = excluded.queue, origin = excluded.origin",
             [(r.app_id, r.job_name, r.started_at, r.finished_at, r.peak_containers, r.container_seconds,
               r.launched_at, r.final_status, r.queue, r.origin) for r in runs]),
            ("INSERT OR REPLACE INTO job_run_usage (app_id, step_s, origin_t, first_s, last_s, memory_mb, vcores) "
             "VALUES (?, ?, ?, ?, ?, ?, ?)",
             [(r.app_id, u.step_s, u.origin, u.first_s, u.last_s, json.dumps(u.memory_mb), json.dumps(u.vcores))
              for r in usage if (u := r.usage) is not None]),
            ("DELETE FROM running_apps WHERE app_id = ?", [(r.app_id,) for r in runs]),  # finished: not running
        ])
        return len(runs)

    def prune_job_runs(self, before: float) -> int:
        with self._lock:
            self._db.execute("DELETE FROM job_run_usage WHERE app_id IN "
                             "(SELECT app_id FROM job_runs WHERE finished_at < ?)", (before,))
            return self._db.execute("DELETE FROM job_runs WHERE finished_at < ?", (before,)).rowcount

    def job_runs(
        self, *, since: float, until: float | None = None, job_names: Collection[str] | None = None,
        with_usage: bool = False,
    ) -> list[JobRun]:
        cols = ("r.job_name, r.app_id, r.started_at, r.finished_at, r.peak_containers, r.container_seconds, "
                "r.launched_at, r.final_status, r.queue, r.origin")
        join = ""
        if with_usage:
            cols += ", u.step_s, u.origin_t, u.memory_mb, u.vcores, u.first_s, u.last_s"
            join = " LEFT JOIN job_run_usage u ON u.app_id = r.app_id"
        query = window_select(
            f"SELECT {cols} FROM job_runs r{join}", "r.finished_at", since=since, until=until, key_col="r.job_name",
            keys=job_names, order_by="r.finished_at, r.app_id",
        )
        if query is None:
            return []
        with self._lock:
            rows = self._db.execute(*query).fetchall()
        return [JobRun(*r[:10], usage=_usage(r[10:]) if with_usage else None) for r in rows]


def _usage(r: Sequence) -> RunUsage | None:
    if r[0] is None:
        return None
    return RunUsage(r[0], r[1], tuple(json.loads(r[2])), tuple(json.loads(r[3])), r[4], r[5])

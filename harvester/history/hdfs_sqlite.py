"""SQLite side of the HDFS-H tables (schema version 4): grids, reimages, DataNodes, versions.

A mixin of `SqliteHistoryStore` (it uses that class's `_db` connection and `_lock`), like
harvesting_sqlite.py. The contract is in history/store.py. Bounds of a grid may be ±inf
(an empty band); they are stored as JSON text, which Python writes and reads as Infinity.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Callable, Sequence

from harvester.decisions.hdfs_table import PublishedVersion
from harvester.models.hdfs_grid_model import GridModel, GridTenant
from harvester.models.hdfs_tenant_stats import TenantStatsRow
from harvester.models.reimage_detection import DataNodeObservation, ReimageEvent

#: Published-version records kept (older ones are dropped on append).
TABLE_VERSIONS_KEPT = 1000

_TENANT_COLUMNS = (
    "tenant, environment, reimages_per_server_month, peak_cpu, available_bytes, datanodes, reimage_events, "
    "observed_server_days, cpu_samples, reimage_source, cpu_source"
)
_DN_COLUMNS = "name, hostname, datanode_id, t, first_seen, num_blocks, block_pool_used, nn_started_ms, cluster_blocks"


class HdfsSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock
    # One transaction of (sql, rows) statements: HarvestingSqlMixin._write, a sibling mixin of
    # SqliteHistoryStore.
    _write: Callable[[Sequence[tuple[str, Sequence[tuple]]]], None]

    # --- grids ---------------------------------------------------------------------------

    def save_hdfs_grid(self, model: GridModel) -> int:
        v = model.version
        self._write([
            ("DELETE FROM hdfs_grid_tenants WHERE version = ?", [(v,)]),
            ("INSERT OR REPLACE INTO hdfs_grids (version, fitted_at, window_s, row_bounds, col_bounds, imbalance) "
             "VALUES (?, ?, ?, ?, ?, ?)",
             [(v, model.fitted_at, model.window_s, json.dumps(list(model.row_bounds)),
               json.dumps([list(b) for b in model.col_bounds]), model.imbalance)]),
            (f"INSERT INTO hdfs_grid_tenants (version, row, col, {_TENANT_COLUMNS}) VALUES ({', '.join('?' * 14)})",
             [(v, t.row, t.col, s.tenant, s.environment, s.reimages_per_server_month, s.peak_cpu, s.available_bytes,
               s.datanodes, s.reimage_events, s.observed_server_days, s.cpu_samples, s.reimage_source, s.cpu_source)
              for t in model.tenants for s in (t.stats,)]),
        ])
        return 1 + len(model.tenants)

    def hdfs_grid(self, version: int | None = None) -> GridModel | None:
        with self._lock:
            if version is None:
                head = self._db.execute(
                    "SELECT version, fitted_at, window_s, row_bounds, col_bounds, imbalance FROM hdfs_grids "
                    "ORDER BY version DESC LIMIT 1").fetchone()
            else:
                head = self._db.execute(
                    "SELECT version, fitted_at, window_s, row_bounds, col_bounds, imbalance FROM hdfs_grids "
                    "WHERE version = ?", (version,)).fetchone()
            if head is None:
                return None
            rows = self._db.execute(
                f"SELECT row, col, {_TENANT_COLUMNS} FROM hdfs_grid_tenants WHERE version = ? ORDER BY tenant",
                (head[0],)).fetchall()
        tenants = tuple(GridTenant(r[0], r[1], TenantStatsRow(*r[2:])) for r in rows)
        rb = json.loads(head[3])
        cb = json.loads(head[4])
        return GridModel(head[0], head[1], head[2], tenants, (rb[0], rb[1]), tuple((b[0], b[1]) for b in cb), head[5])

    # --- reimages detected from JMX -------------------------------------------------------

    def append_hdfs_reimages(self, events: Sequence[ReimageEvent]) -> int:
        if not events:
            return 0
        self._write([(
            "INSERT INTO hdfs_reimages (t, hostname, tenant, datanode_id, source, reason) VALUES (?, ?, ?, ?, ?, ?)",
            [(e.time, e.hostname, e.tenant, e.datanode_id, e.source, e.reason) for e in events],
        )])
        return len(events)

    def hdfs_reimages(self, *, since: float, until: float | None = None) -> list[ReimageEvent]:
        sql = "SELECT t, hostname, tenant, datanode_id, source, reason FROM hdfs_reimages WHERE t >= ?"
        args: list[object] = [since]
        if until is not None:
            sql += " AND t < ?"
            args.append(until)
        sql += " ORDER BY t, hostname"
        with self._lock:
            return [ReimageEvent(*r) for r in self._db.execute(sql, args)]

    # --- DataNode observations (the detection heuristic's memory) -------------------------

    def save_hdfs_datanodes(self, observations: Sequence[DataNodeObservation]) -> int:
        if not observations:
            return 0
        self._write([(
            f"INSERT OR REPLACE INTO hdfs_datanodes ({_DN_COLUMNS}) VALUES ({', '.join('?' * 9)})",
            [(o.name, o.hostname, o.datanode_id, o.time, o.first_seen, o.num_blocks, o.block_pool_used_bytes,
              o.nn_started_ms, o.cluster_blocks) for o in observations],
        )])
        return len(observations)

    def hdfs_datanodes(self) -> dict[str, DataNodeObservation]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_DN_COLUMNS} FROM hdfs_datanodes ORDER BY name").fetchall()
        return {r[0]: DataNodeObservation(*r) for r in rows}

    # --- published table versions -----------------------------------------------------------

    def append_hdfs_table_version(self, record: PublishedVersion) -> int:
        self._write([
            ("INSERT OR REPLACE INTO hdfs_table_versions (version, generated_at, grid_version, datanodes, busy, reasons) "
             "VALUES (?, ?, ?, ?, ?, ?)",
             [(record.version, record.generated_at, record.grid_version, record.datanodes, record.busy,
               json.dumps(list(record.reasons)))]),
            ("DELETE FROM hdfs_table_versions WHERE version NOT IN "
             "(SELECT version FROM hdfs_table_versions ORDER BY version DESC LIMIT ?)", [(TABLE_VERSIONS_KEPT,)]),
        ])
        return 1

    def hdfs_table_versions(self, *, limit: int = 50) -> list[PublishedVersion]:
        with self._lock:
            rows = self._db.execute(
                "SELECT version, generated_at, grid_version, datanodes, busy, reasons FROM hdfs_table_versions "
                "ORDER BY version DESC LIMIT ?", (limit,)).fetchall()
        return [PublishedVersion(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5]))) for r in rows]

"""SQLite side of the live-harvesting tables (schema version 3): tenant slots, node baselines.

A mixin of `SqliteHistoryStore` (it uses that class's `_db` connection and `_lock`), like
harvesting_sqlite.py. The contract is in history/store.py.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Collection, Sequence

from harvester.domain import NodeBaseline, Resources
from harvester.history.sql import window_select
from harvester.models.tenant_slots import TenantSlot


class LiveSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock

    def _executemany(self, sql: str, rows: Sequence[tuple]) -> int:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                before = self._db.total_changes
                self._db.executemany(sql, rows)
                changed = self._db.total_changes - before
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return changed

    # --- tenant slots --------------------------------------------------------------------

    def add_tenant_slots(self, slots: Sequence[TenantSlot]) -> int:
        if not slots:
            return 0
        self._executemany(
            "INSERT INTO tenant_slots (t, tenant, util_sum, polls, nodes) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (t, tenant) DO UPDATE SET util_sum = util_sum + excluded.util_sum, "
            "polls = polls + excluded.polls, nodes = MAX(nodes, excluded.nodes)",
            [(s.start, s.tenant, s.util_sum, s.polls, s.nodes) for s in slots],
        )
        return len(slots)

    def tenant_slots(
        self, *, since: float, until: float | None = None, tenants: Collection[str] | None = None
    ) -> list[TenantSlot]:
        query = window_select("SELECT tenant, t, util_sum, polls, nodes FROM tenant_slots", "t", since=since,
                              until=until, key_col="tenant", keys=tenants, order_by="t, tenant")
        if query is None:
            return []
        with self._lock:
            return [TenantSlot(*r) for r in self._db.execute(*query)]

    def prune_tenant_slots(self, before: float) -> int:
        with self._lock:
            return self._db.execute("DELETE FROM tenant_slots WHERE t < ?", (before,)).rowcount

    # --- node baselines ------------------------------------------------------------------

    def record_node_baselines(self, baselines: Sequence[NodeBaseline]) -> int:
        if not baselines:
            return 0
        return self._executemany(
            "INSERT OR IGNORE INTO node_baselines (node_id, hostname, memory_mb, vcores, seen_at) VALUES (?, ?, ?, ?, ?)",
            [(b.node_id, b.hostname, b.resources.memory_mb, b.resources.vcores, b.seen_at) for b in baselines],
        )

    def node_baselines(self) -> dict[str, NodeBaseline]:
        with self._lock:
            rows = self._db.execute(
                "SELECT node_id, hostname, memory_mb, vcores, seen_at FROM node_baselines ORDER BY node_id"
            ).fetchall()
        return {r[0]: NodeBaseline(r[0], r[1], Resources(r[2], r[3]), r[4]) for r in rows}

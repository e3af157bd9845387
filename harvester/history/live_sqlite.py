"""SQLite side of the live-harvesting tables: tenant slots, node baselines (schema version 3),
primary vectors (version 7), rise summaries (version 9).

A mixin of `SqliteHistoryStore` (it uses that class's `_db` connection and `_lock`), like
harvesting_sqlite.py. The contract is in history/store.py.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from typing import Callable, Collection, Iterator, Sequence, TypeVar

import numpy as np

from harvester.domain import NodeBaseline, Resources
from harvester.history.sql import window_select
from harvester.models.reaction_margins import PrimaryBlock
from harvester.models.rise_summary import FoldState, TenantDay, merge
from harvester.models.tenant_slots import SlotRow, TenantSlot

T = TypeVar("T")

#: Values per block read back by `primary_vectors` (bounded memory: 32 MB of float32 whatever the
#: node count; 10,000 nodes → 838 polls a block, 50,000 → 167).
VECTOR_VALUES = 1 << 23


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
        return self.read_tenant_slots(lambda rows: [TenantSlot(*r) for r in rows], since=since, until=until,
                                      tenants=tenants)

    def read_tenant_slots(self, consume: Callable[[Iterator[SlotRow]], T], *, since: float,
                          until: float | None = None, tenants: Collection[str] | None = None) -> T:
        """`consume(rows)` over the window's rows as they stream from the database (no list of
        them is built: a refit of thousands of tenants × 30 days), under the store's lock."""
        query = window_select("SELECT tenant, t, util_sum, polls, nodes FROM tenant_slots", "t", since=since,
                              until=until, key_col="tenant", keys=tenants, order_by="t, tenant")
        with self._lock:
            return consume(iter(self._db.execute(*query) if query is not None else ()))

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

    # --- primary vectors -----------------------------------------------------------------

    def _node_set(self, node_ids: Sequence[str]) -> int:
        """Id of a node order (cached; caller holds the lock)."""
        key = tuple(node_ids)
        cache: dict[tuple[str, ...], int] = self.__dict__.setdefault("_node_set_ids", {})
        if key not in cache:
            text = json.dumps(list(key))
            row = self._db.execute("SELECT id FROM node_sets WHERE nodes = ?", (text,)).fetchone()
            if row is None:
                row = (self._db.execute("INSERT INTO node_sets (nodes) VALUES (?)", (text,)).lastrowid,)
            cache[key] = int(row[0])
        return cache[key]

    def append_primary_vectors(self, times: Sequence[float], node_ids: Sequence[str], values: np.ndarray) -> int:
        values = np.asarray(values, dtype=np.float32).reshape(len(times), len(node_ids))
        if not len(times):
            return 0
        with self._lock:
            self._db.execute("BEGIN")
            try:
                ns = self._node_set(node_ids)
                self._db.executemany("INSERT INTO primary_vectors (t, node_set, util) VALUES (?, ?, ?)",
                                     [(float(t), ns, row.tobytes()) for t, row in zip(times, values)])
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                self.__dict__.pop("_node_set_ids", None)
                raise
        return len(times)

    def primary_vectors(self, *, since: float, until: float | None = None) -> Iterator[PrimaryBlock]:
        with self._lock:
            sets = {r[0]: tuple(json.loads(r[1])) for r in self._db.execute("SELECT id, nodes FROM node_sets")}
        polls = max(1, VECTOR_VALUES // max((len(n) for n in sets.values()), default=1))
        cursor = (since - 1.0, -1)
        where = "(t, rowid) > (?, ?) AND t >= ?" + (" AND t < ?" if until is not None else "")
        while True:  # pages of VECTOR_VALUES values, each split where the node set changes
            args = (*cursor, since) + (() if until is None else (until,))
            runs: list[tuple[int, list[float], np.ndarray]] = []  # (node set, times, values)
            read = 0
            with self._lock:
                # Each vector is copied into its block as it is read: a page fetched whole first
                # held every vector twice (the rows, then their join) in fresh memory, and took
                # 2.4× the CPU (50,000 nodes, bench/_reserve_fit.py).
                for t, rowid, ns, util in self._db.execute(f"SELECT t, rowid, node_set, util FROM primary_vectors "
                                                           f"WHERE {where} ORDER BY t, rowid LIMIT ?", (*args, polls)):
                    if not runs or runs[-1][0] != ns:  # room for the rest of the page
                        runs.append((ns, [], np.empty((polls - read, len(sets[ns])), dtype=np.float32)))
                    _, times, buf = runs[-1]
                    buf[len(times)] = np.frombuffer(util, dtype=np.float32)
                    times.append(t)
                    cursor, read = (t, rowid), read + 1
            if not runs:
                return
            for ns, times, buf in runs:  # a block kept by the caller holds at most twice its values
                n = len(times)
                yield PrimaryBlock(sets[ns], np.array(times), buf[:n] if 2 * n >= len(buf) else buf[:n].copy())

    # --- rise summaries ------------------------------------------------------------------

    def rise_fold_state(self) -> FoldState | None:
        with self._lock:
            row = self._db.execute("SELECT horizon_s, interval_s, folded_until, bins FROM rise_fold_state").fetchone()
        return None if row is None else FoldState(row[0], math.nan if row[1] is None else row[1], row[2], row[3])

    def save_rise_fold(self, state: FoldState, days: Sequence[TenantDay], *, keep_from_day: int,
                       reset: bool = False) -> int:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                if reset:
                    self._db.execute("DELETE FROM rise_summaries")
                self._db.execute("DELETE FROM rise_summaries WHERE day < ?", (keep_from_day,))
                written = 0
                for d in days:
                    if d.day < keep_from_day:
                        continue
                    old = self._db.execute("SELECT bins, counts FROM rise_summaries WHERE day = ? AND tenant = ?",
                                           (d.day, d.tenant)).fetchone()
                    if old is not None:
                        d = merge(_tenant_day(d.day, d.tenant, *old), d)
                    self._db.execute("INSERT OR REPLACE INTO rise_summaries (day, tenant, bins, counts) VALUES (?, ?, ?, ?)",
                                     (d.day, d.tenant, d.bins.astype("<u2").tobytes(), d.counts.astype("<i8").tobytes()))
                    written += 1
                self._db.execute("INSERT OR REPLACE INTO rise_fold_state (id, horizon_s, interval_s, folded_until, bins) "
                                 "VALUES (1, ?, ?, ?, ?)", (state.horizon_s, state.interval_s if math.isfinite(state.interval_s) else None,
                                                            state.folded_until, state.bins))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return written + 1

    def rise_summaries(self, *, from_day: int) -> Iterator[TenantDay]:
        cursor: tuple[int, str] = (from_day - 1, "")
        while True:  # pages by key, the lock released in between
            with self._lock:
                rows = self._db.execute("SELECT day, tenant, bins, counts FROM rise_summaries WHERE day >= ? AND "
                                        "(day, tenant) > (?, ?) ORDER BY day, tenant LIMIT 1024",
                                        (from_day, *cursor)).fetchall()
            if not rows:
                return
            cursor = (rows[-1][0], rows[-1][1])
            for r in rows:
                yield _tenant_day(*r)


def _tenant_day(day: int, tenant: str, bins: bytes, counts: bytes) -> TenantDay:
    return TenantDay(day, tenant, np.frombuffer(bins, dtype="<u2"), np.frombuffer(counts, dtype="<i8"))

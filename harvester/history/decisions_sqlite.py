"""SQLite side of the decision log (schema version 5): what loops acted on, and why.

A mixin of `SqliteHistoryStore` (its `_db` connection and `_lock`), like live_sqlite.py. The
contract is in history/store.py: records are appended; `decisions(...)` answers the newest
first, at most `limit`, filtered by the subjects a decision touches (node, tenant, target,
applications); `prune_decisions(before)` removes what was decided before `before`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Collection, Sequence

from harvester.domain import DecisionRecord
from harvester.history.sql import window_select

_COLUMNS = "at, loop, kind, target, reason, fate, stimulus_id, detail, node_id, tenant, app_id, data_as_of, inputs"


class DecisionLogSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock

    def append_decisions(self, records: Sequence[DecisionRecord]) -> int:
        if not records:
            return 0
        rows = [(r.at, r.loop, r.kind, r.target, r.reason, r.fate, r.stimulus_id, r.detail, r.node_id, r.tenant,
                 r.app_id, r.data_as_of, json.dumps(dict(r.inputs), default=str)) for r in records]
        with self._lock:
            self._db.execute("BEGIN")  # one transaction (the connection autocommits otherwise)
            try:
                self._db.executemany(f"INSERT INTO decision_log ({_COLUMNS}) VALUES ({', '.join('?' * 13)})", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return len(rows)

    def decisions(self, *, since: float = 0.0, until: float | None = None, node_id: str | None = None,
                  tenant: str | None = None, target: str | None = None, app_ids: Collection[str] | None = None,
                  loop: str | None = None, limit: int = 50) -> list[DecisionRecord]:
        query = window_select(f"SELECT {_COLUMNS} FROM decision_log", "at", since=since, until=until,
                              key_col="app_id", keys=app_ids, order_by="at DESC, rowid DESC LIMIT ?",
                              equal=(("node_id", node_id), ("tenant", tenant), ("target", target), ("loop", loop)))
        if query is None:
            return []
        sql, args = query
        args.append(max(0, limit))
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [DecisionRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                               json.loads(r[12])) for r in rows]

    def prune_decisions(self, before: float) -> int:
        with self._lock:
            return self._db.execute("DELETE FROM decision_log WHERE at < ?", (before,)).rowcount

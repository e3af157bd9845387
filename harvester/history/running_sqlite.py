"""SQLite side of the apps still running (schema version 10, issue 28).

A mixin of `SqliteHistoryStore` (its `_db` and `_lock`); the contract is in history/store.py.
The table holds the apps alive at the jobs loop's last poll, each as that poll saw it (a
`RunningApp`: submission, queue, running containers and allocation) and when: one fixed-size row
per app, updated in place at every poll; `replace_running_apps` deletes the rows of the apps no
longer alive (finished, killed or forgotten) and `append_job_runs` the row of an app stored
finished. Bounded by the number of apps the RM runs at once, however long they run.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Sequence

from harvester.models.job_history import RunningApp

_COLS = ("job_name, app_id, name, queue, state, started_at, containers, allocated_mb, allocated_vcores, preempted, "
         "seen_at")


class RunningSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock

    def replace_running_apps(self, apps: Sequence[RunningApp], seen_at: float) -> int:
        rows = [(a.job_name, a.app_id, a.name, a.queue, a.state, a.started_at, a.containers, a.allocated_mb,
                 a.allocated_vcores, a.preempted, seen_at) for a in apps]
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                keep = [a.app_id for a in apps]
                db.execute(f"DELETE FROM running_apps WHERE app_id NOT IN ({','.join('?' * len(keep))})", keep)
                db.executemany(f"INSERT OR REPLACE INTO running_apps ({_COLS}) VALUES ({','.join('?' * 11)})", rows)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return len(rows)

    def running_apps(self, *, since: float = 0.0) -> list[tuple[RunningApp, float]]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLS} FROM running_apps WHERE seen_at >= ? "
                                    "ORDER BY started_at, app_id", (since,)).fetchall()
        return [(RunningApp(*r[:10]), r[10]) for r in rows]

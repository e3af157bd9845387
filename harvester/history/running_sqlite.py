"""SQLite side of the apps still running (schema version 9, issue 28).

A mixin of `SqliteHistoryStore` (its `_db` and `_lock`); the contract is in history/store.py.
The table holds exactly the apps alive at the jobs loop's last poll: `replace_running_apps`
updates each one's row in place and deletes the others (finished, killed or forgotten), and
`append_job_runs` deletes the row of an app as it is stored finished. Bounded by the number of
apps the RM runs at once.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Sequence

from harvester.models.job_history import JobRun, RunUsage

_COLS = ("app_id, job_name, started_at, seen_at, peak_containers, launched_at, queue, step_s, origin_t, first_s, "
         "last_s, memory_mb, vcores")


def _ints(values: Sequence[int]) -> str:
    return json.dumps(list(values), separators=(",", ":"))


class RunningSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock

    def replace_running_apps(self, runs: Sequence[JobRun]) -> int:
        rows = []
        for r in runs:
            u = r.usage
            rows.append((r.app_id, r.job_name, r.started_at, r.finished_at, r.peak_containers, r.launched_at, r.queue,
                         *((None,) * 6 if u is None else
                           (u.step_s, u.origin, u.first_s, u.last_s, _ints(u.memory_mb), _ints(u.vcores)))))
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                keep = [r[0] for r in rows]
                db.execute(f"DELETE FROM running_apps WHERE app_id NOT IN ({','.join('?' * len(keep))})", keep)
                db.executemany(f"INSERT OR REPLACE INTO running_apps ({_COLS}) VALUES ({','.join('?' * 13)})", rows)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return len(rows)

    def running_apps(self) -> list[JobRun]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLS} FROM running_apps ORDER BY started_at, app_id").fetchall()
        out = []
        for (app_id, name, started, seen, peak, launched, queue, step, origin, first, last, mem, vc) in rows:
            usage = None if step is None else RunUsage(step, origin, tuple(json.loads(mem)), tuple(json.loads(vc)),
                                                       first, last)
            out.append(JobRun(name, app_id, started, seen, peak, launched_at=launched, final_status="RUNNING",
                              queue=queue, usage=usage))
        return out

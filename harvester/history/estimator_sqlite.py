"""SQLite side of the Resource Estimator's API (schema version 8): its skyline history and the
stored estimates, so both survive a restart (the Estimator's own InMemoryStore forgets them).

A mixin of `SqliteHistoryStore` (its `_db` and `_lock`); the contract is in history/store.py.
Runs are kept in insertion order (`seq`); the HashMap order the API answers in is computed by
models/estimator_history.py from that order, the runs' hashes and `largest` (the most runs the
history ever held).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Sequence

from harvester.domain import Resources
from harvester.models.estimator_history import DuplicateRun, EstimatorHistory, RecurrenceId, ResourceSkyline
from harvester.models.skyline_formats import Rle

_LARGEST = "largest_history"


def _rle(text: str) -> Rle:
    return tuple((int(t), int(n)) for t, n in json.loads(text))


class EstimatorSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock

    def add_estimator_history(self, entries: Sequence[tuple[RecurrenceId, Sequence[ResourceSkyline]]]) -> int:
        """All of `entries` or nothing, in ONE transaction: `DuplicateRun` for the first entry (in
        the given order) whose run already holds a skyline of one of its job ids. Skylines of a run
        already stored are appended to it (it keeps its place). Returns skylines stored."""
        added = 0
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                for rid, skylines in entries:
                    row = db.execute("SELECT seq FROM estimator_runs WHERE pipeline_id = ? AND run_id = ?",
                                     (rid.pipeline_id, rid.run_id)).fetchone()
                    if row is None:
                        seq = db.execute("INSERT INTO estimator_runs (pipeline_id, run_id) VALUES (?, ?)",
                                         (rid.pipeline_id, rid.run_id)).lastrowid
                        first = 0
                    else:
                        seq = row[0]
                        old = {r[0] for r in db.execute("SELECT job_id FROM estimator_skylines WHERE run_seq = ?", (seq,))}
                        if any(s.job_id in old for s in skylines):
                            raise DuplicateRun(rid)
                        first = db.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM estimator_skylines WHERE run_seq = ?",
                                           (seq,)).fetchone()[0]
                    db.executemany(
                        "INSERT INTO estimator_skylines (run_seq, idx, job_id, container_memory_mb, container_vcores, "
                        "allocation) VALUES (?, ?, ?, ?, ?, ?)",
                        [(seq, first + i, s.job_id, s.container.memory_mb, s.container.vcores,
                          json.dumps(s.allocation, separators=(",", ":"))) for i, s in enumerate(skylines)])
                    added += len(skylines)
                runs = db.execute("SELECT COUNT(*) FROM estimator_runs").fetchone()[0]
                db.execute("INSERT INTO estimator_meta (key, value) VALUES (?, ?) ON CONFLICT (key) "
                           "DO UPDATE SET value = MAX(value, excluded.value)", (_LARGEST, runs))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return added

    def estimator_history(self, pipeline_id: str | None = None, run_id: str | None = None) -> EstimatorHistory:
        """Stored runs (all, of one pipeline, or one run), in insertion order."""
        where, args = "", []
        if pipeline_id is not None:
            where, args = " WHERE r.pipeline_id = ?", [pipeline_id]
            if run_id is not None:
                where += " AND r.run_id = ?"
                args.append(run_id)
        with self._lock:
            rows = self._db.execute(
                "SELECT r.seq, r.pipeline_id, r.run_id, s.job_id, s.container_memory_mb, s.container_vcores, "
                f"s.allocation FROM estimator_runs r JOIN estimator_skylines s ON s.run_seq = r.seq{where} "
                "ORDER BY r.seq, s.idx", args).fetchall()
            largest = self._db.execute("SELECT value FROM estimator_meta WHERE key = ?", (_LARGEST,)).fetchone()
        runs: dict[int, tuple[RecurrenceId, list[ResourceSkyline]]] = {}
        for seq, pipe, run, job, mb, vc, alloc in rows:
            runs.setdefault(seq, (RecurrenceId(pipe, run), []))[1].append(ResourceSkyline(job, Resources(mb, vc), _rle(alloc)))
        return EstimatorHistory(list(runs.values()), largest[0] if largest else 0)

    def delete_estimator_history(self, rid: RecurrenceId) -> bool:
        """Remove one run and its skylines; False when it is not stored."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT seq FROM estimator_runs WHERE pipeline_id = ? AND run_id = ?",
                                 (rid.pipeline_id, rid.run_id)).fetchone()
                if row is not None:
                    db.execute("DELETE FROM estimator_skylines WHERE run_seq = ?", (row[0],))
                    db.execute("DELETE FROM estimator_runs WHERE seq = ?", (row[0],))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return row is not None

    def save_estimator_estimate(self, pipeline_id: str, allocation: Rle, container: Resources, at: float) -> int:
        """Store (replace) a pipeline's estimate."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO estimator_estimates (pipeline_id, container_memory_mb, container_vcores, "
                "allocation, solved_at) VALUES (?, ?, ?, ?, ?)",
                (pipeline_id, container.memory_mb, container.vcores, json.dumps(allocation, separators=(",", ":")), at))
        return 1

    def estimator_estimate(self, pipeline_id: str) -> tuple[Rle, Resources] | None:
        with self._lock:
            row = self._db.execute("SELECT allocation, container_memory_mb, container_vcores FROM estimator_estimates "
                                   "WHERE pipeline_id = ?", (pipeline_id,)).fetchone()
        return None if row is None else (_rle(row[0]), Resources(row[1], row[2]))

    def delete_estimator_estimate(self, pipeline_id: str) -> bool:
        with self._lock:
            return self._db.execute("DELETE FROM estimator_estimates WHERE pipeline_id = ?", (pipeline_id,)).rowcount > 0

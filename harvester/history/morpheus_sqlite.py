"""SQLite side of Morpheus's tables (schema version 6): provenance events with the offset each
source was read to, and the SLO sign-off contracts. Job runs and their skylines live in the
harvesting tables (history/harvesting_sqlite.py: one job history for every consumer).

A mixin of `SqliteHistoryStore` (its `_db` and `_lock`); the contract is in history/store.py.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Sequence

from harvester.models.provenance import Access, FileAccess, ProvenanceCursor, RunRecord
from harvester.models.slo_contract import SloContract, from_doc, to_doc


class MorpheusSqlMixin:
    _db: sqlite3.Connection
    _lock: threading.Lock

    def append_provenance(self, source: str, accesses: Sequence[FileAccess], runs: Sequence[RunRecord],
                          cursor: ProvenanceCursor | None, at: float) -> int:
        """Events and the cursor they were read up to, in ONE transaction (a crash between the
        two would read the same lines again or skip them)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT INTO provenance_accesses (t, access, path, run_id, actor, op, source) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(a.time, a.access.value, a.path, a.run_id, a.actor, a.op, source) for a in accesses])
                self._db.executemany(
                    "INSERT OR REPLACE INTO provenance_runs (run_id, job, submitted_at, started_at, finished_at, source) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(r.run_id, r.job, r.submitted_at, r.started_at, r.finished_at, source) for r in runs])
                if cursor is not None:
                    self._db.execute(
                        "INSERT OR REPLACE INTO provenance_cursors (source, path, file_id, offset, read_at) VALUES (?, ?, ?, ?, ?)",
                        (cursor.source, cursor.path, cursor.file_id, cursor.offset, at))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return len(accesses) + len(runs)

    def provenance_cursor(self, source: str) -> ProvenanceCursor | None:
        with self._lock:
            row = self._db.execute("SELECT source, path, file_id, offset FROM provenance_cursors WHERE source = ?",
                                   (source,)).fetchone()
        return None if row is None else ProvenanceCursor(*row)

    def provenance(self, *, since: float, until: float | None = None) -> tuple[list[FileAccess], list[RunRecord]]:
        """Accesses within [since, until) ordered by time, and the runs submitted in it."""
        hi = float("inf") if until is None else until
        with self._lock:
            acc = self._db.execute("SELECT t, access, path, run_id, actor, op FROM provenance_accesses "
                                   "WHERE t >= ? AND t < ? ORDER BY t, rowid", (since, hi)).fetchall()
            runs = self._db.execute("SELECT job, run_id, submitted_at, started_at, finished_at FROM provenance_runs "
                                    "WHERE submitted_at >= ? AND submitted_at < ? ORDER BY submitted_at, run_id",
                                    (since, hi)).fetchall()
        return ([FileAccess(r[0], Access(r[1]), r[2], r[3], r[4], r[5]) for r in acc],
                [RunRecord(*r) for r in runs])

    def prune_provenance(self, before: float) -> int:
        with self._lock:
            n = self._db.execute("DELETE FROM provenance_accesses WHERE t < ?", (before,)).rowcount
            return n + self._db.execute("DELETE FROM provenance_runs WHERE submitted_at < ?", (before,)).rowcount

    def save_slo_contract(self, contract: SloContract) -> int:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO slo_contracts (job, state, doc, updated_at) VALUES (?, ?, ?, ?)",
                             (contract.job, contract.state.value, to_doc(contract), contract.lifecycle.since))
        return 1

    def slo_contracts(self) -> dict[str, SloContract]:
        with self._lock:
            rows = self._db.execute("SELECT job, doc FROM slo_contracts ORDER BY job").fetchall()
        return {job: from_doc(job, doc) for job, doc in rows}

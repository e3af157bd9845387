"""SQLite history store: the one implementation of `HistoryStore`. WAL mode, schema versioned
and migrated on open (history/migrations.py; files of any older version are upgraded in place).

`SqliteHistoryStore(path)` opens a file (live); `SqliteHistoryStore(":memory:")` a private
in-memory database (tests, `store.backend: memory`, the simulator's loops). One connection
guarded by a lock: the loops write from their own threads and the advice servers read from
theirs; SQLite serialises writers anyway and WAL lets readers proceed.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Collection, Sequence

from harvester.domain import NodeSample, Resources
from harvester.history.decisions_sqlite import DecisionLogSqlMixin
from harvester.history.estimator_sqlite import EstimatorSqlMixin
from harvester.history.harvesting_sqlite import HarvestingSqlMixin
from harvester.history.hdfs_sqlite import HdfsSqlMixin
from harvester.history.live_sqlite import LiveSqlMixin
from harvester.history.migrations import LATEST_VERSION, MIGRATIONS
from harvester.history.morpheus_sqlite import MorpheusSqlMixin
from harvester.history.running_sqlite import RunningSqlMixin
from harvester.history.sql import window_select
from harvester.history.store import StoreError

_COLUMNS = (
    "t, node_id, state, rack, hostname, total_memory_mb, total_vcores, used_memory_mb, used_vcores, "
    "num_containers, node_cpu_cores, containers_cpu_vcores, node_memory_mb, containers_memory_mb, physical_cores"
)


def _row(s: NodeSample) -> tuple:
    return (
        s.time, s.node_id, s.state, s.rack, s.hostname, s.total.memory_mb, s.total.vcores,
        s.used.memory_mb, s.used.vcores, s.num_containers, s.node_cpu_cores, s.containers_cpu_vcores,
        s.node_memory_mb, s.containers_memory_mb, s.physical_cores,
    )


def _sample(r: sqlite3.Row | tuple) -> NodeSample:
    return NodeSample(
        time=r[0], node_id=r[1], state=r[2], rack=r[3], hostname=r[4], total=Resources(r[5], r[6]),
        used=Resources(r[7], r[8]), num_containers=r[9], node_cpu_cores=r[10], containers_cpu_vcores=r[11],
        node_memory_mb=r[12], containers_memory_mb=r[13], physical_cores=r[14],
    )


class SqliteHistoryStore(HarvestingSqlMixin, LiveSqlMixin, HdfsSqlMixin, DecisionLogSqlMixin, MorpheusSqlMixin,
                         EstimatorSqlMixin, RunningSqlMixin):
    """`HistoryStore` over one SQLite file (see history/store.py for the contract)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=5000")
            # Builds with SQLITE_SECURE_DELETE (Debian's) zero every freed page: pruning a day of
            # raw primary vectors then wrote the day again through the WAL (5.8 GB at 50,000 nodes,
            # bench/_reserve_fit.py). FAST zeroes only what costs no extra I/O (b-tree pages, not
            # freed overflow pages); the WAL file is cut back after a checkpoint once past 64 MB.
            self._db.execute("PRAGMA secure_delete=FAST")
            self._db.execute(f"PRAGMA journal_size_limit={64 << 20}")
            self._lock = threading.Lock()
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open history store {path}: {exc}") from None
        except OSError as exc:
            raise StoreError(f"cannot create history store {path}: {exc.strerror or exc}") from None

    def _migrate(self) -> None:
        db = self._db
        db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
        current = row[0] or 0
        if current > LATEST_VERSION:
            raise StoreError(
                f"history store {self.path} has schema version {current}, newer than this Harvester "
                f"understands ({LATEST_VERSION}); upgrade Harvester or point store.path elsewhere"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            db.execute("BEGIN IMMEDIATE")
            try:
                for sql in statements:
                    db.execute(sql)
                db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        with self._lock:
            return self._db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0

    def journal_mode(self) -> str:
        with self._lock:
            return self._db.execute("PRAGMA journal_mode").fetchone()[0]

    def append_node_samples(self, samples: Sequence[NodeSample]) -> int:
        if not samples:
            return 0
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    f"INSERT INTO node_samples ({_COLUMNS}) VALUES ({', '.join('?' * 15)})", [_row(s) for s in samples]
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return len(samples)

    def node_samples(
        self, *, since: float, until: float | None = None, node_ids: Collection[str] | None = None
    ) -> list[NodeSample]:
        query = window_select(f"SELECT {_COLUMNS} FROM node_samples", "t", since=since, until=until,
                              key_col="node_id", keys=node_ids, order_by="t, node_id")
        if query is None:
            return []
        with self._lock:
            return [_sample(r) for r in self._db.execute(*query)]

    def node_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT DISTINCT node_id FROM node_samples ORDER BY node_id")]

    def prune(self, before: float) -> dict[str, int]:
        with self._lock:
            cur = self._db.execute("DELETE FROM node_samples WHERE t < ?", (before,))
            vectors = self._db.execute("DELETE FROM primary_vectors WHERE t < ?", (before,))
            return {"node_samples": cur.rowcount, "primary_vectors": vectors.rowcount}

    def close(self) -> None:
        with self._lock:
            self._db.close()

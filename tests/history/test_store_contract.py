"""One contract, the SQLite HistoryStore on `:memory:` (tests, the simulator) and on a file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterator

import pytest

from harvester.domain import NodeSample, Resources
from harvester.history.migrations import LATEST_VERSION
from harvester.history.sqlite import SqliteHistoryStore
from harvester.history.store import HistoryStore, StoreError


def sample(node: str, t: float, cpu: float | None = 1.5) -> NodeSample:
    return NodeSample(
        node_id=node, time=t, state="RUNNING", rack="/default-rack", hostname=node.split(":")[0],
        total=Resources(8192, 8), used=Resources(1024, 1), num_containers=1, node_cpu_cores=cpu,
        containers_cpu_vcores=0.5, node_memory_mb=2000.0, containers_memory_mb=300.0, physical_cores=2.0,
    )


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryStore]:
    s: HistoryStore = SqliteHistoryStore(":memory:") if request.param == "memory" else SqliteHistoryStore(tmp_path / "d" / "h.db")
    yield s
    s.close()


def test_append_and_read_back_in_time_order(store: HistoryStore) -> None:
    rows = [sample("b:1", 20), sample("a:1", 20), sample("a:1", 10, cpu=None), sample("b:1", 30)]
    assert store.append_node_samples(rows) == 4
    got = store.node_samples(since=0)
    assert [(s.time, s.node_id) for s in got] == [(10, "a:1"), (20, "a:1"), (20, "b:1"), (30, "b:1")]
    assert got[0] == sample("a:1", 10, cpu=None), "every field, including None, round-trips"


def test_window_and_node_filter(store: HistoryStore) -> None:
    store.append_node_samples([sample(n, t) for n in ("a:1", "b:1", "c:1") for t in (10, 20, 30)])
    assert [s.time for s in store.node_samples(since=20, until=30)] == [20, 20, 20]
    assert {s.node_id for s in store.node_samples(since=0, node_ids=["a:1", "c:1"])} == {"a:1", "c:1"}
    assert store.node_samples(since=0, node_ids=[]) == []
    assert store.node_ids() == ["a:1", "b:1", "c:1"]


def test_prune_removes_only_older_rows(store: HistoryStore) -> None:
    store.append_node_samples([sample("a:1", t) for t in (10, 20, 30)])
    assert store.prune(before=25) == {"node_samples": 2, "primary_vectors": 0}
    assert [s.time for s in store.node_samples(since=0)] == [30]


def test_schema_version_is_latest(store: HistoryStore) -> None:
    assert store.schema_version() == LATEST_VERSION


def test_sqlite_uses_wal_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    s = SqliteHistoryStore(path)
    assert s.journal_mode() == "wal"
    s.append_node_samples([sample("a:1", 1)])
    s.close()
    again = SqliteHistoryStore(path)
    assert [x.node_id for x in again.node_samples(since=0)] == ["a:1"]
    assert again.schema_version() == LATEST_VERSION
    again.close()


def test_sqlite_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    SqliteHistoryStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO schema_version (version) VALUES (?)", (LATEST_VERSION + 1,))
    with pytest.raises(StoreError, match="newer than this Harvester"):
        SqliteHistoryStore(path)


def test_sqlite_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open"):
        SqliteHistoryStore(path)

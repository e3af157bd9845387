"""The HDFS-H tables (schema version 4), one contract for every HistoryStore."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterator

import pytest

from harvester.decisions.hdfs_table import PublishedVersion
from harvester.history.hdfs_sqlite import TABLE_VERSIONS_KEPT
from harvester.history.sqlite import SqliteHistoryStore
from harvester.history.store import HistoryStore
from harvester.models.hdfs_grid_model import fit_grid_model
from harvester.models.hdfs_tenant_stats import TenantHistory, TenantPeak, tenant_stats
from harvester.models.reimage_detection import DataNodeObservation, ReimageEvent


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryStore]:
    s: HistoryStore = SqliteHistoryStore(":memory:") if request.param == "memory" else SqliteHistoryStore(tmp_path / "h.db")
    yield s
    s.close()


def model(version: int, n: int = 4):
    hist = [TenantHistory(f"t{i}", f"e{i // 2}", 2, 10**12 * (i + 1), i, 60.0 if i else 3.0,
                          TenantPeak(0.08 * i, 10) if i % 2 else None) for i in range(n)]
    rows = tenant_stats(hist, min_observed_days=7, default_reimages_per_server_month=1.0, default_peak_cpu=1.0)
    return fit_grid_model(rows, version=version, fitted_at=100.0 * version, window_s=30 * 86400.0)


def test_grid_round_trips_with_cells_stats_and_infinite_bounds(store: HistoryStore) -> None:
    assert store.hdfs_grid() is None
    m1, m2 = model(1), model(2, n=12)
    assert store.save_hdfs_grid(m1) == 1 + 4
    store.save_hdfs_grid(m2)
    got = store.hdfs_grid()
    assert got == m2 and store.hdfs_grid(1) == m1 and store.hdfs_grid(7) is None
    assert any(math.isinf(b) for b in m1.row_bounds + sum(m1.col_bounds, ())), "4 tenants leave bands empty"
    assert got.grid().tenant_cells == m2.grid().tenant_cells
    assert {t.stats.reimage_source for t in got.tenants} == {"history", "default"}


def test_saving_a_grid_version_again_replaces_it(store: HistoryStore) -> None:
    store.save_hdfs_grid(model(1, n=12))
    store.save_hdfs_grid(model(1, n=3))
    assert len(store.hdfs_grid(1).tenants) == 3


def test_reimages_are_appended_and_read_in_time_order_within_the_window(store: HistoryStore) -> None:
    events = [ReimageEvent(30.0, "b", "web", "10.0.0.2:9866", "jmx", "numBlocks 900 -> 0"),
              ReimageEvent(10.0, "a", "", "10.0.0.1:9866", "jmx", "x"), ReimageEvent(30.0, "a", "db", "", "jmx", "y")]
    assert store.append_hdfs_reimages(events) == 3
    assert store.append_hdfs_reimages([]) == 0
    assert [(e.time, e.hostname) for e in store.hdfs_reimages(since=0)] == [(10.0, "a"), (30.0, "a"), (30.0, "b")]
    assert store.hdfs_reimages(since=20.0, until=30.0) == []
    assert store.hdfs_reimages(since=30.0)[1] == events[0], "every field round-trips"


def test_datanode_observations_are_upserted_by_name(store: HistoryStore) -> None:
    a = DataNodeObservation("a:9866", "a", "10.0.0.1:9866", 10.0, 0.0, 500, 10**9, 17, 900)
    b = DataNodeObservation("b:9866", "b", "10.0.0.2:9866", 10.0, 5.0, 400, 10**9, 17, 900)
    store.save_hdfs_datanodes([b, a])
    a2 = DataNodeObservation("a:9866", "a", "10.0.0.1:9866", 40.0, 0.0, 0, 0, 17, 950)
    store.save_hdfs_datanodes([a2])
    assert store.hdfs_datanodes() == {"a:9866": a2, "b:9866": b}


def test_table_versions_newest_first_and_bounded(store: HistoryStore) -> None:
    assert store.hdfs_table_versions() == []
    for v in range(1, TABLE_VERSIONS_KEPT + 6):
        store.append_hdfs_table_version(PublishedVersion(v, float(v), 1, 3, v % 2, ("busy flags: x->busy",)))
    got = store.hdfs_table_versions(limit=2)
    assert [r.version for r in got] == [TABLE_VERSIONS_KEPT + 5, TABLE_VERSIONS_KEPT + 4]
    assert got[0].reasons == ("busy flags: x->busy",) and got[0].busy == (TABLE_VERSIONS_KEPT + 5) % 2
    assert len(store.hdfs_table_versions(limit=10 * TABLE_VERSIONS_KEPT)) == TABLE_VERSIONS_KEPT


def test_hdfs_tables_survive_a_reopen(tmp_path: Path) -> None:
    s = SqliteHistoryStore(tmp_path / "h.db")
    s.save_hdfs_grid(model(5))
    s.append_hdfs_table_version(PublishedVersion(9, 1.0, 5, 3, 0, ("first table",)))
    s.close()
    again = SqliteHistoryStore(tmp_path / "h.db")
    assert again.hdfs_grid().version == 5 and again.hdfs_table_versions()[0].version == 9
    again.close()

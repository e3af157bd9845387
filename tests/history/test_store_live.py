"""The live-harvesting tables (schema version 3): tenant slots and node baselines, every store."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterator

import pytest
from old_stores import store_file_at

from harvester.domain import NodeBaseline, Resources
from harvester.history.migrations import LATEST_VERSION
from harvester.history.sqlite import SqliteHistoryStore
from harvester.history.store import HistoryStore
from harvester.models.tenant_slots import TenantSlot


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryStore]:
    s: HistoryStore = SqliteHistoryStore(":memory:") if request.param == "memory" else SqliteHistoryStore(tmp_path / "h.db")
    yield s
    s.close()


def test_slots_accumulate_sums_counts_and_the_largest_node_count(store: HistoryStore) -> None:
    assert store.add_tenant_slots([TenantSlot("web", 120.0, 0.5, 1, 3), TenantSlot("db", 120.0, 0.25, 1, 2)]) == 2
    store.add_tenant_slots([TenantSlot("web", 120.0, 0.7, 1, 2), TenantSlot("web", 240.0, 0.1, 1, 3)])
    got = store.tenant_slots(since=0)
    assert [(s.start, s.tenant) for s in got] == [(120.0, "db"), (120.0, "web"), (240.0, "web")]
    web = got[1]
    assert (web.util_sum, web.polls, web.nodes) == (pytest.approx(1.2), 2, 3)
    assert web.utilization == pytest.approx(0.6)


def test_slots_window_tenant_filter_and_prune(store: HistoryStore) -> None:
    store.add_tenant_slots([TenantSlot(t, s, 0.1, 1, 1) for s in (0.0, 120.0, 240.0) for t in ("a", "b")])
    assert {s.start for s in store.tenant_slots(since=120, until=240)} == {120.0}
    assert {s.tenant for s in store.tenant_slots(since=0, tenants=["b"])} == {"b"}
    assert store.tenant_slots(since=0, tenants=[]) == []
    assert store.prune_tenant_slots(before=200) == 4
    assert [s.start for s in store.tenant_slots(since=0)] == [240.0, 240.0]
    assert store.prune(before=1e9) == {"node_samples": 0, "primary_vectors": 0}, "raw-sample pruning leaves slots alone"
    assert len(store.tenant_slots(since=0)) == 2


def test_the_first_baseline_of_a_node_wins(store: HistoryStore) -> None:
    first = NodeBaseline("n1:45454", "n1", Resources(8192, 8), 10.0)
    assert store.record_node_baselines([first, NodeBaseline("n2:45454", "n2", Resources(4096, 4), 10.0)]) == 2
    # later observations (e.g. after Harvester cut the node to 2 vcores) never replace it
    assert store.record_node_baselines([NodeBaseline("n1:45454", "n1", Resources(8192, 2), 20.0)]) == 0
    assert store.node_baselines() == {"n1:45454": first, "n2:45454": NodeBaseline("n2:45454", "n2", Resources(4096, 4), 10.0)}
    assert store.record_node_baselines([]) == 0


def test_baselines_and_slots_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    s = SqliteHistoryStore(path)
    s.record_node_baselines([NodeBaseline("n1:1", "n1", Resources(8192, 8), 1.0)])
    s.add_tenant_slots([TenantSlot("web", 0.0, 0.4, 2, 1)])
    s.close()
    again = SqliteHistoryStore(path)
    try:
        assert again.node_baselines()["n1:1"].resources == Resources(8192, 8)
        assert again.tenant_slots(since=0) == [TenantSlot("web", 0.0, 0.4, 2, 1)]
    finally:
        again.close()


def test_a_version_2_file_migrates_to_version_3(tmp_path: Path) -> None:
    s = SqliteHistoryStore(store_file_at(tmp_path / "v2.db", 2, "INSERT INTO job_runs VALUES ('app_1', 'etl', 0, 10, 2, NULL)"))
    try:
        assert s.schema_version() == LATEST_VERSION >= 3
        assert [r.app_id for r in s.job_runs(since=0)] == ["app_1"], "version 2 rows survive"
        s.add_tenant_slots([TenantSlot("web", 0.0, 0.4, 1, 1)])
        assert len(s.tenant_slots(since=0)) == 1
    finally:
        s.close()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_primary_vectors_round_trip_in_blocks_split_by_node_set_and_prune(backend: str, tmp_path) -> None:
    import numpy as np

    store = SqliteHistoryStore(":memory:" if backend == "memory" else tmp_path / "h.db")
    a = np.array([[0.1, 0.2], [0.3, np.nan]], dtype=np.float32)
    assert store.append_primary_vectors([10.0, 20.0], ("n1", "n2"), a) == 2
    assert store.append_primary_vectors([30.0], ("n1", "n2", "n3"), np.array([[0.5, 0.6, 0.7]])) == 1
    blocks = list(store.primary_vectors(since=0.0))
    assert [b.node_ids for b in blocks] == [("n1", "n2"), ("n1", "n2", "n3")]
    assert blocks[0].times.tolist() == [10.0, 20.0] and np.isnan(blocks[0].values[1, 1])
    assert np.allclose(blocks[0].values[0], [0.1, 0.2]) and blocks[1].values.shape == (1, 3)
    assert [b.times.tolist() for b in store.primary_vectors(since=15.0, until=30.0)] == [[20.0]]
    assert store.prune(before=25.0) == {"node_samples": 0, "primary_vectors": 2}
    assert [b.times.tolist() for b in store.primary_vectors(since=0.0)] == [[30.0]]


def test_rise_summaries_add_up_drop_old_days_reset_and_page(store: HistoryStore) -> None:
    import numpy as np

    from harvester.models.rise_summary import FoldState, TenantDay

    def day(d: int, tenant: str, counts: dict[int, int]) -> TenantDay:
        return TenantDay(d, tenant, np.array(list(counts), np.uint16), np.array(list(counts.values()), np.int64))

    assert store.rise_fold_state() is None and list(store.rise_summaries(from_day=0)) == []
    store.save_rise_fold(FoldState(20.0, float("nan"), 5.0), [day(3, "web", {0: 2, 7: 1})], keep_from_day=0)
    assert math.isnan(store.rise_fold_state().interval_s), "an unknown interval round-trips"
    store.save_rise_fold(FoldState(20.0, 3.0, 10.0), [day(3, "web", {7: 4, 9: 1}), day(4, "db", {1: 1}),
                                                      day(1, "old", {1: 1})], keep_from_day=2)
    rows = {(r.day, r.tenant): dict(zip(r.bins.tolist(), r.counts.tolist())) for r in store.rise_summaries(from_day=0)}
    assert rows == {(3, "web"): {0: 2, 7: 5, 9: 1}, (4, "db"): {1: 1}}, "counts add per (day, tenant); older days dropped"
    assert store.rise_fold_state() == FoldState(20.0, 3.0, 10.0)
    assert [r.day for r in store.rise_summaries(from_day=4)] == [4]
    store.save_rise_fold(FoldState(30.0, 3.0, 0.0), [day(5, f"t{i:04d}", {i % 1000: 1}) for i in range(2500)],
                         keep_from_day=0, reset=True)
    got = list(store.rise_summaries(from_day=0))
    assert len(got) == 2500 and {r.day for r in got} == {5}, "reset dropped the rest; read back across pages"


def test_pruning_raw_vectors_does_not_write_them_again_through_the_wal(tmp_path) -> None:
    """SQLite builds with secure delete on zero every freed page: a pruned day of vectors went
    through the WAL again (5.8 GB at 50,000 nodes). The store prunes with secure_delete=FAST."""
    import numpy as np

    store = SqliteHistoryStore(tmp_path / "h.db")
    values = np.full((100, 5000), 0.5, dtype=np.float32)  # 2 MB, one transaction (no checkpoint yet)
    store.append_primary_vectors([float(t) for t in range(100)], [f"n{i}" for i in range(5000)], values)
    wal = tmp_path / "h.db-wal"
    before = wal.stat().st_size
    assert store.prune(before=1e9)["primary_vectors"] == 100
    assert wal.stat().st_size - before < values.nbytes / 10
    store.close()


def test_primary_vectors_read_back_in_order_across_pages_and_node_set_changes(monkeypatch, tmp_path) -> None:
    import numpy as np

    from harvester.history import live_sqlite

    monkeypatch.setattr(live_sqlite, "VECTOR_VALUES", 7)  # pages of 2 polls of the widest set
    store = SqliteHistoryStore(tmp_path / "h.db")
    rng = np.random.default_rng(3)
    sets = [("a",), ("a", "b"), ("b", "c", "d")]
    written = []
    for t in range(40):
        ids = sets[int(rng.integers(0, 3))] if t % 5 else sets[2]
        row = rng.random((1, len(ids))).astype(np.float32)
        store.append_primary_vectors([float(t)], ids, row)
        written.append((float(t), ids, row[0].tolist()))
    blocks = list(store.primary_vectors(since=0.0))
    got = [(float(t), b.node_ids, b.values[i].tolist()) for b in blocks for i, t in enumerate(b.times)]
    assert got == written
    assert all(b.values.shape == (b.times.size, len(b.node_ids)) and b.times.size <= 2 for b in blocks)
    store.close()

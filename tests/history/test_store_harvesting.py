"""The harvesting tables (schema version 2), one contract for every HistoryStore."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Iterator

import pytest

from harvester.history.migrations import LATEST_VERSION, MIGRATIONS
from harvester.history.sqlite import SqliteHistoryStore
from harvester.history.store import HistoryStore
from harvester.models.job_history import JobRun
from harvester.models.margins import ClassMargin, MarginModel
from harvester.models.patterns import Pattern, PatternParams
from harvester.models.utilization_classes import ClassParams, TenantAssignment, TenantClassModel, UtilizationClass


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryStore]:
    s: HistoryStore = SqliteHistoryStore(":memory:") if request.param == "memory" else SqliteHistoryStore(tmp_path / "h.db")
    yield s
    s.close()


def model(version: int, *, fitted_at: float = 100.0) -> TenantClassModel:
    return TenantClassModel(
        version, fitted_at,
        (UtilizationClass("periodic-0", Pattern.PERIODIC, 0.31, 0.72, 2, 5.0),
         UtilizationClass("constant-0", Pattern.CONSTANT, 0.1, 0.12, 1, 1.0)),
        (TenantAssignment("web-b", "periodic-0", Pattern.PERIODIC, 0.3, 0.7, 0.91, 0.2, 21600),
         TenantAssignment("web-a", "periodic-0", Pattern.PERIODIC, 0.32, 0.74, 0.88, 0.21, 21000),
         TenantAssignment("db", "constant-0", Pattern.CONSTANT, 0.1, 0.12, 0.0, 0.01, 300, "too little history for the periodicity test")),
        ClassParams(PatternParams(periodic_min_share=0.3, weekly=True), max_k=4, seed=9),
        (("ghost", "no samples"),),
    )


def test_class_model_round_trips_and_latest_wins(store: HistoryStore) -> None:
    assert store.class_model() is None
    m1, m2 = model(1), model(2, fitted_at=200.0)
    assert store.save_class_model(m1) == 1 + 2 + 3
    store.save_class_model(m2)
    got = store.class_model()
    assert got.version == 2 and got.fitted_at == 200.0
    assert store.class_model(1).classes == m1.classes
    assert {a.tenant: a for a in store.class_model(1).tenants} == {a.tenant: a for a in m1.tenants}
    assert got.params == m2.params and got.skipped == m2.skipped
    assert [c.class_id for c in got.classes] == ["periodic-0", "constant-0"], "class order is kept"
    assert got.tenant_class_map() == {"web-a": "periodic-0", "web-b": "periodic-0", "db": "constant-0"}
    assert store.class_model(7) is None


def test_saving_a_version_again_replaces_it(store: HistoryStore) -> None:
    store.save_class_model(model(1))
    smaller = TenantClassModel(1, 5.0, (UtilizationClass("constant-0", Pattern.CONSTANT, 0.1, 0.1, 1, 1.0),),
                               (TenantAssignment("db", "constant-0", Pattern.CONSTANT, 0.1, 0.1, 0.0, 0.0, 10),))
    store.save_class_model(smaller)
    assert store.class_model(1) == smaller


def test_margin_model_round_trips_with_missing_margins(store: HistoryStore) -> None:
    assert store.margin_model() is None
    m = MarginModel(3, 50.0, 0.95, 120.0, (ClassMargin("a", 0.95, 0.07, 1000, 0.02), ClassMargin("b", 0.95, math.nan, 0, math.nan)))
    assert store.save_margin_model(m) == 3
    got = store.margin_model()
    assert (got.version, got.fitted_at, got.quantile, got.step_s) == (3, 50.0, 0.95, 120.0)
    assert got.margin("a") == m.margin("a")
    assert math.isnan(got.margin("b").margin) and got.margin("b").changes == 0
    assert store.margin_model(4) is None and store.margin_model(3) is not None


def test_job_runs_upsert_by_app_and_read_by_finish_window(store: HistoryStore) -> None:
    runs = [JobRun("etl", "app_2", 50, 300, 10), JobRun("etl", "app_1", 0, 100, 8, 640.0), JobRun("bi", "app_3", 10, 300, 3)]
    assert store.append_job_runs(runs) == 3
    assert store.append_job_runs([]) == 0
    assert [r.app_id for r in store.job_runs(since=0)] == ["app_1", "app_2", "app_3"]
    assert store.job_runs(since=0)[0] == runs[1], "every field round-trips"
    assert [r.app_id for r in store.job_runs(since=100, until=300)] == ["app_1"]
    assert [r.app_id for r in store.job_runs(since=0, job_names=["bi"])] == ["app_3"]
    assert store.job_runs(since=0, job_names=[]) == []
    store.append_job_runs([JobRun("etl", "app_1", 0, 120, 9)])
    assert [(r.app_id, r.finished_at) for r in store.job_runs(since=0, job_names=["etl"])] == [("app_1", 120), ("app_2", 300)]
    assert store.prune_job_runs(before=200) == 1  # finished before the cut: gone; the rest stays
    assert [r.app_id for r in store.job_runs(since=0)] == ["app_2", "app_3"]


def test_harvesting_tables_do_not_change_node_sample_pruning(store: HistoryStore) -> None:
    store.append_job_runs([JobRun("etl", "app_1", 0, 1, 1)])
    assert store.prune(before=10) == {"node_samples": 0, "primary_vectors": 0}
    assert len(store.job_runs(since=0)) == 1


def test_a_version_1_file_migrates_to_the_harvesting_schema(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for sql in MIGRATIONS[0][1]:
            db.execute(sql)
        db.execute("INSERT INTO schema_version VALUES (1)")
        db.execute("INSERT INTO node_samples VALUES (1.0, 'a:1', 'RUNNING', '/r', 'a', 8192, 8, 0, 0, 0, 0.1, 0, 1, 0, 2)")
    s = SqliteHistoryStore(path)
    try:
        assert s.schema_version() == LATEST_VERSION >= 2
        assert [x.node_id for x in s.node_samples(since=0)] == ["a:1"], "old rows survive the migration"
        s.save_class_model(model(1))
        assert s.class_model().version == 1
    finally:
        s.close()


def test_old_model_versions_are_pruned_keeping_the_newest(store: HistoryStore) -> None:
    """Issue 15 finding 3: 60 refit posts took the model from version 5 to 85, never pruned."""
    for v in range(1, 8):
        store.save_class_model(model(v, fitted_at=float(v)))
        store.save_margin_model(MarginModel(v, float(v), 0.95, 120.0, (ClassMargin("periodic-0", 0.95, 0.1, 800, 0.02),)))
    removed = store.prune_model_versions(2)
    assert removed["class_models"] == 5 and removed["margin_models"] == 5
    assert removed["utilization_classes"] == 5 * 2 and removed["tenant_classes"] == 5 * 3
    assert store.class_model(5) is None and store.class_model(6) is not None and store.class_model().version == 7
    assert store.margin_model(5) is None and store.margin_model().version == 7
    assert store.prune_model_versions(2)["class_models"] == 0
    with pytest.raises(ValueError):
        store.prune_model_versions(0)

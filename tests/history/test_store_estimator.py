"""The Resource Estimator's tables in the SQLite store (schema version 8): history added all or
nothing, a run keeps its place when skylines are appended, the largest size never shrinks,
estimates upserted, everything still there after reopening; a version 7 file migrates."""

from __future__ import annotations

from pathlib import Path

import pytest

from harvester.domain import Resources
from harvester.history.migrations import LATEST_VERSION
from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.estimator_history import DuplicateRun, RecurrenceId, ResourceSkyline

from old_stores import store_file_at

BOX = Resources(1024, 1)


def sky(job: str, n: int = 2) -> ResourceSkyline:
    return ResourceSkyline(job, BOX, ((0, n), (5, n + 1), (10, 0)))


def rid(run: str, pipeline: str = "p") -> RecurrenceId:
    return RecurrenceId(pipeline, run)


@pytest.fixture()
def store(tmp_path: Path) -> SqliteHistoryStore:
    return SqliteHistoryStore(tmp_path / "h.db")


def test_a_version_7_file_migrates(tmp_path: Path) -> None:
    s = SqliteHistoryStore(store_file_at(tmp_path / "v7.db", 7, ""))
    try:
        assert s.schema_version() == LATEST_VERSION >= 8
        assert s.estimator_history().runs == [] and s.estimator_estimate("p") is None
    finally:
        s.close()


def test_history_is_added_all_or_nothing(store: SqliteHistoryStore) -> None:
    assert store.add_estimator_history([(rid("r1"), [sky("r1")]), (rid("r2"), [sky("r2"), sky("r2", 5)])]) == 3
    with pytest.raises(DuplicateRun) as err:
        store.add_estimator_history([(rid("r3"), [sky("r3")]), (rid("r2"), [sky("r2")]), (rid("r1"), [sky("r1")])])
    assert err.value.rid == rid("r2")  # the first duplicate in the given order
    h = store.estimator_history()
    assert [r for r, _ in h.runs] == [rid("r1"), rid("r2")] and h.largest == 2  # r3 was not added
    assert h.runs[1][1] == [sky("r2"), sky("r2", 5)]


def test_a_new_job_of_a_stored_run_is_appended_in_place(store: SqliteHistoryStore) -> None:
    store.add_estimator_history([(rid("r1"), [sky("a")]), (rid("r2"), [sky("b")])])
    store.add_estimator_history([(rid("r1"), [sky("c")])])
    h = store.estimator_history()
    assert [(r.run_id, [s.job_id for s in sk]) for r, sk in h.runs] == [("r1", ["a", "c"]), ("r2", ["b"])]


def test_reads_by_pipeline_and_run_and_deletes(store: SqliteHistoryStore) -> None:
    store.add_estimator_history([(rid("r1"), [sky("r1")]), (rid("x1", "q"), [sky("x1")]), (rid("r2"), [sky("r2")])])
    assert [r for r, _ in store.estimator_history("p").runs] == [rid("r1"), rid("r2")]
    assert [r for r, _ in store.estimator_history("p", "r2").runs] == [rid("r2")]
    assert store.estimator_history("p", "nope").runs == []
    assert store.delete_estimator_history(rid("r1")) and not store.delete_estimator_history(rid("r1"))
    store.add_estimator_history([(rid("r1"), [sky("r1")])])
    h = store.estimator_history()
    assert [r for r, _ in h.runs] == [rid("x1", "q"), rid("r2"), rid("r1")]  # re-added: inserted last
    assert h.largest == 3
    for r in (rid("r1"), rid("r2")):
        store.delete_estimator_history(r)
    assert store.estimator_history().largest == 3, "a HashMap's capacity never shrinks"


def test_estimates_are_upserted_and_survive_reopening(tmp_path: Path) -> None:
    s = SqliteHistoryStore(tmp_path / "h.db")
    s.add_estimator_history([(rid("r1"), [sky("r1")])])
    s.save_estimator_estimate("p", ((0, 1), (5, 0)), BOX, 10.0)
    s.save_estimator_estimate("p", ((0, 3), (10, 0)), Resources(2048, 2), 20.0)
    s.close()
    again = SqliteHistoryStore(tmp_path / "h.db")
    try:
        assert again.estimator_estimate("p") == (((0, 3), (10, 0)), Resources(2048, 2))
        assert again.estimator_history().runs == [(rid("r1"), [sky("r1")])]
        assert again.delete_estimator_estimate("p") and again.estimator_estimate("p") is None
        assert not again.delete_estimator_estimate("p")
    finally:
        again.close()

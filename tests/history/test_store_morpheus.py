"""Morpheus's tables in the SQLite store (schema version 6): job runs with skylines, provenance
with cursors, SLO contracts; a version 4 file migrates with its rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harvester.history.migrations import LATEST_VERSION
from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.job_history import JobRun, RunUsage
from harvester.models.provenance import Access, FileAccess, ProvenanceCursor, RunRecord
from harvester.models.slo_contract import Override, new_contract, override, reject

from old_stores import store_file_at

USAGE = RunUsage(60.0, 105.0, (2048, 4096), (2, 4), 3.0, 95.0)
RUN = JobRun("etl", "application_1_0001", 100.0, 210.0, 4, None, 105.0, "SUCCEEDED", "root.default", "rm", USAGE)


@pytest.fixture()
def store(tmp_path: Path) -> SqliteHistoryStore:
    return SqliteHistoryStore(tmp_path / "h.db")


def test_a_version_4_file_migrates_and_its_job_runs_survive(tmp_path: Path) -> None:
    path = store_file_at(tmp_path / "v4.db", 4, "INSERT INTO job_runs VALUES ('app_1', 'etl', 0, 10, 2, NULL)")
    s = SqliteHistoryStore(path)
    try:
        assert s.schema_version() == LATEST_VERSION >= 6
        (old,) = s.job_runs(since=0, with_usage=True)
        assert (old.app_id, old.launched_at, old.final_status, old.origin, old.usage) == ("app_1", None, "", "rm", None)
    finally:
        s.close()


def test_job_runs_keep_their_skyline_and_are_pruned_with_it(store: SqliteHistoryStore) -> None:
    store.append_job_runs([RUN, JobRun("etl", "application_1_0002", 700.0, 800.0)])
    assert store.job_runs(since=0, with_usage=True)[0] == RUN
    assert store.job_runs(since=0)[0].usage is None, "YARN-H's reads do not load skylines"
    assert store.prune_job_runs(before=500.0) == 1
    assert [r.app_id for r in store.job_runs(since=0, with_usage=True)] == ["application_1_0002"]
    store.append_job_runs([JobRun("etl", RUN.app_id, 100.0, 210.0)])
    assert store.job_runs(since=0, with_usage=True)[0].usage is None, "the pruned run's skyline went with it"


def test_provenance_and_its_cursor_in_one_transaction(store: SqliteHistoryStore) -> None:
    accesses = [FileAccess(150.0, Access.WRITE, "/out/p1", "application_1_0001", "mr_attempt", "rename"),
                FileAccess(170.0, Access.READ, "/out/p1", None, "CLI", "open")]
    runs = [RunRecord("etl", "application_1_0001", 100.0, 105.0, 160.0)]
    cursor = ProvenanceCursor("audit-log", "/var/log/hdfs-audit.log", "2049:17", 4096)
    assert store.append_provenance("audit-log", accesses, runs, cursor, 200.0) == 3
    assert store.provenance(since=0.0) == (accesses, runs) and store.provenance_cursor("audit-log") == cursor
    assert store.provenance(since=160.0) == (accesses[1:], []) and store.provenance_cursor("jsonl") is None
    with pytest.raises(sqlite3.IntegrityError):  # a bad row: nothing of the batch, not even the cursor, is kept
        store.append_provenance("audit-log", accesses, [RunRecord("etl", "x", None, None, None)],  # type: ignore[arg-type]
                                ProvenanceCursor("audit-log", "/p", "2049:17", 9999), 300.0)
    assert len(store.provenance(since=0.0)[0]) == 2 and store.provenance_cursor("audit-log").offset == 4096
    assert store.prune_provenance(before=160.0) == 2


def test_contracts_round_trip_with_their_history(tmp_path: Path) -> None:
    s = SqliteHistoryStore(tmp_path / "c.db")
    c = override(new_contract("etl", 1.0), Override(deadline_s=900.0, skyline_scale=2.0), 2.0, "ana", "10x data")
    c = reject(c, 3.0, "bob", "runs ad hoc now")
    s.save_slo_contract(c)
    s.close()
    again = SqliteHistoryStore(tmp_path / "c.db")
    try:
        (got,) = again.slo_contracts().values()
        assert got == c and [h.state.value for h in got.lifecycle.history] == ["PROPOSED", "OVERRIDDEN", "REJECTED"]
    finally:
        again.close()

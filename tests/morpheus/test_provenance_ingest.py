"""Provenance files tailed incrementally into the store (telemetry/provenance_tail.py,
loop/morpheus_ingest.py) and refitted (loop/morpheus_refit.py), on the recorded NameNode audit
log of a recurring pipeline (fixtures hdfs-3.3.6/provenance-recurring; ground truth in its README
and the figures of docs/morpheus.md)."""

from __future__ import annotations

import json
import os
from datetime import timezone
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from rm_client.wire.apps import decode_apps

from harvester.board import Board
from harvester.board.morpheus import MorpheusBoard
from harvester.config_morpheus import MorpheusSettings
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.morpheus_ingest import IngestProvenance
from harvester.loop.morpheus_refit import MorpheusRefit
from harvester.models.job_history import JobRun
from harvester.observability.metrics import Metrics
from harvester.telemetry.provenance_tail import AUDIT, JSONL, ProvenanceFiles
from harvester.telemetry.provenance_log import to_jsonl
from harvester.models.provenance import Access, FileAccess, RunRecord


@pytest.fixture(scope="module")
def recorded(fixtures_dir: Path) -> Path:
    return fixtures_dir / "hdfs-3.3.6" / "provenance-recurring"


def rig(tmp_path: Path, **paths: Path):  # type: ignore[no-untyped-def]
    store, board, metrics = SqliteHistoryStore(tmp_path / "h.db"), MorpheusBoard(Board()), Metrics(CollectorRegistry())
    files = ProvenanceFiles(tz=timezone.utc, max_lines=1000, **paths)
    return store, board, IngestProvenance(files, store, board, metrics, retention_s=10**9), files


def runs_of(recorded: Path) -> list[JobRun]:
    apps = decode_apps(json.loads((recorded / "rm-apps.json").read_text()))
    return [JobRun(a.name, a.id, a.started_time_ms / 1000, a.finished_time_ms / 1000,
                   launched_at=a.launch_time_ms / 1000, final_status=a.final_status) for a in apps if a.finished_time_ms > 0]


def test_the_log_is_read_as_it_grows_then_rotated_and_the_slo_is_the_recorded_one(tmp_path: Path, recorded: Path) -> None:
    lines = (recorded / "hdfs-audit.log").read_text().splitlines(keepends=True)
    log = tmp_path / "hdfs-audit.log"
    store, board, ingest, _ = rig(tmp_path, audit_log=log)
    assert ingest.tick(0.0).summary["pruned"] == 0 and board.ingest().sources[AUDIT].notes[0].endswith("does not exist (yet)")
    log.write_text("".join(lines[:700]) + lines[700][:40])  # the NameNode is writing line 701
    assert ingest.tick(1.0).summary[AUDIT]["lines"] == 700
    status = board.ingest().sources[AUDIT]
    assert status.offset == len("".join(lines[:700]).encode()) and status.problems == 0
    with log.open("a") as f:
        f.write(lines[700][40:] + "".join(lines[701:1200]))
    assert ingest.tick(2.0).summary[AUDIT]["lines"] == 500, "the partial line is read whole, once"
    os.rename(log, f"{log}.1")                          # log4j rotation; the old file got 100 more lines first
    with open(f"{log}.1", "a") as f:
        f.write("".join(lines[1200:1300]))
    log.write_text("".join(lines[1300:]))
    assert ingest.tick(3.0).summary[AUDIT]["lines"] == 214, "the rest of the rotated file, then the new one"
    assert "rotated" in board.ingest().sources[AUDIT].notes[0]
    assert ingest.tick(4.0).summary[AUDIT]["lines"] == 0, "nothing twice"
    store.append_job_runs(runs_of(recorded))
    refit = MorpheusRefit(MorpheusSettings(enabled=True), store, board, Metrics(CollectorRegistry()))
    refit.tick(5.0)
    model = board.model()
    assert model is not None
    a, b = model.job("pipeline-A"), model.job("pipeline-B")
    assert a is not None and b is not None, [j.job for j in model.jobs]
    # docs/morpheus.md's table (the same inference on the whole log read at once). A is stage 1
    # of the pipeline: its deadline is B's (the CLI reader's) less B's typical end after A's,
    # 146.3 − 20.4 s, no longer B's median read of A's output (122.4 s).
    assert (a.slo.period_s, round(a.slo.earliest_start_s, 1), round(a.slo.deadline_s, 1)) == (120.0, 56.7, 125.8)
    assert (b.slo.period_s, round(b.slo.earliest_start_s, 1), round(b.slo.deadline_s, 1)) == (120.0, 129.6, 146.3)
    assert a.proposal.actionable and a.skyline is None and "have a usable polled skyline" in a.proposal.skyline_reason


def test_a_truncated_file_is_read_again_and_bad_jsonl_lines_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "prov.jsonl"
    run = RunRecord("etl", "application_1_0001", 100.0, 101.0, 160.0)
    good = to_jsonl([FileAccess(150.0, Access.WRITE, "/out/p1", "application_1_0001", "mr_attempt_1_0001_m_0", "create")],
                    [run])
    path.write_text("\n".join(good + ['{"type": "access", "time_ms": "soon"}', "not json"]) + "\n")
    store, board, ingest, _ = rig(tmp_path, jsonl=path)
    summary = ingest.tick(1.0).summary[JSONL]
    assert summary == {"lines": 4, "events": 2, "problems": 2}
    accesses, runs = store.provenance(since=0.0)
    assert runs == [run] and len(accesses) == 1
    path.write_text(good[0] + "\n")                    # truncated and rewritten (copytruncate)
    ingest.tick(2.0)
    assert "truncated" in board.ingest().sources[JSONL].notes[0]
    assert len(store.provenance(since=0.0)[1]) == 1, "a run is one row (keyed by its id)"


def test_events_and_their_cursor_are_stored_together(tmp_path: Path) -> None:
    path = tmp_path / "prov.jsonl"
    path.write_text(to_jsonl([], [RunRecord("etl", "application_1_0001", 100.0, None, None)])[0] + "\n")
    store, _, ingest, _ = rig(tmp_path, jsonl=path)
    ingest.tick(1.0)
    cursor = store.provenance_cursor(JSONL)
    assert cursor is not None and cursor.offset == path.stat().st_size and cursor.path == str(path)
    reopened = SqliteHistoryStore(tmp_path / "h.db")  # a restart reads on from the stored cursor
    files = ProvenanceFiles(jsonl=path, tz=timezone.utc)
    assert files.read(JSONL, reopened.provenance_cursor(JSONL)).lines == 0

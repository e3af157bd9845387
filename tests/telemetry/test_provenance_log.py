"""Provenance parsers (harvester.telemetry.provenance_log) against the real NameNode audit logs of
fixtures hdfs-3.3.6/provenance and provenance-recurring, the RM's apps, and the JSONL format."""

from __future__ import annotations

import json
from datetime import timedelta, timezone
from pathlib import Path

import pytest
from rm_client.wire.apps import decode_apps

from harvester.models.provenance import Access, build_graph, is_private, run_id_of
from harvester.telemetry.provenance_log import parse_audit_log, parse_jsonl, runs_from_apps, to_jsonl

DATA_CMDS = ("cmd=open\t", "cmd=create\t", "cmd=append\t", "cmd=truncate\t", "cmd=concat\t", "cmd=delete\t",
             "cmd=rename")


@pytest.fixture(scope="module")
def recurring(fixtures_dir) -> Path:
    return fixtures_dir / "hdfs-3.3.6" / "provenance-recurring"


def test_every_line_of_the_recurring_log_is_understood(recurring: Path) -> None:
    lines = (recurring / "hdfs-audit.log").read_text().splitlines()
    parsed = parse_audit_log(lines)
    assert len(lines) == 1414 and parsed.problems == ()
    data = [ln for ln in lines if any(c in ln for c in DATA_CMDS) and "allowed=true" in ln]
    assert sum("allowed=false" in ln for ln in lines) == 24  # the MR history mover's denied deletes
    renames = sum("cmd=rename" in ln for ln in data)
    assert len(parsed.accesses) == len(data) + renames  # a rename is a delete and a write
    # README: the 200 lines without callerContext are NodeManager localization (open / getfileinfo).
    assert parsed.unattributed == sum("callerContext" not in ln for ln in data)
    assert all(a.run_id is None and a.actor == "" for a in parsed.accesses if "staging" in a.path and not a.actor)


def test_a_task_commit_rename_is_a_write_of_the_final_file_by_its_application(recurring: Path) -> None:
    parsed = parse_audit_log((recurring / "hdfs-audit.log").read_text().splitlines())
    commit = [a for a in parsed.accesses if a.path == "/pipeline/raw/p1/part-00000"]
    assert [(a.access, a.run_id, a.op) for a in commit][0] == (Access.WRITE, "application_1795504076245_0016", "rename")
    assert commit[0].time == pytest.approx(1795506586.977)  # 2026-11-24 07:49:46,977 UTC
    reads = [a for a in commit if a.access is Access.READ]
    assert [(a.run_id, a.actor) for a in reads] == [("application_1795504076245_0017",
                                                      "mr_attempt_1795504076245_0017_m_000000_0")]


@pytest.mark.parametrize(("context", "run"), [
    ("mr_attempt_1795504076245_0016_m_000001_0", "application_1795504076245_0016"),
    ("mr_appmaster_appattempt_1795504076245_0017_000001", "application_1795504076245_0017"),
    ("mr_attempt_1795504076245_0017_r_000000_0", "application_1795504076245_0017"),
    ("SPARK_DRIVER_application_1700000000000_0042_JId_3", "application_1700000000000_0042"),
    ("container_e17_1410901177871_0001_01_000005", "application_1410901177871_0001"),
    ("CLI", None),
    ("CLI:c2lnbmF0dXJl", None),
])
def test_caller_context_names_the_application(context: str, run: str | None) -> None:
    assert run_id_of(context) == run


@pytest.mark.parametrize(("path", "private"), [
    ("/pipeline/raw/p1/_temporary/1/_temporary/attempt_1_0001_m_000000_0/part-00000", True),
    ("/pipeline/seed/seed.txt._COPYING_", True),
    ("/tmp/hadoop-yarn/staging/root/.staging/job_1795504076245_0016/job.xml", True),
    ("/user/x/.sparkStaging/application_1700000000000_0042/app.jar", True),
    ("/pipeline/raw/p1/part-00000", False),
    ("/pipeline/_SUCCESS", False),
    ("/data/jobs_2024_archive/x", False),
])
def test_job_plumbing_is_private(path: str, private: bool) -> None:
    assert is_private(path) is private


def test_signature_denied_calls_garbage_and_time_zone() -> None:
    head = "2026-11-24 07:49:14,581 INFO FSNamesystem.audit: allowed={}\tugi=root (auth:SIMPLE)\tip=/127.0.0.1\t"
    lines = [
        head.format("true") + "cmd=open\tsrc=/a\tdst=null\tperm=null\tproto=rpc\tcallerContext=mr_attempt_1795504076245_0001_m_000000_0:sig",
        head.format("false") + "cmd=open\tsrc=/b\tdst=null\tperm=null\tproto=rpc\tcallerContext=CLI",
        "a stack trace line",
        head.format("true") + "cmd=getfileinfo\tsrc=/a\tdst=null\tperm=null\tproto=rpc\tcallerContext=CLI",
        head.format("true") + "cmd=rename (options=[TO_TRASH])\tsrc=/c\tdst=/.Trash/c\tperm=null\tproto=rpc",
    ]
    parsed = parse_audit_log(lines)
    assert [(a.access, a.path, a.run_id) for a in parsed.accesses] == [
        (Access.READ, "/a", "application_1795504076245_0001"), (Access.DELETE, "/c", None), (Access.WRITE, "/.Trash/c", None)]
    assert parsed.problems == ((3, "not an FSNamesystem.audit line"),)
    assert parsed.unattributed == 1
    later = parse_audit_log(lines[:1], tz=timezone(timedelta(hours=1))).accesses[0].time
    assert parsed.accesses[0].time - later == 3600


def test_runs_come_from_the_rm_apps(recurring: Path) -> None:
    doc = json.loads((recurring / "rm-apps.json").read_text())
    runs = runs_from_apps(decode_apps(doc))
    assert len(runs) == 12 and [r.job for r in runs[:2]] == ["pipeline-A", "pipeline-B"]
    first = runs[0]
    assert (first.run_id, first.submitted_at, first.finished_at) == ("application_1795504076245_0016",
                                                                     1795506577.955, 1795506587.296)
    assert first.started_at is not None and first.started_at >= first.submitted_at
    doc["apps"]["app"][0]["finalStatus"] = "FAILED"
    assert len(runs_from_apps(decode_apps(doc))) == 11  # §3.1: successful runs only


def test_the_first_recording_gives_the_pipeline_dataflow(fixtures_dir) -> None:
    root = fixtures_dir / "hdfs-3.3.6" / "provenance"
    parsed = parse_audit_log((root / "hdfs-audit.log").read_text().splitlines())
    runs = runs_from_apps(decode_apps(json.loads((root / "rm-apps.json").read_text())))
    graph = build_graph(parsed.accesses, runs)
    app = {r.run_id[-4:]: r.run_id for r in runs}
    assert graph.consumers(app["0001"]) == set()  # nobody read /warehouse/etl/2026-11-22
    assert graph.consumers(app["0002"]) == {"grep-search"}
    assert graph.consumers(app["0003"]) == {"grep-sort"}
    assert graph.consumers(app["0004"]) == {"client:CLI"}
    assert graph.producers(app["0003"]) == {"word count"}
    assert graph.producers(app["0002"]) == set()  # /logs/2026-11-23 was written before the log began


def test_jsonl_round_trip_keeps_every_event(recurring: Path) -> None:
    parsed = parse_audit_log((recurring / "hdfs-audit.log").read_text().splitlines())
    runs = runs_from_apps(decode_apps(json.loads((recurring / "rm-apps.json").read_text())))
    back = parse_jsonl(to_jsonl(parsed.accesses, runs))
    assert back.problems == ()
    assert back.accesses == parsed.accesses
    assert back.runs == runs


@pytest.mark.parametrize(("line", "why"), [
    ("{not json", "Expecting"),
    ("[1, 2]", "not a JSON object"),
    ('{"type": "job"}', "'type' must be"),
    ('{"type": "access", "time_ms": 1, "access": "peek", "path": "/a"}', "peek"),
    ('{"type": "access", "time_ms": 1, "access": "read", "path": "a"}', "absolute"),
    ('{"type": "access", "time_ms": "1", "access": "read", "path": "/a"}', "integer"),
    ('{"type": "run", "job": "etl", "run": "r1"}', "submit_ms"),
    ('{"type": "run", "job": "", "run": "r1", "submit_ms": 1}', "'job'"),
])
def test_bad_jsonl_lines_are_reported_with_their_number(line: str, why: str) -> None:
    good = '{"type": "run", "job": "etl", "run": "r1", "submit_ms": 1000, "start_ms": null, "finish_ms": 3000}'
    parsed = parse_jsonl([good, line, good.replace("r1", "r2")])
    assert [r.run_id for r in parsed.runs] == ["r1", "r2"]
    assert len(parsed.problems) == 1 and parsed.problems[0][0] == 2 and why in parsed.problems[0][1]

"""`harvester whatif` bad input: exit 2 with one line (harvester/cli_whatif.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harvester.cli import main
from tests.whatif.builders import build


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["whatif", "--quiet", *args])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


def test_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "--store", str(tmp_path / "nope.db"), "--out", str(tmp_path / "o"))
    assert code == 2 and len(err) == 1 and "no history store at" in err[0]
    assert not (tmp_path / "nope.db").exists()  # never created by the check


def test_empty_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harvester.history.sqlite import SqliteHistoryStore

    SqliteHistoryStore(str(tmp_path / "empty.db")).close()
    code, err = run(capsys, "--store", str(tmp_path / "empty.db"), "--out", str(tmp_path / "o"))
    assert code == 2 and len(err) == 1 and "no primary load" in err[0]


def test_too_little_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = build(str(tmp_path / "short.db"), days=0.02, job_seconds=60.0)
    b.store.close()
    code, err = run(capsys, "--store", str(tmp_path / "short.db"), "--out", str(tmp_path / "o"))
    assert code == 2 and len(err) == 1 and "at least one hour" in err[0]


def test_bad_policies_and_processes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = build(str(tmp_path / "s.db"), days=0.2, job_seconds=60.0)
    b.store.close()
    code, err = run(capsys, "--store", str(tmp_path / "s.db"), "--policies", "stock,magic", "--out", str(tmp_path / "o"))
    assert code == 2 and len(err) == 1 and "unknown magic" in err[0]
    code, err = run(capsys, "--store", str(tmp_path / "s.db"), "--processes", "0")
    assert code == 2 and "--processes" in err[0]
    code, err = run(capsys, "--store", str(tmp_path / "s.db"), "--days", "-1", "--out", str(tmp_path / "o"))
    assert code == 2 and "--days" in err[0]


def test_store_and_config_are_exclusive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["whatif", "--store", "a.db", "--config", "b.yaml"])
    assert exc.value.code == 2


def test_progress_file_says_why_it_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    prog = tmp_path / "p" / "progress.json"
    code, _ = run(capsys, "--store", str(tmp_path / "nope.db"), "--out", str(tmp_path / "o"), "--progress-json", str(prog))
    doc = json.loads(prog.read_text())
    assert code == 2 and doc["stage"].startswith("failed: no history store")
    assert set(doc) == {"fraction", "stage", "started", "updated"}


def test_progress_file_is_atomic_json_with_an_injected_clock(tmp_path: Path) -> None:
    import json

    from harvester.whatif.progress import ProgressFile

    t = iter([100.0, 101.5, 103.0])
    p = ProgressFile(tmp_path / "x.json", bar=False, clock=lambda: next(t))
    p(0.25, "reading")
    assert json.loads((tmp_path / "x.json").read_text()) == {"fraction": 0.25, "stage": "reading", "started": 100.0,
                                                            "updated": 101.5}
    p(0.1, "later stage")  # never goes back
    assert json.loads((tmp_path / "x.json").read_text())["fraction"] == 0.25
    assert [f.name for f in tmp_path.iterdir()] == ["x.json"]  # no temporary file left


def test_no_finished_job_to_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = build(str(tmp_path / "idle.db"), days=0.3, jobs_per_hour=0.0)
    b.store.close()
    code, err = run(capsys, "--store", str(tmp_path / "idle.db"), "--out", str(tmp_path / "o"))
    assert code == 2 and len(err) == 1 and "no finished job" in err[0]

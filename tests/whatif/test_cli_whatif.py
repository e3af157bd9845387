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

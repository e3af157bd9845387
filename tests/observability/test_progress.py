"""Progress on a terminal, silence in CI and pipes: one helper (observability/progress.py)."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from harvester.observability.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_draws_on_a_terminal_and_ends_the_line() -> None:
    out = Terminal()
    with Progress(4, "sweep", stream=out, unit="runs", min_interval_s=0.0) as bar:
        bar.advance(note="stock seed 1")
        bar.advance(2)
    text = out.getvalue()
    assert "\rsweep [" in text and "25.0%" in text and "1/4 runs" in text and "stock seed 1" in text
    assert "75.0%" in text and text.endswith("\n") and text.count("\n") == 1, "one line, redrawn in place"


@pytest.mark.parametrize("stream,quiet,term", [
    (io.StringIO(), False, "xterm"),  # a pipe or a file: CI logs
    (Terminal(), True, "xterm"),      # --quiet
    (Terminal(), False, "dumb"),      # a terminal that cannot redraw
])
def test_silent_off_a_terminal_or_when_quiet(stream: io.StringIO, quiet: bool, term: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", term)
    with Progress(3, "x", stream=stream, quiet=quiet, min_interval_s=0.0) as bar:
        for _ in range(3):
            bar.advance(note="n")
    assert stream.getvalue() == ""


def test_redraws_at_most_every_interval() -> None:
    out, now = Terminal(), [0.0]
    bar = Progress(1000, "x", stream=out, min_interval_s=1.0, clock=lambda: now[0])
    for i in range(1, 500):
        bar.update(i)
    assert out.getvalue().count("\r") == 1
    now[0] = 1.5
    bar.update(600)
    assert out.getvalue().count("\r") == 2


def _simulate(repo_root: Path, tmp_path: Path, stderr: int) -> subprocess.CompletedProcess[bytes]:
    sets = ["--set", "cluster.servers=40", "--set", "duration_s=3600", "--set", "drain_s=900",
            "--set", "workload.synthetic.jobs=30"]
    env = {**os.environ, "TERM": "xterm"}
    return subprocess.run([sys.executable, "-m", "harvester", "simulate", "--scenario",
                           str(repo_root / "deploy" / "scenarios" / "small-stock-yarn.yaml"), *sets, "--no-plots",
                           "--out", str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=stderr, env=env,
                          timeout=120, check=True)


def test_a_long_command_shows_progress_on_a_terminal_only(repo_root: Path, tmp_path: Path) -> None:
    """`harvester simulate` (the same helper serves sweep and the evaluations): stderr on a real
    pseudo-terminal gets the progress line, stderr into a pipe gets nothing."""
    piped = _simulate(repo_root, tmp_path, subprocess.PIPE)
    assert piped.stderr == b"" and b"results:" in piped.stdout
    leader, follower = pty.openpty()
    try:
        on_tty = _simulate(repo_root, tmp_path, follower)
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the writer side is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert b"simulate small-stock-yarn [" in seen and b"100.0%" in seen, seen
    assert b"results:" in on_tty.stdout and b"[" not in on_tty.stdout, "progress never goes to stdout"


def test_no_other_module_decides_by_itself_whether_to_draw(repo_root: Path) -> None:
    offenders = [str(p.relative_to(repo_root)) for p in (repo_root / "harvester").rglob("*.py")
                 if "isatty" in p.read_text(encoding="utf-8") and p.name != "progress.py"]
    assert offenders == [], "terminal detection lives in harvester/observability/progress.py"

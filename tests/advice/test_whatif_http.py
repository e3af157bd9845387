"""POST/GET /v1/whatif (advice/whatif_http.py): a what-if run in a separate process, at most one at
a time, its progress and the last report; the admin token for the POST; the sidecar's loops
never wait for it. A fake `whatif` command (a tiny Python child) keeps these fast; the last test
runs the real `harvester whatif` when this build has it."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminAuth, AdminServer
from harvester.advice.whatif_http import PATH, WhatifRuns, whatif_command
from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import load_settings

TOKEN = "whatif-test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
T0 = 1_795_430_000.0

#: A stand-in for `harvester whatif`: progress, then (once `<out>/go` exists) the report.
FAKE = r"""
import json, sys, time, pathlib
out, progress, code = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
def say(f, stage):
    tmp = progress.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fraction": f, "stage": stage, "started": 1.0, "updated": time.time()}))
    tmp.replace(progress)
say(0.25, "building the scenario")
while not (out / "go").exists():
    time.sleep(0.02)
if code:
    print("whatif: the store holds no history", file=sys.stderr)
    sys.exit(code)
say(1.0, "done")
(out / "whatif.json").write_text(json.dumps({"policies": {"yarn-pt": {"harvested_core_hours": 12.5, "task_kills": 3}}}))
(out / "whatif.md").write_text("# What-if\n")
"""


def fake(code: int = 0) -> Any:
    return lambda out, progress: [sys.executable, "-c", FAKE, str(out), str(progress), str(code)]


def until(pred: Any, timeout_s: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError("condition not reached in time")


@pytest.fixture()
def served(tmp_path: Path) -> Any:
    runs = WhatifRuns(fake(), tmp_path / "var" / "whatif", lambda: T0)
    server = AdminServer("127.0.0.1:0", auth=AdminAuth(TOKEN, ("*",)))
    server.route(PATH, runs.handle, methods=("GET", "POST"))
    server.start()
    try:
        yield runs, server.url + PATH
    finally:
        runs.stop()
        server.stop()


def test_one_run_at_a_time_with_progress_and_the_last_report(served: Any) -> None:
    runs, url = served
    assert requests.get(url, timeout=10).json() == {"state": "idle", "run": None, "last_report": None}
    assert requests.post(url, timeout=10).status_code in (401, 403)  # a write: the token
    first = requests.post(url, headers=AUTH, timeout=10)
    assert first.status_code == 202, first.text
    out = Path(first.json()["run"]["out"])
    assert out.parent.name == "whatif" and out.name == "20261123T103320Z"  # named by the sidecar's clock
    second = requests.post(url, headers=AUTH, timeout=10)
    assert second.status_code == 409 and "in progress" in second.json()["error"]
    running = until(lambda: (d := requests.get(url, timeout=10).json())["run"]["progress"] and d)
    assert running["state"] == "running" and running["run"]["progress"]["fraction"] == 0.25
    assert running["run"]["progress"]["stage"] == "building the scenario" and running["last_report"] is None
    (out / "go").touch()
    done = until(lambda: (d := requests.get(url, timeout=10).json())["state"] != "running" and d)
    assert done["state"] == "succeeded" and done["run"]["exit_code"] == 0 and done["run"]["progress"]["fraction"] == 1.0
    last = done["last_report"]
    assert last["report"]["policies"]["yarn-pt"]["task_kills"] == 3
    assert last["json"] == str(out / "whatif.json") and last["markdown"] == str(out / "whatif.md")
    again = requests.post(url, headers=AUTH, timeout=10)  # finished: a new run may start
    assert again.status_code == 202 and again.json()["run"]["out"] != str(out)  # its own folder
    assert requests.get(url, timeout=10).json()["last_report"]["json"] == str(out / "whatif.json")  # until it ends


def test_a_failed_run_shows_its_exit_code_and_output(tmp_path: Path) -> None:
    runs = WhatifRuns(fake(code=2), tmp_path / "w", lambda: T0)
    assert runs.post().status == 202
    out = Path(runs.document()["run"]["out"])
    (out / "go").touch()
    doc = until(lambda: (d := runs.document())["state"] != "running" and d)
    assert doc["state"] == "failed" and doc["run"]["exit_code"] == 2
    assert "no history" in doc["run"]["log"] and doc["last_report"] is None


def test_the_sidecar_stopping_ends_a_run_still_going(tmp_path: Path) -> None:
    runs = WhatifRuns(fake(), tmp_path / "w", lambda: T0)
    assert runs.post().status == 202
    pid = runs.document()["run"]["pid"]
    runs.stop()
    until(lambda: runs.document()["state"] != "running")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not a zombie
    assert runs.post().status == 503


def test_a_start_failure_is_an_error_not_a_stuck_run(tmp_path: Path) -> None:
    runs = WhatifRuns(lambda out, progress: [str(tmp_path / "no-such-program")], tmp_path / "w", lambda: T0)
    r = runs.post()
    assert r.status == 500 and b"cannot start" in r.body
    assert runs.document()["state"] == "idle"


def test_the_command_is_this_python_on_the_serving_config_or_store(tmp_path: Path) -> None:
    argv = whatif_command(tmp_path / "h.yaml", tmp_path / "h.db")(tmp_path / "o", tmp_path / "o" / "p.json")
    assert argv == [sys.executable, "-m", "harvester", "whatif", "--config", str(tmp_path / "h.yaml"),
                    "--out", str(tmp_path / "o"), "--progress-json", str(tmp_path / "o" / "p.json")]
    assert whatif_command(None, tmp_path / "h.db")(tmp_path, tmp_path)[4:6] == ["--store", str(tmp_path / "h.db")]


def _config(tmp_path: Path, store: dict[str, Any]) -> Path:
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    cfg = tmp_path / "harvester.yaml"
    cfg.write_text(json.dumps({
        "cluster": {"source": "rm"}, "rm": {"urls": ["http://127.0.0.1:9"]}, "store": store,
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2,
                   "auth": {"token_file": str(token)}}}))
    return cfg


def test_the_sidecar_serves_it_on_its_config_and_its_loops_do_not_wait(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARVESTER_ADMIN_TOKEN", raising=False)
    cfg = _config(tmp_path, {"backend": "sqlite", "path": str(tmp_path / "h.db")})
    app = Harvester(load_settings(cfg), clock=SimClock(T0), registry=CollectorRegistry(), config_path=cfg)
    seen: list[list[str]] = []
    real = app.whatif.command
    app.whatif.command = lambda out, progress: seen.append(real(out, progress)) or fake()(out, progress)
    app.start(run_loops=False)
    try:
        url = app.admin.url + PATH
        r = requests.post(url, headers=AUTH, timeout=10)
        assert r.status_code == 202, r.text
        assert seen[0][1:6] == ["-m", "harvester", "whatif", "--config", str(cfg.resolve())]
        assert Path(seen[0][7]).parent == tmp_path / "var" / "whatif"  # var/whatif/<time> where it was started
        app.loop("guard").run_once()  # a loop ticks while the run goes on (no lock, no wait)
        assert requests.get(url, timeout=10).json()["state"] == "running"
        nope = requests.get(app.admin.url + PATH + "/x", headers=AUTH, timeout=10)
        assert nope.status_code == 404 and PATH in nope.text  # 404 lists the routes, this one too
    finally:
        app.stop()
    assert app.whatif.document()["state"] in ("failed", "succeeded")  # stopped with the sidecar


def test_a_memory_store_cannot_be_replayed_from_another_process(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = _config(tmp_path, {"backend": "memory"})
    app = Harvester(load_settings(cfg), clock=SimClock(T0), registry=CollectorRegistry(), config_path=cfg)
    try:
        r = app.whatif.post()
        assert r.status == 409 and b"memory" in r.body
        assert "memory" in app.whatif.document()["unavailable"]
    finally:
        app.stop()


def _has_whatif_command() -> bool:
    from harvester import cli

    return "harvester.cli_whatif" in getattr(cli, "COMMAND_MODULES", ()) or \
        any("whatif" in m for m in getattr(cli, "COMMAND_MODULES", ()))


@pytest.mark.slow
@pytest.mark.skipif(not _has_whatif_command(), reason="`harvester whatif` is not in this build yet (issue 28 core)")
def test_the_real_command_runs_from_the_sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harvester.emulated_week import run_emulated, week_settings

    monkeypatch.chdir(tmp_path)
    cfg = week_settings(tmp_path / "week")
    run_emulated(cfg, 1.0)  # a store with a day the sidecar really recorded
    real = whatif_command(cfg, None)  # as the sidecar builds it; one policy over the recorded day keeps it short
    runs = WhatifRuns(lambda out, progress: real(out, progress) + ["--days", "1", "--policies", "yarn-pt",
                                                                    "--processes", "1", "--no-recommend"],
                      tmp_path / "var" / "whatif", lambda: T0)
    try:
        r = runs.post()
        assert r.status == 202, r.body
        doc = until(lambda: (d := runs.document())["state"] != "running" and d, timeout_s=600)
        assert doc["state"] == "succeeded", doc["run"].get("log")
        assert doc["run"]["progress"]["fraction"] == 1.0
        assert "yarn-pt" in doc["last_report"]["report"]["policies"] and doc["last_report"]["markdown"]
    finally:
        runs.stop()

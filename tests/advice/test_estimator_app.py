"""The Resource Estimator API as part of `harvester serve` (`estimator.enabled`) and alone
(`harvester estimator serve`, a real process): served on its own port from the sidecar's store,
and what it holds survives a restart on the same store file."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings
from shared_paths import FIXTURES_DIR

ROOT = FIXTURES_DIR / "resourceestimator-3.3.6"
HISTORY = (ROOT / "captures" / "history-all.json").read_bytes()
T0 = 1_795_430_000.0
REPO = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "logs" / "data"
    d.mkdir(parents=True)
    shutil.copy(ROOT / "etl_daily-3runs.txt", d / "etl_daily-3runs.txt")
    return d.parent


def _app(tmp_path: Path, estimator: dict[str, Any]) -> Harvester:
    doc = {"server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
           "store": {"path": str(tmp_path / "h.db")}, "cluster": {"source": "rm"},
           "rm": {"urls": [f"http://127.0.0.1:{_closed_port()}"]}, "estimator": estimator}
    return Harvester(parse_settings(doc, environ={}), clock=SimClock(T0), registry=CollectorRegistry())


def test_serve_runs_the_estimator_api_when_enabled_and_it_survives_a_restart(tmp_path: Path) -> None:
    conf = {"enabled": True, "listen": "127.0.0.1:0", "data_dir": str(_data_dir(tmp_path)), "open_writes": True}
    app = _app(tmp_path, conf)
    app.start(run_loops=False)
    try:
        base = app.estimator.url + "/resourceestimator"  # type: ignore[union-attr]
        assert app.status()["estimator"] == {"url": app.estimator.url, "writes": "open"}  # type: ignore[union-attr]
        assert requests.post(base + "/translator/data/etl_daily-3runs.txt", timeout=10).status_code == 204
        estimate = requests.get(base + "/estimator/etl_daily", timeout=60)
        assert estimate.status_code == 200
    finally:
        app.stop()
    again = _app(tmp_path, conf)
    again.start(run_loops=False)
    try:
        base = again.estimator.url + "/resourceestimator"  # type: ignore[union-attr]
        assert requests.get(base + "/skylinestore/history/*/*", timeout=10).content == HISTORY
        assert requests.get(base + "/skylinestore/estimation/etl_daily", timeout=10).content == estimate.content
    finally:
        again.stop()


def test_serve_without_the_section_serves_no_estimator(tmp_path: Path) -> None:
    app = _app(tmp_path, {})
    assert app.estimator is None and app.status()["estimator"] is None
    app.store.close()


def _serve_cli(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"store:\n  path: {tmp_path / 'alone.db'}\nestimator:\n  open_writes: true\n")
    proc = subprocess.Popen([sys.executable, "-m", "harvester", "estimator", "serve", "--config", str(cfg), "--port", "0",
                             *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), (url, proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
    return proc, url + "/resourceestimator"


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return err


def test_estimator_serve_alone_on_its_own_port_and_after_a_restart(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    proc, base = _serve_cli(tmp_path, "--data-dir", str(data))
    try:
        assert requests.post(base + "/translator/data/etl_daily-3runs.txt", timeout=10).status_code == 204
        first = requests.get(base + "/estimator/etl_daily", timeout=60).json()
        assert list(first["resourceAllocation"])[-1] == "315"
    finally:
        err = _stop(proc)
    assert f"translator data dir {data}" in err and "writes open" in err
    proc, base = _serve_cli(tmp_path)  # no --data-dir now: reads still answer from the store
    try:
        assert requests.get(base + "/skylinestore/history/*/*", timeout=10).content == HISTORY
        assert requests.get(base + "/estimator/etl_daily", timeout=10).json() == first
        refused = requests.post(base + "/translator/data/etl_daily-3runs.txt", timeout=10)
        assert refused.status_code == 403 and "estimator.data_dir" in refused.json()["message"]
    finally:
        _stop(proc)


def test_estimator_serve_refuses_a_bad_data_dir_in_one_line(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "harvester", "estimator", "serve", "--port", "0",
                          "--data-dir", str(tmp_path / "nope")], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "is not a directory" in out.stderr, out.stderr
    assert json.dumps(out.stdout) == '""'


def test_estimator_serve_on_a_port_in_use_says_which_setting(default_ports) -> None:  # type: ignore[no-untyped-def]
    default_ports.ensure()  # the suite holds 127.0.0.1:9998, the default
    out = subprocess.run([sys.executable, "-m", "harvester", "estimator", "serve"], cwd=REPO, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert "cannot serve on 127.0.0.1:9998 (estimator.listen)" in out.stderr

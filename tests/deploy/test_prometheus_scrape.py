"""A real Prometheus scrapes a running sidecar and answers a harvesting series back.

Debian's `prometheus` server (the package .ci/run installs; elsewhere the test skips with the
reason) runs on a free loopback port with a temporary config: the repository's alert rules, a
1-second scrape of a real `Harvester` (embedded cluster, memory store) whose loops tick every
second. The test waits for the guard's per-node capacity to arrive through the HTTP query API,
compares it with the sidecar's own /metrics, and checks that Prometheus loaded and evaluated
every alert rule against the live series without an error, with none pending or firing.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from deploy_files import ROOT, prometheus_binary, running_sidecar

ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
HARVEST_SERIES = "harvester_harvest_node_vcores"
WAIT_S = 30.0  # upper bound of each wait below; the scrape interval is 1 s


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _api(base: str, path: str, **params: str) -> Any:
    url = f"{base}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
    with urllib.request.urlopen(url, timeout=5) as resp:
        body = json.loads(resp.read())
    assert body["status"] == "success", body
    return body["data"]


@dataclass
class Server:
    base: str
    proc: subprocess.Popen[bytes]
    log: Path

    def api(self, path: str, **params: str) -> Any:
        return _api(self.base, path, **params)

    def until(self, what: str, probe: Callable[[], Any]) -> Any:
        """Poll `probe()` until it returns something truthy; fail with Prometheus's log otherwise."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"prometheus exited ({self.proc.returncode}):\n{self.log.read_text()[-3000:]}"
            try:
                got = probe()
            except OSError:  # not listening yet
                got = None
            if got:
                return got
            time.sleep(0.25)
        pytest.fail(f"no {what} within {WAIT_S:.0f} s; prometheus log:\n{self.log.read_text()[-3000:]}")


@contextmanager
def prometheus(target: str, tmp: Path) -> Iterator[Server]:
    """A Prometheus server scraping `target` every second."""
    binary = prometheus_binary("prometheus")
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ALERTS)],
        "scrape_configs": [{"job_name": "harvester", "metrics_path": "/metrics", "static_configs": [{"targets": [target]}]}],
    }
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = tmp / "prometheus.log"
    for _ in range(3):  # the free port may be taken before prometheus binds it: try another
        port = _free_port()
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline, ready = time.monotonic() + WAIT_S, False
            while not ready and proc.poll() is None and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as resp:
                        ready = resp.status == 200
                except OSError:  # not listening yet, or 503 while it starts
                    time.sleep(0.1)
            if proc.poll() is not None and b"address already in use" in log.read_bytes():
                continue
            assert ready, f"prometheus not ready (exit code {proc.poll()}):\n{log.read_text()[-3000:]}"
            yield Server(base, proc, log)
            return
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    pytest.fail("no free loopback port for prometheus after 3 tries")


def _exposed(address: str) -> dict[str, float]:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    return {s.labels["node"]: s.value for f in text_string_to_metric_families(text) if f.name == HARVEST_SERIES
            for s in f.samples}


def test_prometheus_scrapes_the_sidecar_and_answers_a_harvesting_series(tmp_path: Path) -> None:
    prometheus_binary("prometheus")  # skip before starting anything where it is absent
    fast = {"telemetry": {"poll_interval_s": 1}, "harvesting": {"control_period_s": 1}}
    with running_sidecar(fast) as app, prometheus(app.admin.address, tmp_path) as prom:
        series = prom.until(f"{HARVEST_SERIES} through /api/v1/query",
                            lambda: prom.api("/api/v1/query", query=HARVEST_SERIES)["result"])
        assert {s["metric"]["job"] for s in series} == {"harvester"}
        assert {s["metric"]["instance"] for s in series} == {app.admin.address}
        via_prometheus = {s["metric"]["node"]: float(s["value"][1]) for s in series}
        exposed = _exposed(app.admin.address)
        assert via_prometheus.keys() == exposed.keys(), "Prometheus must hold the nodes the sidecar exposes"
        assert all(v >= 0 and v == int(v) for v in via_prometheus.values()), via_prometheus

        [up] = prom.api("/api/v1/query", query='up{job="harvester"}')["result"]
        assert up["value"][1] == "1"

        names = {r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]}

        def evaluated() -> list[dict[str, Any]] | None:
            rules = [r for g in prom.api("/api/v1/rules")["groups"] for r in g["rules"]]
            done = [r for r in rules if not r.get("lastEvaluation", "").startswith("0001-")]
            return rules if len(done) == len(rules) == len(names) else None

        rules = prom.until("an evaluation of every rule", evaluated)
        assert {r["name"] for r in rules} == names
        assert [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"] == []
        assert [(r["name"], a["state"]) for r in rules for a in r["alerts"]] == [], "a healthy sidecar raises no alert"

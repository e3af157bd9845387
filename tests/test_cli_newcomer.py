"""What a newcomer ran into following the README (issue 19), each against a real sidecar over
real HTTP: HDFS-H off, the tenants table's NOW column, no tenant rules, a dry run."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest
from embedded_sidecar import embedded_sidecar, run_control_periods, settings_file
from prometheus_client import CollectorRegistry
from rm_fakes import closed_port_url

from harvester.app import Harvester
from harvester.cli import main
from harvester.clock import SimClock
from harvester.config import parse_settings


def test_hdfs_table_with_hdfs_off_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with embedded_sidecar(tmp_path / "h.db") as app:
        assert main(["hdfs", "table", "--url", f"http://{app.admin.address}"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "HDFS-H is off" in err and "hdfs.enabled" in err and app.admin.address in err


def test_tenants_now_column_shows_current_utilization(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the sidecar's clock at the wall clock's now, as `make run` runs: the CLI reads "now" slots
    with embedded_sidecar(tmp_path / "h.db", t0=time.time()) as app:
        run_control_periods(app, periods=1)
        cfg = settings_file(tmp_path / "h.yaml", app)
        assert main(["tenants", "--config", str(cfg)]) == 0, "from the store, while the sidecar runs"
        out = capsys.readouterr().out
        live = {c["class_id"]: c for c in app.classes()["classes"]}
    header, *rows = out.split("\n\n")[1].splitlines()
    assert header.split() == ["CLASS", "PATTERN", "AVG", "PEAK", "TENANTS", "NODES", "RESERVE", "NOW"]
    for row in rows:
        cells = row.split()
        assert cells[-1] != "-" and 0.0 <= float(cells[-1]) <= 1.0, row
        assert cells[5] == str(live[cells[0]]["nodes"]), "nodes per class, as the sidecar counts them"
    assert "NOW: mean primary utilization" in out


def test_tenants_without_rules_says_what_to_configure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real RM (cluster.source: rm), no harvesting.tenants: from the store and from the sidecar."""
    settings = parse_settings({
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
        "store": {"path": str(tmp_path / "h.db")}, "cluster": {"source": "rm"},
        "rm": {"urls": [closed_port_url()], "max_retries": 0}}, environ={})
    app = Harvester(settings, clock=SimClock(1_795_430_000.0), registry=CollectorRegistry())
    app.start(run_loops=False)
    try:
        cfg = tmp_path / "h.yaml"
        cfg.write_text(f"cluster:\n  source: rm\nrm:\n  urls: [{closed_port_url()}]\n"
                       f"store:\n  path: {tmp_path / 'h.db'}\n")
        for argv in (["tenants", "--config", str(cfg)], ["tenants", "--config", str(cfg), "--admin",
                                                           f"http://{app.admin.address}"]):
            assert main(argv) == 1
            out = capsys.readouterr().out
            assert out.startswith("no class model yet"), out
            assert "No harvesting.tenants rules are set" in out and "harvesting.unmatched_nodes: own_tenant" in out
            assert "Classes appear at the first refit" in out and "patterns.min_samples" in out, out
    finally:
        app.stop()


def test_a_dry_run_says_would_send_on_the_nodes_route(tmp_path: Path) -> None:
    with embedded_sidecar(tmp_path / "h.db", {"harvesting": {"actuate": False}}) as app:
        run_control_periods(app, periods=2)  # the first poll's utilization is unknown: nothing decided
        with urllib.request.urlopen(f"http://{app.admin.address}/v1/harvesting/nodes", timeout=10) as r:
            doc = json.load(r)
    assert doc["actuate"] is False
    outcomes = {n["outcome"] for n in doc["nodes"]}
    assert not any(o.startswith("sent:") for o in outcomes), outcomes
    assert any(o.startswith("would_send:") for o in outcomes), outcomes
    assert {a["fate"] for a in doc["recent_actions"]} == {"would send"}

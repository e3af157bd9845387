"""`harvester explain` against the embedded default (`make run`, then `harvester explain node ID`):
in-process, over real HTTP, and from the store once the sidecar is gone."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
from embedded_sidecar import embedded_sidecar, run_control_periods, settings_file
from rm_fakes import closed_port_url

from harvester.advice.explain import close_ids
from harvester.app import Harvester
from harvester.cli import main
from harvester.models.job_history import JobRun


@pytest.fixture()
def sidecar(tmp_path: Path) -> Iterator[Harvester]:
    with embedded_sidecar(tmp_path / "h.db") as app:
        run_control_periods(app)
        yield app


def _node(app: Harvester) -> str:
    return next(v.node_id for v in app.state.view().guard.nodes if v.tenant == "web")


def test_explain_node_against_make_run(sidecar: Harvester, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No flag but a settings file naming the running sidecar, as after `make run`."""
    cfg = settings_file(tmp_path / "h.yaml", sidecar)
    node = _node(sidecar)
    assert main(["explain", "node", node, "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"node {node} — from the running sidecar http://{sidecar.admin.address}")
    assert "tenant web, class periodic-" in out and "formula: cpu 8 cores − primary" in out
    assert "settings that change it:" in out and "harvesting.reserve.quantile = 0.95" in out
    # the first poll's first-heartbeat zero decides nothing (no write); the second sample's formula is sent
    assert "last 1 decision(s), newest first:" in out and "set_capacity" in out and "— sent, data 0 s old" in out
    assert "inputs: class_id periodic-" in out and "primary_cpu_cores" in out


def test_explain_node_json_has_formula_inputs_data_age_and_settings(sidecar: Harvester) -> None:
    node = _node(sidecar)
    with urllib.request.urlopen(f"http://{sidecar.admin.address}/v1/explain/node?id={node}&limit=5", timeout=10) as r:
        doc = json.load(r)
    assert doc["kind"] == "node" and doc["source"] == "sidecar" and doc["now"]["node_id"] == node
    assert doc["now"]["formula"].startswith("cpu 8 cores") and doc["now"]["data_age_s"] == 0
    [newest] = doc["decisions"]  # the first period's unknown utilization wrote nothing
    assert newest["action"] == "set_capacity" and newest["fate"] == "sent"
    assert newest["formula"].startswith("cpu 8 cores − primary")
    assert {"primary_cpu_cores", "reserve_cpu_cores", "total", "harvestable"} <= set(newest["inputs"])
    assert newest["data_age_s"] == 0.0 and newest["data_as_of"] is not None
    assert "harvesting.reserve.quantile" in {s["key"] for s in newest["settings"]}
    with urllib.request.urlopen(f"http://{sidecar.admin.address}/v1/explain", timeout=10) as r:
        assert set(json.load(r)["kinds"]) >= {"node", "tenant", "job"}


def test_explain_tenant_and_job(sidecar: Harvester, capsys: pytest.CaptureFixture[str]) -> None:
    base = f"http://{sidecar.admin.address}"
    assert main(["explain", "tenant", "web", "--admin", base]) == 0
    out = capsys.readouterr().out
    assert "periodic: daily-band share" in out and "≥ patterns.periodic_min_share 0.2" in out
    assert "reserve 0.05 of each node's cores: q0.95" in out and "3 node(s) now:" in out
    now = sidecar.clock.now()
    sidecar.store.append_job_runs([JobRun("nightly-etl", f"application_1_{i:04d}", now - 9000 - i * 86400,
                                          now - 100 - i * 86400, 8) for i in range(3)])
    sidecar.loop("jobs").run_once()  # republishes the job history the sidecar answers from
    assert main(["explain", "job", "nightly-etl", "--admin", base, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["job_type"] in ("short", "medium", "long") and len(doc["runs"]) == 3
    assert any("last run application_1_0000" in line for line in doc["summary"])
    assert any(s["key"] == f"harvesting.weights.{doc['job_type']}" for s in doc["settings"])


def test_from_the_store_when_no_sidecar_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with embedded_sidecar(tmp_path / "h.db") as app:
        run_control_periods(app)
        node = _node(app)
    cfg = settings_file(tmp_path / "h.yaml", app, admin_listen=closed_port_url().removeprefix("http://"))
    assert main(["explain", "node", node, "--config", str(cfg), "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert f"from the history store {tmp_path / 'h.db'} (no sidecar at" in out
    assert "last action set_capacity" in out and "last 1 decision(s)" in out and "formula: cpu 8 cores" in out
    assert main(["explain", "tenant", "web", "--config", str(cfg), "--store", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "store" and doc["class"]["class_id"].startswith("periodic-") and doc["decisions"]


def test_unknown_subjects_and_kinds_are_one_line(sidecar: Harvester, capsys: pytest.CaptureFixture[str]) -> None:
    base = f"http://{sidecar.admin.address}"
    assert main(["explain", "node", "nope:1", "--admin", base]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing known about node 'nope:1'" in err
    assert main(["explain", "queue", "root.default", "--admin", base]) == 2
    assert "unknown kind 'queue'; the sidecar explains: job, node, reservation, tenant" in capsys.readouterr().err
    assert main(["explain", "node", "x", "--admin", closed_port_url()]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "connection refused" in err and "HTTPConnectionPool" not in err


@pytest.mark.parametrize(("typed", "known", "expected"), [
    ("web-01", ["web-01.demo:45454", "web-02.demo:45454", "db-01.demo:45454"], ["web-01.demo:45454"]),
    ("WEB-0", ["web-01.demo:45454", "web-00.demo:45454"], ["web-00.demo:45454", "web-01.demo:45454"]),
    ("wbe", ["web", "search", "db", "etl"], ["web"]),
    ("nightly-elt", ["nightly-etl", "hourly-etl"], ["nightly-etl"]),
    ("nope:1", ["web-01.demo:45454", "db-00.demo:45454"], []),
    ("", ["web"], []),
])
def test_close_ids_prefers_what_contains_the_typed_text_then_close_spellings(typed: str, known: list[str],
                                                                               expected: list[str]) -> None:
    assert close_ids(typed, known + known) == expected


def test_an_unknown_id_gets_a_did_you_mean(sidecar: Harvester, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The RM's node id is host:port; an operator types the host's short name."""
    base = f"http://{sidecar.admin.address}"
    node = _node(sidecar)
    short = node.split(".")[0]
    assert main(["explain", "node", short, "--admin", base]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean {node!r}?" in err, err
    assert main(["explain", "tenant", "wbe", "--admin", base]) == 1
    assert "did you mean 'web'?" in capsys.readouterr().err
    cfg = settings_file(tmp_path / "h.yaml", sidecar)
    assert main(["explain", "node", short, "--config", str(cfg), "--store"]) == 1, "from the store as well"
    assert f"did you mean {node!r}?" in capsys.readouterr().err


def test_a_dry_run_explains_would_send(tmp_path: Path) -> None:
    with embedded_sidecar(tmp_path / "h.db", {"harvesting": {"actuate": False}}) as app:
        run_control_periods(app, periods=2)  # the first poll's utilization is unknown: nothing decided
        doc = app.explainers.explain("node", _node(app), app.explain_sources())[1]
    assert doc["decisions"][0]["fate"] == "would send"
    assert doc["now"]["outcome"].startswith("would_send:") or doc["now"]["outcome"].startswith("skipped:")
    assert "harvesting.actuate" in {s["key"] for s in doc["decisions"][0]["settings"]}

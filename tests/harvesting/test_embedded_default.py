"""The embedded default (`make run`): demo tenant rules, synthesized history, first refit,
actuation against the emulator, the admin routes, `harvester tenants`; never for a real RM."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client import CollectorRegistry

from harvester.app import Harvester, harvesting_settings
from harvester.cli import main
from harvester.config import parse_settings
from rm_client import RMClient, RMClientConfig

from embedded_sidecar import embedded_sidecar, loopback_settings, run_control_periods
from emu_cluster import EmuCluster


TOKEN = "embedded-test-token-0123456789"


def _call(url: str, method: str = "GET", token: str | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None,
                                 headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


@pytest.fixture()
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harvester]:
    monkeypatch.delenv("HARVESTER_ADMIN_TOKEN", raising=False)
    token_file = tmp_path / "admin.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    with embedded_sidecar(tmp_path / "h.db", {"server": {"auth": {"token_file": str(token_file)}},
                                              "harvesting": {"refit_min_interval_s": 0}}) as app:
        yield app


def test_the_demo_is_classified_right_after_start(embedded: Harvester) -> None:
    h = embedded.harvesting
    assert h.actuate is True and [r.hostname_pattern for r in h.tenants] == ["^web-", "^search-", "^db-", "^etl-"]
    assert len(embedded.store.tenant_slots(since=0)) == 4 * 30 * 720, "30 days of synthesized demo history"
    summary = embedded.loop("refit").run_once().summary
    assert summary["refit"] is True and summary["model_version"] == 1
    status, doc = _call(f"http://{embedded.admin.address}/v1/harvesting/classes")
    assert status == 200
    assert {t["tenant"]: t["pattern"] for t in doc["tenants"]} == {
        "web": "periodic", "search": "periodic", "db": "constant", "etl": "unpredictable"}
    assert all(c["reserve_fraction"] is not None for c in doc["classes"])


def test_the_guard_actuates_against_the_emulator(embedded: Harvester) -> None:
    # two control periods: a node's first heartbeat may read CPU 0.0 (unknown), the second poll confirms
    run_control_periods(embedded, periods=2, step_s=10.0)
    assert any(e.fate == "sent" for e in embedded.guard.status().recent)
    with RMClient(RMClientConfig(urls=(embedded.embedded.url,))) as rm:  # what `harvester rm nodes` shows
        totals = {n.id: n.total_resource.vcores for n in rm.list_nodes()}
    assert any(v < 16 for v in totals.values()), totals
    status, doc = _call(f"http://{embedded.admin.address}/v1/harvesting/nodes")
    assert status == 200 and len(doc["nodes"]) == 12 and doc["actuate"] is True
    assert all(n["reason"].startswith("cpu 8 cores") for n in doc["nodes"]), [n["reason"] for n in doc["nodes"]]
    assert _call(f"http://{embedded.admin.address}/status")[1]["harvesting"]["model_version"] == 1


def test_refit_on_demand_over_http_and_the_cli(embedded: Harvester, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    base = f"http://{embedded.admin.address}"
    assert _call(f"{base}/v1/harvesting/refit")[0] == 405, "refit is POST only"
    assert _call(f"{base}/v1/harvesting/refit", "POST")[0] == 401, "an admin write needs the token"
    status, doc = _call(f"{base}/v1/harvesting/refit", "POST", TOKEN)
    assert status == 200 and doc["refit"]["refit"] is True and doc["model_version"] == 1
    assert main(["tenants", "--admin", base, "--refit", "--json"]) == 1, "the CLI without the token is refused"
    assert "HTTP 401" in capsys.readouterr().err
    assert main(["tenants", "--admin", base, "--refit", "--json",
                 "--token-file", str(embedded.settings.server.auth.token_file)]) == 0
    assert json.loads(capsys.readouterr().out)["model_version"] == 2
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"store:\n  path: {embedded.settings.store.path}\n")
    assert main(["tenants", "--config", str(cfg)]) == 0, "from the store, while the sidecar runs"
    out = capsys.readouterr().out
    assert "class model v2" in out and "periodic-0" in out and "unpredictable" in out
    for tenant in ("web", "search", "db", "etl"):
        assert f"\n{tenant} " in out


def test_tenants_without_a_store_or_a_sidecar_fails_with_one_line(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"store:\n  path: {tmp_path / 'none.db'}\n")
    assert main(["tenants", "--config", str(cfg)]) == 1
    assert "no history store" in capsys.readouterr().err
    assert main(["tenants", "--admin", "http://127.0.0.1:9", "--json"]) == 1
    assert "cannot reach the running sidecar" in capsys.readouterr().err


def test_a_real_rm_gets_no_synthesized_history_and_no_actuation_by_default() -> None:
    with EmuCluster() as cluster:
        settings = loopback_settings({"backend": "memory"}, {"cluster": {"source": "rm"}, "rm": {"urls": [cluster.url]}})
        app = Harvester(settings, clock=cluster.clock, registry=CollectorRegistry())
        try:
            assert app.embedded is None and app.actuator is None and app.harvesting.actuate is False
            assert app.store.tenant_slots(since=0) == [] and app.harvesting.tenants == []
            assert app.loop("refit").run_once().summary["refit"] is False, "nothing observed, nothing fitted"
        finally:
            app.stop()  # never started: stops without waiting


def test_an_explicit_actuate_false_keeps_the_demo_a_dry_run() -> None:
    s = parse_settings({"harvesting": {"actuate": False}}, environ={})
    assert harvesting_settings(s).actuate is False
    assert harvesting_settings(parse_settings({}, environ={})).actuate is True

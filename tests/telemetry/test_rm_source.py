"""RMTelemetrySource against recorded Hadoop 3.3.6 answers, over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from rm_fakes import Reply, ScriptedRM, closed_port_url

from harvester.telemetry.rm import RMTelemetrySource
from harvester.telemetry.source import TelemetryError
from rm_client import RMClient, RMClientConfig

APP = "application_1795420810582_0002"
ATTEMPT = "appattempt_1795420810582_0002_000001"


@pytest.fixture()
def rm(fixtures_dir: Path) -> Iterator[ScriptedRM]:
    cap = fixtures_dir / "yarn-3.3.6" / "captures"
    server = ScriptedRM()
    server.script("GET", "/ws/v1/cluster/nodes", Reply(body=(cap / "nodes-running.json").read_bytes()))
    apps = (cap / "apps-running.json").read_bytes()
    server.script("GET", "/ws/v1/cluster/apps", Reply(body=apps))
    for app in ("application_1795420810582_0001", APP):
        attempts = (cap / "apps-id-appattempts.json").read_bytes().replace(b"_0002", app[-5:].encode())
        server.script("GET", f"/ws/v1/cluster/apps/{app}/appattempts", Reply(body=attempts))
    server.script("GET", f"/ws/v1/cluster/apps/{APP}/appattempts/{ATTEMPT}/containers",
                  Reply(body=(cap / "apps-id-appattempts-id-containers.json").read_bytes()))
    server.script("GET", "/ws/v1/cluster/apps/application_1795420810582_0001/appattempts/"
                  "appattempt_1795420810582_0001_000001/containers", Reply(body=b"{}"))
    yield server
    server.close()


def client(url: str) -> RMClient:
    return RMClient(RMClientConfig(urls=(url,), max_retries=0), sleep=lambda s: None)


def test_nodes_become_samples_with_rm_units(rm: ScriptedRM) -> None:
    snap = RMTelemetrySource(client(rm.url), physical_cores=lambda nid, host: 2.0).poll(now=1000.0)
    assert snap.time == 1000.0 and snap.source == "rm" and not snap.containers_complete
    n = snap.node("localhost:45455")
    assert n is not None and n.state == "RUNNING" and n.rack == "/default-rack"
    assert (n.total.memory_mb, n.total.vcores) == (8192, 8)
    assert (n.used.memory_mb, n.used.vcores) == (1536, 3)
    assert n.node_cpu_cores == pytest.approx(0.07997334)
    assert n.containers_cpu_vcores == pytest.approx(0.026)
    # vcores → cores: 0.026 vcores × 2 cores / 8 vcores
    assert n.containers_cpu_cores == pytest.approx(0.0065)
    assert [s.path for s in rm.seen] == ["/ws/v1/cluster/nodes"], "containers are not listed unless asked"


def test_physical_cores_inferred_from_cpu_utilization_when_not_configured(rm: ScriptedRM) -> None:
    snap = RMTelemetrySource(client(rm.url)).poll(now=1.0)
    # cpuUtilization 3.998667 % at nodeCPUUsage 0.0799733 → a 2-core host
    assert snap.node("localhost:45455").physical_cores == 2.0


def test_containers_of_running_apps_with_am_flag(rm: ScriptedRM) -> None:
    snap = RMTelemetrySource(client(rm.url), list_containers=True).poll(now=5.0)
    assert snap.containers_complete
    ids = {c.container_id: c for c in snap.containers}
    assert ids, "the recorded attempt has running containers"
    am = [c for c in ids.values() if c.is_am]
    assert [c.container_id for c in am] == ["container_1795420810582_0002_01_000001"]
    assert all(c.app_id == APP for c in ids.values())
    assert all(c.started_at > 1.7e9 for c in ids.values()), "start times are epoch seconds"


def test_rm_down_is_a_telemetry_error() -> None:
    with pytest.raises(TelemetryError, match="RM poll failed"):
        RMTelemetrySource(client(closed_port_url())).poll(now=0.0)


def test_rm_garbage_is_a_telemetry_error() -> None:
    bad = ScriptedRM()
    bad.script("GET", "/ws/v1/cluster/nodes", Reply(body=b'{"nodes": {"node": [{"id": 3}]}}'))
    try:
        with pytest.raises(TelemetryError):
            RMTelemetrySource(client(bad.url)).poll(now=0.0)
    finally:
        bad.close()

"""End to end against the emulator: the same scenario as tests/integration/test_harvest_e2e.py.

The real Harvester app (composition root) with `cluster.source: rm` polls an emulated RM over
real HTTP (an `EmulatorServer` on a `SimClock`: two NodeManagers of 8192 MB / 8 vcores on one
2-core host, like the recorded pseudo-cluster). A distributed-shell app holds containers; a
busy loop outside YARN (`Workload.burn`, scenarios/cpu-burn) plays the primary tenant. The
guard must see the host's primary usage rise THROUGH THE RM (2-7 s late, 3 s NM samples), cut
both NodeManagers' capacity, and the RM must kill the youngest containers; when the burner
stops the capacity must come back. Every assertion reads what the RM reports (rm_client).
"""

from __future__ import annotations

import json
import urllib.request
from typing import Callable, Iterator

import grpc
import pytest
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.config import parse_settings
from harvester.domain import Resources
from harvester.v1 import yarn_advisor_pb2, yarn_advisor_pb2_grpc
from rm_client import Container

from emu_cluster import N1, N2, EmuCluster
from live_cluster import cut_nodes, guard_timeout_problems
from tcp_proxy import CuttableProxy

POLL_S = 2


class Rig:
    def __init__(self) -> None:
        self.cluster = EmuCluster()
        self.proxy = CuttableProxy("127.0.0.1", self.cluster.server.port)
        settings = parse_settings({
            "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
            "store": {"backend": "memory"},
            "cluster": {"source": "rm"},
            "rm": {"urls": [self.proxy.url], "user": "root", "max_retries": 0, "connect_timeout_s": 1, "read_timeout_s": 2},
            "telemetry": {"poll_interval_s": POLL_S, "stale_after_s": 30},
            "harvesting": {
                "actuate": True,
                "tenants": [{"tenant": "svc", "environment": "prod", "hostname_pattern": "^localhost$"}],
                "node_resources": {"physical_cores": 2},
                # kill_when reserve_used: the cut restores the whole reserve, so a 1-core burn kills (the
                # default, reserve_exhausted, lets the reserve absorb it: tests/decisions/test_guard_kills.py)
                "control_period_s": 1, "guard": {"min_interval_s": 10, "kill_when": "reserve_used"},
            },
        }, environ={})
        self.app = Harvester(settings, clock=self.cluster.clock, registry=CollectorRegistry())
        self.app.start(run_loops=False)

    def run(self, seconds: float, until: Callable[[], bool] | None = None) -> int:
        """Step the clock 1 s at a time: telemetry every POLL_S, the guard every second (as its
        loops would); returns the seconds it took for `until` to hold (or `seconds`)."""
        telemetry, guard = self.app.loop("telemetry"), self.app.loop("guard")
        for i in range(1, int(seconds) + 1):
            self.cluster.advance(1.0)
            if i % POLL_S == 0:
                telemetry.run_once()
            assert guard.run_once() is not None, guard.status()["last_error"]
            if until is not None and until():
                return i
        return int(seconds)

    def vcores(self) -> dict[str, int]:
        return {n.id: n.total_resource.vcores for n in self.cluster.client.list_nodes()}

    def containers(self, app_id: str) -> list[Container]:
        (attempt,) = self.cluster.client.list_app_attempts(app_id)
        return list(self.cluster.client.list_containers(app_id, attempt.attempt_id))

    def close(self) -> None:
        self.app.stop()
        self.proxy.cut()
        self.cluster.close()


@pytest.fixture()
def rig() -> Iterator[Rig]:
    r = Rig()
    try:
        yield r
    finally:
        r.close()


def test_a_cpu_burn_outside_yarn_shrinks_capacity_kills_youngest_and_capacity_returns(rig: Rig) -> None:
    c = rig.cluster
    app_id = c.work.distributed_shell(4, Resources(1024, 1), duration_s=None).app_id
    c.advance(15)
    before = rig.containers(app_id)
    assert c.client.get_app(app_id).running_containers == len(before) == 5

    # idle host: 2 cores − 0 primary − cold-start reserve 0.4 = 1.6 cores × 4 vc/core → 6 vcores; ≤ 5 held → no kill
    rig.run(10)
    assert rig.vcores() == {N1: 6, N2: 6}
    assert c.client.get_app(app_id).running_containers == 5

    # the primary burns one core outside YARN: 2 − 1 − 0.4 = 0.6 cores → 2 vcores per NM of the host
    start = c.clock.now()
    c.work.burn(N1, 1.0, start=start, stop=start + 60)
    took = rig.run(30, until=lambda: rig.vcores() == {N1: 2, N2: 2})
    assert rig.vcores() == {N1: 2, N2: 2}, "both NMs of the burning host are cut"
    assert took <= 12, f"the guard reacted {took} s after the burn started (RM delay 2-7 s + one poll)"
    rig.run(3)
    after = rig.containers(app_id)
    nodes = {n.id: n for n in c.client.list_nodes()}
    assert all(n.used_vcores <= 2 for n in nodes.values()), "the RM killed enough to fit"
    rm_app = c.client.get_app(app_id)
    killed = {x.container_id for x in before} - {x.container_id for x in after}
    assert killed and rm_app.num_non_am_container_preempted == len(killed) and rm_app.num_am_container_preempted == 0
    assert rm_app.preempted_resource_mb == 1024 * len(killed) and rm_app.running_containers == len(after)
    (attempt,) = c.client.list_app_attempts(app_id)
    assert attempt.am_container_id in {x.container_id for x in after}, "the AM is never a victim"
    for node in (N1, N2):   # per node, every victim is at least as young as every surviving worker
        survivors = [x.started_time_ms for x in after if x.node_id == node and x.container_id != attempt.am_container_id]
        victims = [x.started_time_ms for x in before if x.node_id == node and x.container_id in killed]
        assert not survivors or not victims or min(victims) >= max(survivors), node

    # what the sidecar serves meanwhile: per-node view over HTTP, ListNodeCapacities over gRPC
    with urllib.request.urlopen(f"http://{rig.app.admin.address}/v1/harvesting/nodes", timeout=5) as r:
        doc = json.load(r)
    assert {n["node_id"] for n in doc["nodes"]} == {N1, N2} and doc["actuate"] is True
    assert any(a["kind"] == "set_capacity" and "overCommitTimeout=0" in a["detail"] and a["fate"] == "sent"
               for a in doc["recent_actions"]), "a cut below allocation: the RM kills (rm_overcommit)"
    # the check the live twin makes of the guard's records (tests/support/live_cluster.py): the first
    # decrease (6 vcores hold the 5 containers) went with -1; the cut to 2 vcores with 0 only on the
    # nodes holding more than 2 (one-vcore containers), -1 on the other
    records = rig.app.store.decisions(loop="guard", limit=500)
    above = {n for n in (N1, N2) if sum(x.node_id == n for x in before) > 2}
    assert guard_timeout_problems(records, 0) == [] and cut_nodes(records) == above and above
    assert {r.inputs["outcome"] for r in records if r.inputs.get("overcommit_timeout_ms") == -1} >= {"sent:decrease"}
    with grpc.insecure_channel(rig.app.grpc.address) as ch:
        caps = yarn_advisor_pb2_grpc.YarnAdvisorStub(ch).ListNodeCapacities(
            yarn_advisor_pb2.ListNodeCapacitiesRequest(), timeout=5)
    assert {n.node_id: n.harvestable.vcores for n in caps.nodes} == {N1: 2, N2: 2}
    assert all(0.9 < n.primary_cpu_cores < 1.1 for n in caps.nodes)

    # the burner stops at start + 60 s: capacity comes back (an increase waits min_interval_s = 10 s)
    c.clock.set(max(c.clock.now(), start + 60))
    took = rig.run(40, until=lambda: rig.vcores() == {N1: 6, N2: 6})
    assert rig.vcores() == {N1: 6, N2: 6}, f"capacity back after {took} s"
    metrics = rig.app.metrics.registry
    assert metrics.get_sample_value("harvester_harvest_kills_total", {"reason": "rm_overcommit"}) >= 1
    assert metrics.get_sample_value("harvester_harvest_node_vcores", {"node": N1}) == 6


def test_an_unreachable_rm_changes_nothing_while_the_primary_spikes(rig: Rig) -> None:
    c = rig.cluster
    app_id = c.work.distributed_shell(4, Resources(1024, 1), duration_s=None).app_id
    c.advance(15)
    rig.run(6)
    before = rig.vcores()
    acted = len(rig.app.guard.status().recent)
    rig.proxy.cut()                                        # the RM goes away ...
    start = c.clock.now()
    c.work.burn(N1, 2.0, start=start, stop=start + 300)    # ... while the primary spikes
    rig.run(60)
    assert rig.app.loop("telemetry").status()["failures"] >= 29, "every poll failed (recorded, not raised)"
    assert {v.outcome for v in rig.app.state.view().guard.nodes} == {"stale:snapshot"}
    assert len(rig.app.guard.status().recent) == acted, "nothing was decided on an old view"
    assert rig.vcores() == before and c.client.get_app(app_id).running_containers == 5  # the RM itself, directly

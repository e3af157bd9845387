"""Several ResourceManagers behind one sidecar (`rm.clusters`, harvester/subclusters.py), end to
end over real HTTP on loopback: two emulated sub-clusters, `east` and `west`, each its own RM
(emulator/subclusters.py) with THE SAME node ids (nm-00000:45454, nm-00001:45454), polled and
actuated by the real composition root on a SimClock.

A primary tenant burns 6 of 8 cores on west's hosts only: the guard must cut west's nodes (read
back from west's RM) and leave east's harvested capacity alone; the one store must hold both
sub-clusters' nodes apart (`east/...`, `west/...`); metrics are labelled by sub-cluster; `explain
node` names the sub-cluster; each RM's plug-in gets its own node order (`?subcluster=`, ids as
its RM names them). With east's RM gone, west goes on (east's nodes get no action).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterator

import grpc
import pytest
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.emulator.subclusters import SubClusters, start_subclusters
from harvester.v1 import yarn_advisor_pb2, yarn_advisor_pb2_grpc
from rm_client import RMClient, RMClientConfig
from tcp_proxy import CuttableProxy

N0, N1 = "nm-00000:45454", "nm-00001:45454"
CORES = 8
BURN = 6.0


class Rig:
    def __init__(self, guard: dict[str, Any] | None = None) -> None:
        self.clock = SimClock(start=1_795_430_000.0)
        self.rms: SubClusters = start_subclusters(self.clock, ["east", "west"], size=2, physical_cores=CORES)
        # the sidecar reaches east through a proxy a test can cut (an RM gone, keep-alive connections too)
        self.east_proxy = CuttableProxy("127.0.0.1", self.rms.servers["east"].port)
        urls = {**self.rms.urls(), "east": self.east_proxy.url}
        settings = parse_settings({
            "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
            "store": {"backend": "memory"},
            "cluster": {"source": "rm"},
            "rm": {"user": "root", "max_retries": 0, "connect_timeout_s": 1, "read_timeout_s": 2,
                   "clusters": [{"name": n, "urls": [u]} for n, u in urls.items()]},
            "telemetry": {"poll_interval_s": 2, "stale_after_s": 30},
            "harvesting": {"actuate": True, "control_period_s": 1,
                           "tenants": [{"tenant": "svc", "environment": "prod", "hostname_pattern": "^nm-"}],
                           "node_resources": {"physical_cores": CORES}, "guard": {"min_interval_s": 10, **(guard or {})}},
        }, environ={})
        self.app = Harvester(settings, clock=self.clock, registry=CollectorRegistry())
        self.app.start(run_loops=False)

    def run(self, seconds: int) -> None:
        """1 s steps: telemetry every 2 s, the guard and the node ordering every second."""
        telemetry, guard, ordering = (self.app.loop(n) for n in ("telemetry", "guard", "node-ordering"))
        for i in range(1, seconds + 1):
            self.clock.advance(1.0)
            if i % 2 == 0:
                telemetry.run_once()
            assert guard.run_once() is not None, guard.status()["last_error"]
            assert ordering.run_once() is not None, ordering.status()["last_error"]

    def vcores(self, name: str) -> dict[str, int]:
        with RMClient(RMClientConfig(urls=(self.rms.servers[name].url,), max_retries=0)) as c:
            return {n.id: n.total_resource.vcores for n in c.list_nodes()}

    def get(self, path: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(self.app.admin.url + path, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def metric(self, name: str, **labels: str) -> float | None:
        return self.app.metrics.registry.get_sample_value(name, labels)


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.app.stop()
    r.east_proxy.cut()
    r.rms.stop()


def test_the_guard_acts_on_each_subcluster_through_its_own_rm(rig: Rig) -> None:
    start = rig.clock.now()
    rig.rms.workload("west").burn([N0, N1], BURN, start + 20, start + 10_000)
    rig.run(20)
    east_before, west_before = rig.vcores("east"), rig.vcores("west")
    assert all(v > 0 for v in east_before.values()) and east_before == west_before, "both harvested alike before the burn"
    rig.run(60)
    east, west = rig.vcores("east"), rig.vcores("west")
    assert all(west[n] < west_before[n] for n in (N0, N1)), f"west's burn must cut west's nodes: {west_before} -> {west}"
    assert east == east_before, "east's nodes are not west's: their capacity stays"
    # one store, the same host:port in two clusters kept apart
    assert {"east/" + N0, "east/" + N1, "west/" + N0, "west/" + N1} <= set(rig.app.store.node_ids())
    # metrics labelled by sub-cluster
    for name in ("east", "west"):
        assert rig.metric("harvester_subcluster_polls_total", subcluster=name, outcome="ok") == 40
        assert rig.metric("harvester_subcluster_nodes", subcluster=name, state="RUNNING") == 2
    assert rig.metric("harvester_subcluster_harvested_vcores", subcluster="east") == sum(east.values())
    assert rig.metric("harvester_subcluster_harvested_vcores", subcluster="west") == sum(west.values())
    assert rig.metric("harvester_subcluster_actions_total", subcluster="west", kind="set_capacity", fate="sent") >= 3
    assert rig.metric("harvester_harvest_node_vcores", node="west/" + N0) == west[N0]
    # /status lists both
    status = rig.app.status()["cluster"]["subclusters"]
    assert [(s["name"], s["last_poll_ok"], s["nodes"]) for s in status] == [("east", True, 2), ("west", True, 2)]


def test_explain_node_names_its_subcluster(rig: Rig) -> None:
    start = rig.clock.now()
    rig.rms.workload("west").burn([N0], BURN, start + 10, start + 10_000)
    rig.run(50)
    status, doc = rig.get("/v1/explain/node?id=" + urllib.parse.quote("west/" + N0))
    assert status == 200 and doc["subcluster"] == "west" and doc["rm_urls"] == [rig.rms.servers["west"].url + "/"]
    assert doc["summary"][0].startswith("sub-cluster west (RM http://127.0.0.1:")
    assert doc["decisions"] and all(d["node_id"] == "west/" + N0 for d in doc["decisions"])
    status, east = rig.get("/v1/explain/node?id=" + urllib.parse.quote("east/" + N0))
    assert status == 200 and east["subcluster"] == "east" and east["now"]["capacity_after"] != doc["now"]["capacity_after"]
    # a bare host:port is in both: not guessed, both offered
    status, err = rig.get("/v1/explain/node?id=" + urllib.parse.quote(N0))
    assert status == 404 and {"east/" + N0, "west/" + N0} <= set(err["did_you_mean"])


def test_each_rm_plugin_gets_its_subclusters_node_order(rig: Rig) -> None:
    start = rig.clock.now()
    rig.rms.workload("west").burn([N0], BURN, start + 10, start + 10_000)
    rig.run(40)
    docs = {}
    for name in ("east", "west"):
        status, docs[name] = rig.get(f"/v1/yarn/node-ordering?subcluster={name}&wait=0")
        assert status == 200 and docs[name]["schema"] == "harvester.node-ordering.v1"
        ids = {n for o in docs[name]["orderings"].values() for n in o["node_ids"]}
        assert ids and ids <= {N0, N1}, f"{name}: ids as its RM names them, its own nodes only: {ids}"
    # west's N0 is burnt (no capacity): east advises both its nodes, west at most N1
    assert {n for o in docs["east"]["orderings"].values() for n in o["node_ids"]} == {N0, N1}
    assert N0 not in {n for o in docs["west"]["orderings"].values() for n in o["node_ids"]}
    status, err = rig.get("/v1/yarn/node-ordering")
    assert status == 400 and err["subclusters"] == ["east", "west"]
    status, err = rig.get("/v1/yarn/node-ordering?subcluster=north")
    assert status == 404 and "no such sub-cluster" in err["error"]
    # gRPC GetNodeOrdering answers the same documents
    with grpc.insecure_channel(rig.app.grpc.address) as channel:
        stub = yarn_advisor_pb2_grpc.YarnAdvisorStub(channel)
        for name in ("east", "west"):
            got = stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(
                subcluster=name, job_type=yarn_advisor_pb2.JOB_TYPE_LONG))
            assert list(got.node_ids) == docs[name]["orderings"]["long"]["node_ids"]
            assert got.version == docs[name]["version"]
        estate = stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(job_type=yarn_advisor_pb2.JOB_TYPE_LONG))
        assert set(estate.node_ids) == {f"{name}/{n}" for name in ("east", "west")
                                        for n in docs[name]["orderings"]["long"]["node_ids"]}
        with pytest.raises(grpc.RpcError) as err:
            stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(subcluster="north", job_type=yarn_advisor_pb2.JOB_TYPE_LONG))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND and "east, west" in err.value.details()


def test_a_subcluster_whose_rm_is_down_gets_no_action_while_the_other_goes_on(rig: Rig) -> None:
    rig.run(20)
    rig.east_proxy.cut()
    start = rig.clock.now()
    rig.rms.workload("west").burn([N0, N1], BURN, start + 2, start + 10_000)
    west_before = rig.vcores("west")
    rig.run(40)
    assert rig.app.loop("telemetry").status()["last_error"] is None, "one sub-cluster down does not fail the poll"
    assert all(v < west_before[n] for n, v in rig.vcores("west").items())
    assert rig.metric("harvester_subcluster_polls_total", subcluster="east", outcome="error") == 20
    assert rig.metric("harvester_subcluster_telemetry_age_seconds", subcluster="east") >= 38
    east = next(s for s in rig.app.status()["cluster"]["subclusters"] if s["name"] == "east")
    assert east["last_poll_ok"] is False and "RM poll failed" in east["error"]
    decision = rig.app.state.view().guard
    assert decision is not None and {v.node_id.partition("/")[0] for v in decision.nodes} == {"west"}


def test_kills_reach_the_rm_of_the_containers_subcluster() -> None:
    rig = Rig({"kill_mechanism": "signals", "kill_when": "reserve_used"})
    try:
        apps = {name: rig.rms.workload(name).distributed_shell(workers=8, duration_s=3600).app_id for name in ("east", "west")}
        rig.run(20)

        ams: dict[str, str] = {}

        def live(name: str) -> set[str]:
            with RMClient(RMClientConfig(urls=(rig.rms.servers[name].url,), max_retries=0)) as c:
                (attempt,) = c.list_app_attempts(apps[name])
                ams[name] = attempt.container_id
                return {x.container_id for x in c.list_containers(apps[name], attempt.attempt_id) if x.state != "COMPLETE"}

        before = {name: live(name) for name in apps}
        assert len(before["east"]) == len(before["west"]) == 9, before
        start = rig.clock.now()
        rig.rms.workload("west").burn([N0, N1], BURN, start + 1, start + 10_000)
        rig.run(40)
        assert live("east") == before["east"], "east's containers are not west's"
        gone = before["west"] - live("west") - {ams["west"]}  # the DS AM ends when its workers have
        assert gone, "the burn on west must kill some of west's containers"
        kills = [e for e in rig.app.state.guard_status().recent if e.kind == "kill"]
        assert kills and all(e.target.startswith("west/container_") for e in kills)
        assert {e.target.partition("/")[2] for e in kills if e.fate == "sent"} >= gone, "each one a kill sent to west's RM"
    finally:
        rig.app.stop()
        rig.east_proxy.cut()
        rig.rms.stop()

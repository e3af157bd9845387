"""harvester/subclusters.py's parts alone: qualified node ids, the merged poll of several
sub-clusters (a failing one contributes nothing, all failing fails the poll) and the actuator
routing each action to its sub-cluster's RM with the id as that RM names it."""

from __future__ import annotations

from typing import Sequence

import pytest
from prometheus_client import CollectorRegistry

from harvester.domain import (
    Action, ActionError, ClusterSnapshot, ContainerInfo, KillContainer, NodeSample, Resources, SetNodeCapacity,
)
from harvester.loop.node_ordering import unqualified
from harvester.decisions.node_ordering import NodeOrder
from harvester.models.job_history import JobType
from harvester.observability.metrics import Metrics
from harvester.subclusters import FederatedSource, RoutingActuator, qualify, split
from harvester.telemetry.source import TelemetryError

N = "nm-00000:45454"


def _node(node_id: str, t: float) -> NodeSample:
    return NodeSample(node_id=node_id, time=t, state="RUNNING", rack="/r", hostname=node_id.partition(":")[0],
                      total=Resources(8192, 8), used=Resources(0, 0), num_containers=0, node_cpu_cores=1.0,
                      containers_cpu_vcores=0.0, node_memory_mb=1000.0, containers_memory_mb=0.0)


class Source:
    def __init__(self, name: str, fail: bool = False) -> None:
        self.name, self.fail = name, fail

    def poll(self, now: float) -> ClusterSnapshot:
        if self.fail:
            raise TelemetryError(f"RM poll failed: {self.name} refused")
        c = ContainerInfo(container_id=f"container_{self.name}_01", app_id="app_1", node_id=N,
                          resources=Resources(1024, 1), started_at=now - 5, is_am=False, priority=0)
        return ClusterSnapshot(time=now, source=self.name, nodes=(_node(N, now),), containers=(c,), containers_complete=True)


class Recorder:
    def __init__(self, refuse: bool = False) -> None:
        self.got: list[Action] = []
        self.refuse = refuse
        self.errors: list[ActionError] = []

    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]:
        self.got += actions
        if self.refuse:
            self.errors += [ActionError(a, 1.0, "refused") for a in actions]
            return []
        return list(actions)

    def poll_errors(self) -> list[ActionError]:
        out, self.errors = self.errors, []
        return out


def test_qualified_ids_split_back() -> None:
    assert qualify("east", N) == "east/" + N and split("east/" + N) == ("east", N) and split(N) == (None, N)


def test_the_merged_poll_qualifies_ids_and_drops_a_failing_subcluster() -> None:
    m = Metrics(CollectorRegistry())
    src = FederatedSource({"east": Source("east"), "west": Source("west")}, m)
    snap = src.poll(100.0)
    assert sorted(n.node_id for n in snap.nodes) == ["east/" + N, "west/" + N]
    assert sorted(c.node_id for c in snap.containers) == ["east/" + N, "west/" + N] and snap.containers_complete
    assert sorted(c.container_id for c in snap.containers) == ["east/container_east_01", "west/container_west_01"]
    src._sources["west"] = Source("west", fail=True)
    snap = src.poll(110.0)
    assert [n.node_id for n in snap.nodes] == ["east/" + N]
    assert not snap.containers_complete, "a missing sub-cluster's containers cannot be proven gone"
    assert src.states()["west"].ok is False and src.states()["west"].last_good == 100.0
    assert m.registry.get_sample_value("harvester_subcluster_telemetry_age_seconds", {"subcluster": "west"}) == 10.0
    src._sources["east"] = Source("east", fail=True)
    with pytest.raises(TelemetryError, match="every sub-cluster's poll failed"):
        src.poll(120.0)
    src.close()


def test_actions_go_to_their_subclusters_rm_with_its_own_ids_and_errors_come_back_qualified() -> None:
    east, west = Recorder(), Recorder(refuse=True)
    act = RoutingActuator({"east": east, "west": west}, Metrics(CollectorRegistry()))
    cap = SetNodeCapacity(node_id="east/" + N, resources=Resources(8192, 4), reason="r", data_at=1.0)
    kill = KillContainer(node_id="west/" + N, container_id="west/container_w_01", graceful=True, reason="r", data_at=1.0)
    stray = SetNodeCapacity(node_id="north/" + N, resources=Resources(8192, 4), reason="r", data_at=1.0)
    sent = act.apply([cap, kill, stray], "t1")
    assert sent == [cap] and sent[0] is cap, "what was sent is reported as the guard decided it"
    assert [a.node_id for a in east.got] == [N] and [(a.node_id, a.container_id) for a in west.got] == [(N, "container_w_01")]
    errors = act.poll_errors()
    assert sorted(e.action.node_id for e in errors) == ["north/" + N, "west/" + N]
    assert next(e for e in errors if e.action.node_id == "west/" + N).action.container_id == "west/container_w_01"


def test_a_subclusters_node_order_holds_its_nodes_as_its_rm_names_them() -> None:
    orders = {JobType.SHORT: NodeOrder(JobType.SHORT, ("east/a:1", "west/a:1", "east/b:1"), "why")}
    assert unqualified(orders, "east")[JobType.SHORT].node_ids == ("a:1", "b:1")
    assert unqualified(orders, "west")[JobType.SHORT].node_ids == ("a:1",)


def test_harvester_rm_asks_the_subcluster_named(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from harvester.cli import main
    from harvester.clock import SimClock
    from harvester.emulator.subclusters import start_subclusters

    with start_subclusters(SimClock(start=1_795_430_000.0), ["east", "west"], size=1, prefix="e") as rms:
        rms.workload("west").add_cluster(1, prefix="w")  # west has one more node of its own
        cfg = tmp_path / "h.yaml"
        cfg.write_text(json.dumps({"cluster": {"source": "rm"}, "store": {"backend": "memory"},
                                   "rm": {"clusters": [{"name": n, "urls": [u]} for n, u in rms.urls().items()]}}))
        assert main(["rm", "nodes", "--config", str(cfg), "--subcluster", "west", "--json"]) == 0
        assert sorted(n["id"] for n in json.loads(capsys.readouterr().out)) == ["e-00000:45454", "w-00000:45454"]
        assert main(["rm", "nodes", "--config", str(cfg)]) == 2
        assert "name one with --subcluster" in capsys.readouterr().err


class Hung(Source):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        import threading

        self.release = threading.Event()

    def poll(self, now: float) -> ClusterSnapshot:
        self.release.wait(10)
        return super().poll(now)


def test_a_hung_rm_does_not_hold_the_others_back() -> None:
    hung = Hung("west")
    src = FederatedSource({"east": Source("east"), "west": hung}, Metrics(CollectorRegistry()), wait_s=0.2)
    try:
        assert [n.node_id for n in src.poll(100.0).nodes] == ["east/" + N]
        assert "no answer within 0.2 s" in (src.states()["west"].error or "")
        assert [n.node_id for n in src.poll(110.0).nodes] == ["east/" + N]
        assert "previous poll has not answered yet" in (src.states()["west"].error or ""), "not asked twice at once"
        hung.release.set()
        src._running["west"].result(timeout=10)  # the late answer (of t=100) lands; it is dropped, west is asked again
        snap = src.poll(120.0)
        assert sorted(n.node_id for n in snap.nodes) == ["east/" + N, "west/" + N]
        assert {n.time for n in snap.nodes} == {120.0}
    finally:
        hung.release.set()
        src.close()


def test_a_federated_apps_parts_in_several_subclusters_are_one_run() -> None:
    from harvester.models.job_history import JobRun
    from harvester.subclusters import merge_runs

    home = JobRun("etl", "application_1_0001", 100.0, 400.0, peak_containers=10, container_seconds=2000.0,
                  queue="root.etl", final_status="SUCCEEDED")
    part = JobRun("etl-uam", "application_1_0001", 130.0, 450.0, peak_containers=4, container_seconds=500.0)
    other = JobRun("ml", "application_2_0007", 120.0, 200.0, peak_containers=2)
    merged = {r.app_id: r for r in merge_runs([part, other, home])}
    run = merged["application_1_0001"]
    assert (run.job_name, run.queue, run.final_status) == ("etl", "root.etl", "SUCCEEDED"), "the home part names it"
    assert (run.started_at, run.finished_at, run.peak_containers, run.container_seconds) == (100.0, 450.0, 14, 2500.0)
    assert merged["application_2_0007"] == other

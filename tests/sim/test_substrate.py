"""Kill and re-run semantics of the YARN substrate, against hand-computed tiny cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simrig import job, make_rig  # type: ignore[import-not-found]
from harvester.domain import Resources
from harvester.sim.policies import ClusterView, JobOutcome, PlacementRequest, PolicyError
from harvester.sim.workload import JobSpec, StageSpec


def test_primary_spike_kills_youngest_exactly_enough_and_tasks_rerun() -> None:
    """1 node, 4 cores = 4 vcores, primary-aware with no reserve and no RM kill (overCommitTimeout
    -1), the substrate's own kill 5 s after an overload.

    A: 2 x 100 s at t=0; B: 2 x 100 s at t=10. At t=50 the primary takes 2.5 cores: 2.5 + 4 > 4,
    so the server is shared per process (weight 1): the primary gets 4 x 2.5 / 6.5, the batch the
    rest, every task at speed s = (4 − 10/6.5) / 4. At t=55 the substrate kills the youngest until
    2.5 + batch <= 4 (B2, B1, A2), which lose what they burned (A2: 50 + 5s, B: 40 + 5s). A1 is
    back at full speed and ends at 55 + (100 − 50 − 5s); A2 re-runs on the next heartbeat; at
    t=120 the primary is back to 0 and B1, B2 re-run. B ends at 220.
    """
    rig = make_rig(params={"reserve_fraction": 0.0, "overcommit_timeout_ms": -1})
    rig.primary(0.0, [0.0])
    rig.submit(job("A", 0.0, [100, 100]))
    rig.submit(job("B", 10.0, [100, 100]))
    rig.primary(50.0, [2.5])
    rig.primary(120.0, [0.0])
    rig.run(54.9)
    assert len(rig.model.containers) == 4
    rig.run(55.0)
    killed_at_55 = sorted(set(f"container_1_000{a}_01_00000{n}" for a in (1, 2) for n in (1, 2)) - set(rig.model.containers))
    assert killed_at_55 == ["container_1_0001_01_000002", "container_1_0002_01_000001", "container_1_0002_01_000002"]
    rig.run(1000.0)
    st = rig.stats
    assert st.kills == {"primary": 3, "rm_overcommit": 0, "controller": 0, "reimage": 0}
    speed = (4 - 4 * 2.5 / 6.5) / 4
    assert st.wasted_cpu_s == pytest.approx((50 + 5 * speed) + 2 * (40 + 5 * speed))
    assert st.unserved_core_s == pytest.approx((2.5 - 4 * 2.5 / 6.5) * 5) and st.overflow_node_s == pytest.approx(5.0)
    assert st.slowed_core_s == pytest.approx(4 * (1 - speed) * 5)
    assert st.attempts == 7 and st.tasks_completed == 4
    assert st.useful_cpu_s == pytest.approx(400.0)
    a, b = rig.record("A"), rig.record("B")
    a1_end = 55 + (100 - 50 - 5 * speed)
    assert (a.start_s, a.kills, a.attempts) == (0.0, 1, 3) and a.finish_s == pytest.approx(math.ceil(a1_end) + 100)
    assert (b.start_s, b.finish_s, b.kills, b.attempts) == (10.0, 220.0, 2, 4)
    assert a.wasted_cpu_s == pytest.approx(50 + 5 * speed) and b.wasted_cpu_s == pytest.approx(2 * (40 + 5 * speed))
    assert rig.model.containers == {} and rig.substrate.pending_tasks == 0


def test_stock_yarn_keeps_placing_on_the_primary_and_keeps_killing() -> None:
    """Stock YARN offers the whole server: after a kill it re-places on the freed vcores at the next
    heartbeat, the primary needs them again, and the youngest are killed again until it drops."""
    rig = make_rig(policy="stock-yarn")
    rig.primary(0.0, [0.0])
    rig.submit(job("A", 0.0, [100, 100, 100, 100]))
    rig.primary(50.0, [2.5])
    rig.primary(120.0, [0.0])
    rig.run(1000.0)
    st = rig.stats
    assert st.kills["primary"] > 3 and st.kills_total == st.kills["primary"]
    assert st.tasks_completed == 4 and st.attempts == 4 + st.kills_total
    assert rig.record("A").finish_s is not None
    # overloaded from t=50 until the primary drops at t=120: every kill is followed by a
    # re-placement at the same heartbeat, so the primary is never fully served in between
    assert st.overflow_node_s == pytest.approx(70.0)
    assert 0 < st.unserved_core_s <= 2.5 * 70.0


def test_dag_stage_waits_for_its_parents() -> None:
    rig = make_rig(params={"reserve_fraction": 0.0})
    rig.primary(0.0, [0.0])
    spec = JobSpec("D", 0.0, (StageSpec("map", np.array([10.0, 30.0])), StageSpec("reduce", np.array([5.0]), parents=(0,))))
    rig.submit(spec)
    rig.run(100.0)
    rec = rig.record("D")
    assert rec.finish_s == 35.0, "reduce starts at the next heartbeat after the last map (t=30) and runs 5 s"


def test_capacity_cut_with_timeout_makes_the_rm_kill_youngest() -> None:
    rig = make_rig(params={"reserve_fraction": 0.0, "overcommit_timeout_ms": 3000})
    rig.primary(0.0, [0.0])
    rig.submit(job("A", 0.0, [100, 100, 100]))
    rig.submit(job("B", 5.0, [100]))
    rig.primary(20.0, [1.5])  # capacity floor(4 - 1.5) = 2 < 4 allocated; RM kills at 23 s
    rig.run(22.9)
    assert rig.stats.kills_total == 0
    rig.run(23.0)
    assert rig.stats.kills["rm_overcommit"] == 2
    assert rig.model.allocated(0) == Resources(2048, 2)
    remaining = {c.app_id for c in rig.model.containers.values()}
    assert remaining == {"application_1_0001"}, "B's container (youngest) went first"


def test_reimage_loses_containers_and_the_node_takes_nothing_until_back() -> None:
    rig = make_rig(nodes=1, params={"reserve_fraction": 0.0})
    rig.primary(0.0, [0.0])
    rig.submit(job("A", 0.0, [100, 100]))
    rig.run(10.0)
    rig.substrate.node_down(0, 10.0)
    assert rig.stats.kills["reimage"] == 2 and not rig.model.running[0]
    rig.run(500.0)
    assert rig.stats.attempts == 2, "nothing is placed on a node that is down"
    rig.substrate.node_up(0, 500.0)
    rig.run(1000.0)
    assert rig.record("A").finish_s == 600.0
    assert rig.stats.wasted_cpu_s == pytest.approx(20.0)


class _Greedy:
    """A bad policy: always puts everything on node 0."""

    name = "greedy"

    def capacity(self, view: ClusterView) -> None:
        return None

    def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        return np.zeros(request.count, dtype=np.int64)

    def job_finished(self, outcome: JobOutcome) -> None:
        return None


def test_a_policy_that_overfills_a_node_is_an_error() -> None:
    rig = make_rig(policy=_Greedy())
    rig.submit(job("A", 0.0, [10] * 5))
    with pytest.raises(PolicyError, match="greedy placed 5 x 1 vcores"):
        rig.run(5.0)


def test_finished_jobs_are_reported_to_the_policy() -> None:
    seen: list[JobOutcome] = []

    class Recording(_Greedy):
        def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray:
            return np.flatnonzero(view.free_vcores >= request.vcores)[: request.count]

        def job_finished(self, outcome: JobOutcome) -> None:
            seen.append(outcome)

    rig = make_rig(nodes=3, policy=Recording())
    rig.submit(job("A", 0.0, [10, 20, 30]))
    rig.run(100.0)
    assert [(o.job_id, o.duration_s, o.tasks, o.kills) for o in seen] == [("A", 30.0, 3, 0)]
    assert rig.model.containers == {}, "ended containers are forgotten (bounded memory)"


@pytest.mark.parametrize("policy", ["stock-yarn", "primary-aware"])
def test_the_views_nodes_without_room_match_the_free_arrays(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The substrate keeps `no_room` as it refreshes free capacity (task ends, starts, kills,
    capacity updates, reimages): at every pass it is exactly "no free vcores or no free memory"."""
    from pathlib import Path

    from harvester.sim.policies import HeartbeatOrderPolicy
    from harvester.sim.scenario import load_scenario
    from harvester.sim.simulation import Simulation

    checked = []
    original = HeartbeatOrderPolicy._heartbeats

    def checking(self: HeartbeatOrderPolicy, view: ClusterView) -> np.ndarray:
        if view is not self._view:
            assert view.no_room is not None
            assert np.array_equal(view.no_room, (view.free_vcores <= 0) | (view.free_memory_mb <= 0))
            checked.append(int(view.no_room.sum()))
        return original(self, view)

    monkeypatch.setattr(HeartbeatOrderPolicy, "_heartbeats", checking)
    scenarios = Path(__file__).resolve().parents[2] / "deploy" / "scenarios"
    over: dict[str, object] = {"cluster.servers": 200, "tenants.count": 10, "workload.synthetic.jobs": 100,
                               "duration_s": 21600, "policy.name": policy, "outputs.plots": False, "outputs.csv": False}
    if policy != "primary-aware":
        over["policy.params"] = {}
    result = Simulation(load_scenario(scenarios / "bench-10k.yaml", over), base_dir=scenarios).run()
    assert len(checked) > 100 and max(checked) > 0 and result.stats.tasks_completed > 0


def test_next_finishes_of_many_nodes_equal_one_call_per_node() -> None:
    """The vectorized reschedule (a primary step moves thousands of speeds) gives the same bits."""
    from harvester.sim.sharing import NodeClocks

    rng = np.random.default_rng(9)
    n = 300
    clocks = NodeClocks(n)
    dead: set[int] = set()
    item = 0
    for now in (10.0, 37.5, 80.25):
        for node in rng.integers(0, n, 400).tolist():
            item += 1
            clocks.add(node, now, float(rng.uniform(0.5, 500.0)), item)
            if rng.random() < 0.2:
                dead.add(item)  # killed: dropped lazily from the heaps
        nodes = np.unique(rng.integers(0, n, 200))
        speeds = rng.choice([1.0, 0.37, 1e-12, 0.0, 0.81], nodes.size)  # incl. stalled nodes
        clocks.set_speeds(nodes, speeds, now)
        alive = lambda x: x not in dead  # noqa: E731
        nodes = np.arange(n)
        got = clocks.next_finishes(nodes, now + 1.0, alive)
        want = [clocks.next_finish(node, now + 1.0, alive) for node in nodes.tolist()]
        assert got.tolist() == want and math.inf in want

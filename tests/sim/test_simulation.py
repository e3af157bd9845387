"""Whole runs: determinism for a seed, the controller's loops through the ports, reimages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from harvester.domain import Action, ActionError, ClusterSnapshot, KillContainer, Resources, SetNodeCapacity
from harvester.loop.runner import LoopSpec, TickResult
from harvester.sim.controller import ControllerContext
from harvester.sim.metrics.report import summarize
from harvester.sim.scenario import parse_scenario
from harvester.sim.simulation import Simulation


def tiny(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "tiny", "seed": 3, "duration_s": 7200, "drain_s": 1800, "start_time": 1375315200,
        "cluster": {"servers": 30, "cores": 8},
        "tenants": {"count": 5, "history_s": 3600,
                    "mean_utilization": {"periodic": 0.5, "constant": 0.4, "unpredictable": 0.3}},
        "workload": {"synthetic": {"jobs": 40, "max_tasks_per_stage": 20}, "target_utilization": 0.5,
                     "allow_rescaled_durations": True},
        "policy": {"name": "stock-yarn"},
        "substrate": {"reaction_delay_s": 5},  # the substrate's own kill: these runs exercise kills
        "outputs": {"plots": False, "csv": False},
    }
    for k, v in over.items():
        data[k] = v
    return data


def fingerprint(result: Any) -> tuple[Any, ...]:
    s = summarize(result)
    for k in ("wall_s", "build_s", "events_per_s", "peak_rss_mb"):
        s.pop(k)
    jobs = [(j.job_id, j.start_s, j.finish_s, j.attempts, j.kills, round(j.wasted_cpu_s, 9)) for j in result.stats.jobs]
    return (s, jobs, result.stats.utilization)


def test_same_seed_same_results_different_seed_different_results() -> None:
    a = fingerprint(Simulation(parse_scenario(tiny())).run())
    b = fingerprint(Simulation(parse_scenario(tiny())).run())
    c = fingerprint(Simulation(parse_scenario(tiny(seed=4))).run())
    assert a == b
    assert a != c
    assert a[0]["jobs_finished"] > 0 and a[0]["task_kills"] > 0, "the tiny run exercises kills"


def test_primary_aware_protects_the_primary_better_than_stock_yarn() -> None:
    stock = summarize(Simulation(parse_scenario(tiny())).run())
    aware = summarize(Simulation(parse_scenario(tiny(policy={"name": "primary-aware"}))).run())
    assert aware["task_kills"] < stock["task_kills"]
    assert aware["primary_not_served_core_hours"] < stock["primary_not_served_core_hours"]


class Throttle:
    """A tiny controller written here, one loop: poll, take the last tick's failures, drain nodes
    whose primary uses more than half the cores (capacity 0, the RM kills after 0 ms), and ask
    once to kill a container that does not exist."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.snapshots: list[ClusterSnapshot] = []
        self.errors: list[ActionError] = []
        self.loops = [LoopSpec("throttle", ctx.period_s, self.tick)]

    def tick(self, now: float) -> TickResult:
        snapshot = self.ctx.source.poll(now)
        self.snapshots.append(snapshot)
        self.errors.extend(self.ctx.actuator.poll_errors())
        actions: list[Action] = []
        if len(self.snapshots) == 1:
            actions.append(KillContainer(container_id="container_nope", node_id="x", reason="test"))
        for n in snapshot.nodes:
            primary = (n.node_cpu_cores or 0.0) - (n.containers_cpu_cores or 0.0)
            if n.state == "RUNNING" and primary > 0.5 * (n.physical_cores or 0) and n.total.vcores > 0:
                actions.append(SetNodeCapacity(node_id=n.node_id, resources=Resources(n.total.memory_mb, 0),
                                               overcommit_timeout_ms=0, reason=f"primary {primary:.1f} cores"))
        sent = self.ctx.actuator.apply(actions, f"throttle-{now:.0f}")
        return TickResult({"sent": len(sent)})


def test_controller_loops_run_through_the_ports_every_period() -> None:
    made: list[Throttle] = []

    def factory(params: Any, ctx: ControllerContext) -> Throttle:
        made.append(Throttle(ctx))
        return made[-1]

    sc = parse_scenario(tiny(controller={"factory": "unused:unused", "period_s": 600}))
    sim = Simulation(sc, controller=factory)
    result = sim.run()
    (ctl,) = made
    assert [s.time - sc.start_time for s in ctl.snapshots] == [600.0 * k for k in range(1, 16)]
    snap = ctl.snapshots[0]
    assert len(snap.nodes) == 30 and snap.containers_complete
    assert {c.node_id for c in snap.containers} <= {n.node_id for n in snap.nodes}
    assert [e.error for e in ctl.errors] == ["container container_nope is not running"]
    st = result.stats
    assert st.controller_ticks == 15 and st.controller_actions > 0 and st.controller_errors == 1
    assert st.kills["rm_overcommit"] > 0, "draining busy nodes made the RM kill the youngest containers"


def test_telemetry_reports_the_nm_units() -> None:
    sim = Simulation(parse_scenario(tiny()))
    sim.run()
    from harvester.sim.ports import SimTelemetrySource

    snap = SimTelemetrySource(sim.model).poll(123.0)
    m = sim.model
    n = snap.nodes[0]
    assert snap.time == 123.0 and n.time == 123.0
    assert n.total == m.capacity(0) and n.used == m.allocated(0)
    assert n.node_cpu_cores == pytest.approx(min(8.0, m.primary_cpu[0] + m.container_cpu[0]))
    assert n.containers_cpu_cores == pytest.approx(m.container_cpu[0])
    assert n.physical_cores == 8.0


def test_reimages_from_the_osdi16_generator_reach_the_run() -> None:
    sc = parse_scenario(tiny(reimage={"enabled": True, "downtime_s": 600,
                                      "params": {"rate_quantiles": [[0.0, 20.0], [1.0, 30.0]]}}))
    sim = Simulation(sc)
    assert sim.reimages is not None and sim.reimages.times_s.size > 0
    result = sim.run()
    assert result.stats.reimages == int(np.sum(sim.reimages.times_s < sc.duration_s + sc.drain_s))
    assert "not to a real log" in result.sources["reimage"]

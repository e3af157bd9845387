"""One control path (DESIGN.md principle 15): the loops `harvester serve` builds (harvester/app.py,
the live composition root) ticked by the simulator on its ports send exactly the actions the
evaluation path (`controller.factory: harvester.sim.live:loops`) sends, tick for tick."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from prometheus_client import CollectorRegistry

from harvester.actuators.port import Actuator
from harvester.app import Harvester
from harvester.domain import Action, ActionError
from harvester.loop.runner import LoopSpec, TickResult
from harvester.sim.controller import ControllerContext
from harvester.sim.live import DAY_S, RAW_DAYS, backfill, backfill_primary, loops, sim_settings
from harvester.sim.metrics.report import summarize
from harvester.sim.scenario import parse_scenario
from harvester.sim.simulation import Simulation
from ports import on_free_ports

SCENARIO: dict[str, Any] = {
    "name": "live-root", "seed": 2, "duration_s": 2 * 3600, "drain_s": 1800, "step_s": 120, "start_time": 1375315200,
    "cluster": {"servers": 24, "cores": 16},
    "tenants": {"count": 6, "history_s": 2 * 86400,
                "mean_utilization": {"periodic": 0.45, "constant": 0.4, "unpredictable": 0.45}},
    "workload": {"synthetic": {"jobs": 80, "max_tasks_per_stage": 30}, "target_utilization": 0.45,
                 "target_basis": "cluster", "allow_rescaled_durations": True},
    "policy": {"name": "harvester.sim.harvest:algorithm1", "params": {}},
    "controller": {"factory": "harvester.sim.live:loops", "period_s": 10, "offset_s": 6, "include_containers": False},
    "outputs": {"plots": False, "csv": False},
}


class Tap:
    """An `Actuator` that records (time, action) of every action it passes on."""

    def __init__(self, inner: Actuator, now: Any) -> None:
        self.inner, self.now = inner, now
        self.sent: list[tuple[float, Action]] = []

    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]:
        sent = self.inner.apply(actions, request_id)
        self.sent += [(self.now(), a) for a in sent]
        return sent

    def poll_errors(self) -> list[ActionError]:
        return self.inner.poll_errors()


class LiveRoot:
    """Controller: the composition root `Harvester` over the simulator's ports; its own loop
    objects (`Harvester.loops`) are what the engine ticks, supervised as live (`run_once`)."""

    def __init__(self, ctx: ControllerContext, tap: Tap) -> None:
        policy: Any = ctx.policy
        settings = on_free_ports(sim_settings(policy.harvesting, ctx.sim, period_s=ctx.period_s, stale_after_s=30.0))
        backfill(ctx.store, ctx.sim, ctx.past)
        backfill_primary(ctx.store, ctx, RAW_DAYS * DAY_S)  # the raw samples a live store holds, as loops() writes them
        self.app = Harvester(settings, clock=ctx.clock, registry=CollectorRegistry(), source=ctx.source, actuator=tap,
                             store=ctx.store, job_runs=ctx.job_runs)
        policy.read_board(self.app.state)
        self.loops = [LoopSpec(loop.name, loop.interval_s, self._supervised(loop)) for loop in self.app.loops]

    @staticmethod
    def _supervised(loop: Any) -> Any:
        def tick(now: float) -> TickResult:
            result = loop.run_once()
            assert result is not None, f"loop {loop.name} failed: {loop.status()['last_error']}"
            return result
        return tick


def run(factory: Any) -> tuple[list[tuple[float, Action]], dict[str, Any], Any]:
    made: list[Any] = []

    def tapped(params: Mapping[str, Any], ctx: ControllerContext) -> Any:
        tap = Tap(ctx.actuator, ctx.clock.now)
        controller = factory(params, dataclasses.replace(ctx, actuator=tap))
        made.append((tap, controller))
        return controller

    sim = Simulation(parse_scenario(dict(SCENARIO)), controller=tapped)
    result = sim.run()
    (tap, controller), = made
    return tap.sent, summarize(result), controller


def test_the_live_root_loops_on_the_simulator_act_exactly_as_the_evaluation_path() -> None:
    evaluated, eval_summary, plane = run(loops)
    live, live_summary, root = run(lambda params, ctx: LiveRoot(ctx, ctx.actuator))
    assert [s.name for s in root.loops] == [s.name for s in plane.loops], "the same loops, in the same order"
    assert len(evaluated) > 50 and any(a.overcommit_timeout_ms == 0 for _, a in evaluated if hasattr(a, "resources"))
    assert live == evaluated, "every action (time, node, capacity, reason, stimulus) is the same"
    for key in ("jobs_finished", "task_kills", "task_kills_rm_overcommit", "job_time_mean_s", "controller_actions"):
        assert live_summary[key] == eval_summary[key], key

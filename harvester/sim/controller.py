"""The controller hook: control loops ticked by the engine on simulated time (DESIGN.md principle 15).

A controller is a set of loops, exactly what the live sidecar runs on threads:

    class Controller(Protocol):
        loops: Sequence[LoopSpec]          # (name, interval_s, tick(now) -> TickResult)

built by `factory(params: Mapping, context: ControllerContext)`; scenarios name the factory as
`package.module:factory`. `harvester.sim.live:loops` builds Harvester's own control plane
(harvester/control.py) — the same loop classes `harvester serve` runs — over the simulated
ports the context carries: the clock, a `TelemetrySource` (`SimTelemetrySource`), an
`Actuator` (`SimActuator`), a fresh history store (SQLite `:memory:`) and the finished jobs as
a job-run source (`SimJobRuns`). A loop polls, decides and acts through those ports itself.

`LoopDriver` runs them: every loop first at `controller.offset_s` (default: one period), then
every `interval_s` of its own; loops due at the same instant tick in the order listed (the
control plane lists them in data-flow order: telemetry before refit before guard). A tick that
raises stops the simulation (a simulated loop never swallows an exception).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from harvester.actuators.port import Actuator
from harvester.clock import Clock
from harvester.history.store import HistoryStore
from harvester.loop.job_runs import JobRunSource
from harvester.loop.runner import LoopSpec
from harvester.sim.metrics.collector import SimStats
from harvester.sim.plugins import load_callable
from harvester.sim.policies import PlacementPolicy, SimContext
from harvester.telemetry.source import TelemetrySource


class Controller(Protocol):
    @property
    def loops(self) -> Sequence[LoopSpec]: ...


@dataclass(frozen=True, slots=True, eq=False)
class ControllerContext:
    """What a controller factory is given: the static facts, the clock and the simulated ports.

    `past` is the [tenants × samples] average-server utilization BEFORE the run starts (oldest
    first, `sim.step_s` apart, the last sample one step before `sim.start_s`): the history a
    live store would hold when the sidecar starts (sim/live.py writes it as tenant slots).
    `period_s` is the scenario's `controller.period_s`. `policy` is the run's placement policy,
    so a controller and a policy that work together (Harvester's loops publishing the classes'
    state that the Algorithm 1 policy reads) can find each other. `past_primary(interval_s,
    seconds)` gives every server's primary utilization as a poll every `interval_s` would have
    read it during the last `seconds` before the start: (times, [polls × servers]) — the raw
    samples a live store holds (sim/live.py writes them as the store's primary vectors).
    """

    sim: SimContext
    clock: Clock
    source: TelemetrySource
    actuator: Actuator
    store: HistoryStore
    job_runs: JobRunSource
    past: np.ndarray
    period_s: float
    policy: PlacementPolicy | None = None
    past_primary: Callable[[float, float], tuple[np.ndarray, np.ndarray]] | None = None


ControllerFactory = Callable[[Mapping[str, Any], ControllerContext], Controller]


def resolve_controller(spec: str) -> ControllerFactory:
    return load_callable(spec, "controller")


class LoopDriver:
    """Ticks a controller's loops at their intervals from `first` on (see the module docstring)."""

    def __init__(self, loops: Sequence[LoopSpec], first: float, stats: SimStats) -> None:
        if not loops:
            raise ValueError("the controller has no loop")
        self.loops = tuple(loops)
        self.first = first
        self.stats = stats
        self._ticks = [0] * len(self.loops)  # loop i is next due at first + ticks[i] * interval_i

    def _due(self, i: int) -> float:
        return self.first + self._ticks[i] * self.loops[i].interval_s

    def next_due(self) -> float:
        return min(self._due(i) for i in range(len(self.loops)))

    def run_due(self, now: float) -> float:
        """Tick every loop due at `now` (in order); the time the next one is due. The engine calls
        it at exactly `next_due()`, so no tick is ever skipped."""
        for i, spec in enumerate(self.loops):
            if self._due(i) <= now:
                spec.tick(now)
                self._ticks[i] += 1
                self.stats.controller_ticks += 1
        return self.next_due()

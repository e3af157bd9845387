"""The periodic controller hook: Harvester's decision code run every control period.

Interface (what the harvesting helper implements, e.g. the reserve-and-kill guard):

    class Controller(Protocol):
        def tick(self, now: float, snapshot: ClusterSnapshot,
                 errors: Sequence[ActionError]) -> Sequence[Action]

Every `period_s` the driver polls the `TelemetrySource` (in the simulator `SimTelemetrySource`;
against the emulator or a real RM the REST one), hands the controller the snapshot and the
failures of its previous actions, and applies what it returns through the `Actuator` (in the
simulator `SimActuator`) — the live loop's decide/act cycle (DESIGN.md principles 2 and 5).
A controller is built by `factory(params: Mapping, context: ControllerContext)`; scenarios
name it as `package.module:factory`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np
from harvester.actuators.port import Actuator
from harvester.clock import Clock
from harvester.domain import Action, ActionError, ClusterSnapshot
from harvester.sim.metrics.collector import SimStats
from harvester.sim.plugins import load_callable
from harvester.sim.policies import PlacementPolicy, SimContext
from harvester.telemetry.source import TelemetrySource


class Controller(Protocol):
    def tick(self, now: float, snapshot: ClusterSnapshot, errors: Sequence[ActionError]) -> Sequence[Action]: ...


@dataclass(frozen=True, slots=True, eq=False)
class ControllerContext:
    """What a controller factory is given: the static facts, the clock, and node → tenant names.

    `tenant_history()` returns the same past-only [tenants × samples] average-server
    utilization matrix policies see (`ClusterView.tenant_history`, ending at the current
    step): the simulator's stand-in for the live history store a refit reads. `policy` is the
    run's placement policy, so a controller and a policy that work together (a guard that
    publishes the classes' state for Algorithm 1) can find each other.
    """

    sim: SimContext
    clock: Clock
    tenant_of_node: Mapping[str, str]
    tenant_history: Callable[[], np.ndarray] | None = None
    policy: PlacementPolicy | None = None


ControllerFactory = Callable[[Mapping[str, Any], ControllerContext], Controller]


def resolve_controller(spec: str) -> ControllerFactory:
    return load_callable(spec, "controller")


class ControllerDriver:
    """Poll → decide → apply, once per call to `tick` (the simulation calls it every period)."""

    def __init__(self, controller: Controller, source: TelemetrySource, actuator: Actuator, stats: SimStats) -> None:
        self.controller = controller
        self.source = source
        self.actuator = actuator
        self.stats = stats
        self.ticks = 0

    def tick(self, now: float) -> list[Action]:
        snapshot = self.source.poll(now)
        errors = self.actuator.poll_errors()
        actions = list(self.controller.tick(now, snapshot, errors))
        self.ticks += 1
        sent = self.actuator.apply(actions, f"sim-tick-{self.ticks}")
        self.stats.controller_ticks += 1
        self.stats.controller_actions += len(sent)
        self.stats.controller_errors += len(errors)
        return sent

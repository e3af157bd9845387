"""YARN-H in the simulator: Algorithm 1 as a placement policy and the guard as a controller.

Both call Harvester's real decision and model code (harvester/decisions, harvester/models);
nothing here re-implements a policy. Scenario names:

    policy:     {name: harvester.sim.harvest:algorithm1, params: {harvesting: {...}}}
    controller: {factory: harvester.sim.harvest:guard, period_s: 120, offset_s: 5}

`evaluate.py` runs the evaluation of docs/evaluation/harvesting.md
(`harvester evaluate harvesting`).
"""

from __future__ import annotations

from harvester.sim.harvest.guard import GuardController, guard
from harvester.sim.harvest.policy import Algorithm1Policy, GuardedHeartbeatPolicy, algorithm1, guard_only

__all__ = ["Algorithm1Policy", "GuardController", "GuardedHeartbeatPolicy", "algorithm1", "guard", "guard_only"]

"""YARN-H in the simulator: Algorithm 1 as a placement policy reading Harvester's live loops.

The loops (telemetry, refit, guard, jobs) are the live ones, built by the composition root's
control plane and ticked by the engine (`harvester.sim.live:loops`); the policy reads what they
publish on the state board. Nothing here re-implements a policy or re-sequences a loop.
Scenario names:

    policy:     {name: harvester.sim.harvest:algorithm1, params: {harvesting: {...}}}
    controller: {factory: harvester.sim.live:loops, period_s: 10, offset_s: 6}

`evaluate.py` runs the evaluation of docs/evaluation/harvesting.md
(`harvester evaluate harvesting`).
"""

from __future__ import annotations

from harvester.sim.harvest.policy import Algorithm1Policy, GuardedHeartbeatPolicy, algorithm1, guard_only

__all__ = ["Algorithm1Policy", "GuardedHeartbeatPolicy", "algorithm1", "guard_only"]

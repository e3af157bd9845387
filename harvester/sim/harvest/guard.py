"""The guard as the simulator's controller (OSDI'16 §2, §4.1; paper 004 §4) — decisions by the real code.

Every control period, like the live refit and guard ticks (harvester/loop/refit.py, guard.py):
1. refit the classes, margins and reserves when due (`HarvestModels.refit_if_due`, history
   only: the past-only tenant matrix of `ControllerContext.tenant_history`);
2. the failures of the last batch come back as data: failed signals end their kill records
   (`decisions.kills.record_failures`), a failed capacity update is forgotten as pushed;
3. kills in flight are reconciled with the snapshot (`decisions.kills.reconcile`);
4. `decisions.guard.evaluate(GuardContext(...))` — harvestable = cores − primary − reserve per
   node through the arbiter, and kills when the allocation no longer fits (by default the RM's
   own overcommit kill: the cut carries overCommitTimeout 0 ms, `harvesting.guard.kill_mechanism`);
5. the classes' current state (`decisions.class_view.class_states`, with this decision) is
   published for Algorithm 1;
6. the actions are returned; the simulator's driver applies them through `SimActuator`
   (`SetNodeCapacity` → the cluster model's node resource update with its overCommitTimeout,
   `KillContainer` → the substrate) and returns failures on the next tick. What is returned is
   recorded as sent (`record_sent`, last push per node); a failure arriving next tick undoes it.

Period: the primary's CPU changes only at each 2-minute sample in the simulator, but the guard
has work between samples too: a cut that did not need kills stops at the node's allocation
("never below what is already allocated unless killing"), so the capacity reaches its target
only as containers end, and increases wait `harvesting.guard.min_interval_s`. The evaluation
scenario runs it every 10 s, first 6 s after the first sample (the simulator's 5 s reaction
delay for the baselines' kills plus one heartbeat): 12 ticks per sample instead of the live
default's 24, with the same reaction to a spike.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from harvester.decisions.arbiter import PushRecord
from harvester.decisions.class_view import class_states
from harvester.decisions.guard import GuardContext, GuardDecision, evaluate
from harvester.decisions.kills import KillRecord, reconcile, record_failures, record_sent
from harvester.decisions.reserve import ReserveTable, resolve_reserves
from harvester.decisions.strategy import GuardStrategy, guard_strategy, reserve_policy
from harvester.domain import Action, ActionError, ClusterSnapshot, SetNodeCapacity
from harvester.sim.controller import ControllerContext
from harvester.sim.harvest.models import HarvestModels, harvesting_settings


class GuardController:
    """The sim `Controller` running the real guard (module docstring)."""

    def __init__(self, harvest: HarvestModels, strategy: GuardStrategy, history: Callable[[], np.ndarray]) -> None:
        self.harvest = harvest
        self.strategy = strategy
        self._history = history
        self._last_pushed: dict[str, PushRecord] = {}
        self.kills: dict[str, KillRecord] = {}
        self.finished_kills: list[KillRecord] = []
        self.outcomes: Counter[str] = Counter()
        self.last: GuardDecision | None = None
        self._seq = 0
        self._cold = resolve_reserves(None, (), reserve_policy(harvest.settings))
        harvest.guard_attached = True

    def tick(self, now: float, snapshot: ClusterSnapshot, errors: Sequence[ActionError]) -> Sequence[Action]:
        h = self.harvest
        h.refit_if_due(now, self._history())
        self.kills, failed = record_failures(self.kills, errors)
        self.finished_kills += failed
        for e in errors:
            if isinstance(e.action, SetNodeCapacity):
                self._last_pushed.pop(e.action.node_id, None)
        self.kills, gone = reconcile(self.kills, snapshot)
        self.finished_kills += gone
        fitted = h.fitted
        reserves: ReserveTable = fitted.reserves if fitted is not None else self._cold
        tenant_class = fitted.model.tenant_class_map() if fitted is not None else {}
        self._seq += 1
        decision = evaluate(GuardContext(now, snapshot, h.nodes, tenant_class, reserves, self.strategy,
                                         dict(self._last_pushed), dict(self.kills), f"sim-guard-{self._seq}"))
        self.last = decision
        self.outcomes.update(decision.outcomes())
        if fitted is not None:
            h.publish_classes(class_states(fitted.model, reserves, h.nodes, snapshot, now=now,
                                           stale_after_s=self.strategy.stale_after_s, guard=decision), now)
        actions = list(decision.actions)
        self.kills = record_sent(self.kills, actions, now)
        for a in actions:
            if isinstance(a, SetNodeCapacity):
                self._last_pushed[a.node_id] = PushRecord(a.resources, now)
        return actions


def guard(params: Mapping[str, Any], ctx: ControllerContext) -> GuardController:
    """Controller factory (`controller.factory: harvester.sim.harvest:guard`).

    With the history-based policy (`harvester.sim.harvest:algorithm1`) the guard shares that
    policy's models and settings (give `harvesting` to the policy, not here). With any other
    policy — e.g. the guard-only ablation with heartbeat placement — the guard fits its own,
    from params `harvesting` (the live `harvesting:` section) and `jobs_refit_s`.
    params: `stale_after_s` (default `harvesting.guard.stale_after_s`, else 30 s).
    """
    p = dict(params)
    harvest = getattr(ctx.policy, "harvest", None)
    if isinstance(harvest, HarvestModels):
        if "harvesting" in p or "jobs_refit_s" in p:
            raise ValueError("the guard shares the history-based policy's models: give harvesting settings to the policy")
    else:
        harvest = HarvestModels(ctx.sim, harvesting_settings(p.pop("harvesting", None), ctx.sim.step_s),
                                jobs_refit_s=float(p.pop("jobs_refit_s", 120.0)))
    stale = float(p.pop("stale_after_s", 30.0))
    if p:
        raise ValueError(f"unknown params {sorted(p)} (harvesting, jobs_refit_s, stale_after_s)")
    if ctx.tenant_history is None:
        raise ValueError("the guard needs the tenant history (ControllerContext.tenant_history)")
    strategy = guard_strategy(harvest.settings, telemetry_stale_after_s=stale)
    return GuardController(harvest, strategy, ctx.tenant_history)

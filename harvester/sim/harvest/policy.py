"""Algorithm 1 as the simulator's placement policy (OSDI'16 §4.1, YARN-H) — decisions by the real code.

For each job, on its first placement request:
1. line 3, J.type: `decisions.class_selection.characterize` with the job-history model refitted
   from the job's completed runs (`HarvestModels.jobs`; a job never seen before is medium);
2. line 4, J.req: the job's maximum concurrent containers from a breadth-first traversal of its
   DAG (`PlacementRequest.job_max_concurrent`, the same BFS as `models.job_history`);
3. lines 5–18: `decisions.class_selection.select_classes` over the classes the guard published
   (`decisions.class_view.class_states`: the model's pattern / average / peak, the class's
   current primary utilization, reserve and capacity), with the job's container size.
The job's containers then go only to nodes of the chosen classes, in the baseline's heartbeat
order restricted to those nodes (`HeartbeatOrderPolicy`: the node that heartbeats first takes
as many containers as fit, the CapacityScheduler's default); with several classes (line 13),
their nodes are pooled. The choice is kept for the whole job.

Simulator-specific choices (documented, not in the paper):
- Allocations in the class table are refreshed from the scheduler's own bookkeeping at every
  scheduling pass (`ClusterView.allocated_*`, free memory from `free_memory_mb`). The live
  SelectClasses reads the table the guard published at most one guard period (5 s) earlier;
  the simulated guard runs once per primary sample (2 min), so without the refresh every job
  of those 2 minutes would see the same, stale, allocation and crowd into one class.
- No class (line 16): the job waits and asks again `reselect_after_s` later (default 30 s).
- A running job whose classes have no room left for a pending stage asks again (at most once
  per `reselect_after_s`) with J.req = that stage's pending containers and moves its remaining
  containers to the new choice; containers already running stay where they are.
- Capacities belong to the guard (`harvester.sim.harvest.guard`): `capacity()` sets every node
  to 0 once at start (fail safe: nothing is harvested before the guard's first decision) and
  then never again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from harvester.decisions.class_selection import ClassTable, Selection, characterize, select_classes
from harvester.decisions.strategy import selection_strategy
from harvester.domain import Resources
from harvester.sim.harvest.models import HarvestModels, harvesting_settings
from harvester.sim.policies import (
    CapacityUpdate,
    ClusterView,
    HeartbeatOrderPolicy,
    JobOutcome,
    PlacementRequest,
    PolicyError,
    SimContext,
    fill_in_order,
)

EMPTY = np.empty(0, dtype=np.int64)


@dataclass
class JobPlan:
    """A job's current Algorithm 1 choice: the nodes it may use and when it may ask again."""

    selection: Selection
    nodes: np.ndarray          # bool per node
    retry_at: float


class GuardedHeartbeatPolicy(HeartbeatOrderPolicy):
    """Heartbeat-order placement on capacities the guard owns: nothing before its first decision
    (every node set to 0 once at start), never touched again. Alone, it is the guard-only
    ablation (primary-aware YARN with the real guard and no history in placement)."""

    name = "guard-only"

    def __init__(self, context: SimContext) -> None:
        super().__init__(context)
        self._sent = False

    def capacity(self, view: ClusterView) -> CapacityUpdate | None:
        if self._sent:
            return None
        self._sent = True
        zero = np.zeros(view.total_vcores.shape[0], dtype=np.int64)
        return CapacityUpdate(zero, zero.copy())


class Algorithm1Policy(GuardedHeartbeatPolicy):
    """YARN-H placement: Algorithm 1 per job, heartbeat order inside the chosen classes."""

    name = "history-based"

    def __init__(self, context: SimContext, harvest: HarvestModels, *, reselect_after_s: float = 30.0) -> None:
        super().__init__(context)
        if reselect_after_s <= 0:
            raise ValueError(f"reselect_after_s must be > 0, got {reselect_after_s}")
        self.harvest = harvest
        self.reselect_after_s = reselect_after_s
        self.selection = selection_strategy(harvest.settings)
        self._rng = np.random.default_rng([context.seed, 1])  # Algorithm 1's draws, apart from the substrate's
        self._plans: dict[str, JobPlan] = {}
        self._table_view: ClusterView | None = None
        self._table = ClassTable.of(())
        self.selections: list[tuple[float, str, Selection]] = []  # every answer, for reports and tests

    # --- PlacementPolicy ------------------------------------------------------------------

    def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        if not self.harvest.guard_attached:
            raise PolicyError("the history-based policy needs the guard controller "
                              "(controller.factory: harvester.sim.harvest:guard) to publish the classes")
        plan = self._plans.get(request.job_id)
        if plan is None or (not plan.selection.choices and view.now >= plan.retry_at):
            plan = self._select(request, view, request.job_max_concurrent)
            if plan is None:
                return EMPTY
        if not plan.selection.choices:
            return EMPTY
        order = self._heartbeats(view)
        order = order[plan.nodes[order]]
        slots = np.minimum(view.free_vcores[order] // request.vcores, view.free_memory_mb[order] // request.memory_mb)
        if not slots.any() and view.now >= plan.retry_at:
            moved = self._select(request, view, request.count)
            if moved is None or not moved.selection.choices:
                plan.retry_at = view.now + self.reselect_after_s
                return EMPTY
            order = self._heartbeats(view)
            order = order[moved.nodes[order]]
            slots = np.minimum(view.free_vcores[order] // request.vcores, view.free_memory_mb[order] // request.memory_mb)
        return fill_in_order(order, slots, request.count)

    def job_finished(self, outcome: JobOutcome) -> None:
        self._plans.pop(outcome.job_id, None)
        self.harvest.record_run(outcome)

    # --- Algorithm 1 ----------------------------------------------------------------------

    def _select(self, request: PlacementRequest, view: ClusterView, required: int) -> JobPlan | None:
        """Run lines 3–18 for the job now; None when no class model or state is published yet."""
        fitted = self.harvest.fitted
        if fitted is None or not self.harvest.classes:
            return None
        job = characterize(request.job_name, history=self.harvest.jobs(view.now),
                           fallback_thresholds=self.selection.fallback_thresholds,
                           container=Resources(request.memory_mb, request.vcores), max_concurrent=max(1, required))
        sel = select_classes(job, self._class_table(view), self._rng, weights=self.selection.weights,
                             model_version=fitted.model.version)
        self.selections.append((view.now, request.job_id, sel))
        index = {cid: i for i, cid in enumerate(fitted.class_ids)}
        chosen = [index[c.class_id] for c in sel.choices]
        plan = JobPlan(sel, np.isin(fitted.class_of_node, chosen), view.now + self.reselect_after_s)
        self._plans[request.job_id] = plan
        return plan

    def _class_table(self, view: ClusterView) -> ClassTable:
        """The guard's published states with this pass's allocations (module docstring); per pass."""
        if view is self._table_view:
            return self._table
        fitted = self.harvest.fitted
        assert fitted is not None
        k = len(fitted.class_ids)
        member = fitted.class_of_node >= 0
        cls = fitted.class_of_node[member]
        up = view.running[member]
        alloc_v = view.allocated_vcores if view.allocated_vcores is not None else view.capacity_vcores - view.free_vcores
        alloc_m = view.allocated_memory_mb if view.allocated_memory_mb is not None else view.capacity_memory_mb - view.free_memory_mb
        vc = np.bincount(cls, weights=np.where(up, alloc_v[member], 0), minlength=k)
        mb = np.bincount(cls, weights=np.where(up, alloc_m[member], 0), minlength=k)
        free_mb = np.bincount(cls, weights=view.free_memory_mb[member], minlength=k)
        index = {cid: i for i, cid in enumerate(fitted.class_ids)}
        states = []
        for c in self.harvest.classes:
            i = index[c.class_id]
            states.append(replace(c, allocated=Resources(int(mb[i]), int(vc[i])), memory_free_mb=float(free_mb[i])))
        self._table_view, self._table = view, ClassTable.of(states)
        return self._table


def guard_only(params: Mapping[str, Any], context: SimContext) -> GuardedHeartbeatPolicy:
    """Policy factory of the guard-only ablation (`policy.name: harvester.sim.harvest:guard_only`)."""
    if params:
        raise ValueError(f"unknown params {sorted(params)} (guard_only takes none)")
    return GuardedHeartbeatPolicy(context)


def algorithm1(params: Mapping[str, Any], context: SimContext) -> Algorithm1Policy:
    """Policy factory (`policy.name: harvester.sim.harvest:algorithm1`).

    params: `harvesting` (the live config's `harvesting:` section: weights, job_length,
    patterns, clustering, reserve, guard, refit_interval_s, window_days), `reselect_after_s`,
    `jobs_refit_s`.
    """
    p = dict(params)
    settings = harvesting_settings(p.pop("harvesting", None), context.step_s)
    harvest = HarvestModels(context, settings, jobs_refit_s=float(p.pop("jobs_refit_s", 120.0)))
    reselect = float(p.pop("reselect_after_s", 30.0))
    if p:
        raise ValueError(f"unknown params {sorted(p)} (harvesting, reselect_after_s, jobs_refit_s)")
    return Algorithm1Policy(context, harvest, reselect_after_s=reselect)

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
  SelectClasses reads the table the guard published at most one guard period earlier; in a
  simulated scheduling pass many jobs select at the same instant, and without the refresh they
  would all see the same allocation and crowd into one class.
- No class (line 16): the paper stops at "do not pick classes". Here the job waits and asks
  again every `reselect_after_s` (default 30 s); after `no_class_wait_s` (default 600 s)
  without any class it runs with no class preference (on every node, as primary-aware YARN
  would place it) — J.req is the job's PEAK concurrency, so a wide DAG on a busy cluster may
  never fit, and waiting forever would starve it. `no_class_wait_s: null` waits forever (the
  literal reading), 0 places such jobs at once.
- A running job whose classes have no room left for a pending stage asks again (at most once
  per `reselect_after_s`) with J.req = that stage's pending containers and moves its remaining
  containers to the new choice; containers already running stay where they are.
- Capacities belong to the guard (`harvester.sim.harvest.guard`): `capacity()` sets every node
  to 0 once at start (fail safe: nothing is harvested before the guard's first decision) and
  then never again.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from harvester.decisions.class_selection import ClassTable, Selection, characterize, select_classes
from harvester.decisions.strategy import selection_strategy
from harvester.domain import Resources
from harvester.sim.harvest.models import Fitted, HarvestModels, harvesting_settings
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
SELECTIONS_KEPT = 10_000


@dataclass
class JobPlan:
    """A job's current Algorithm 1 choice: the nodes it may use and when it may ask again."""

    selection: Selection
    waiting: bool              # line 16: nothing to place until retry_at
    since: float               # when the job first asked
    classes: np.ndarray        # class indexes its nodes are in (into `Fitted.class_ids`; len = no class)
    nodes: np.ndarray          # bool per node
    retry_at: float
    version: int               # class model version `classes` refers to


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

    def __init__(self, context: SimContext, harvest: HarvestModels, *, reselect_after_s: float = 30.0,
                 no_class_wait_s: float | None = 600.0) -> None:
        super().__init__(context)
        if reselect_after_s <= 0:
            raise ValueError(f"reselect_after_s must be > 0, got {reselect_after_s}")
        if no_class_wait_s is not None and no_class_wait_s < 0:
            raise ValueError(f"no_class_wait_s must be >= 0 or null, got {no_class_wait_s}")
        self.no_class_wait_s = no_class_wait_s
        self.harvest = harvest
        self.reselect_after_s = reselect_after_s
        self.selection = selection_strategy(harvest.settings)
        self._rng = np.random.default_rng([context.seed, 1])  # Algorithm 1's draws, apart from the substrate's
        self._plans: dict[str, JobPlan] = {}
        self._table_view: ClusterView | None = None
        self._table = ClassTable.of(())
        self._free_view: ClusterView | None = None
        self._free = np.zeros(0)
        self._unplaced: dict[str, float] = {}  # jobs this pass left without containers -> when they ask again
        self._unplaced_view: ClusterView | None = None
        self.selections: deque[tuple[float, str, Selection]] = deque(maxlen=SELECTIONS_KEPT)  # the latest answers
        self.outcomes: Counter[str] = Counter()  # answers by kind: one class, several, none

    # --- PlacementPolicy ------------------------------------------------------------------

    def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        if not self.harvest.guard_attached:
            raise PolicyError("the history-based policy needs the guard controller "
                              "(controller.factory: harvester.sim.harvest:guard) to publish the classes")
        if view is not self._unplaced_view:
            self._unplaced_view, self._unplaced = view, {}
        placed = self._place(request, view)
        if placed.size:
            self._unplaced.pop(request.job_id, None)
        else:
            plan = self._plans.get(request.job_id)
            if plan is not None:
                self._unplaced[request.job_id] = plan.retry_at
        return placed

    def wake_at(self, now: float) -> float | None:
        """The next time a job left unplaced by the last pass asks Algorithm 1 again."""
        later = [t for t in self._unplaced.values() if t > now]
        return min(later) if later else None

    def _place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        plan = self._plans.get(request.job_id)
        if plan is None or (plan.waiting and view.now >= plan.retry_at):
            since = view.now if plan is None else plan.since
            plan = self._select(request, view, request.job_max_concurrent, since)
            if plan is None:
                return EMPTY
            self._plans[request.job_id] = plan
        if plan.waiting:
            return EMPTY
        placed = self._fill(plan, request, view)
        if placed.size or view.now < plan.retry_at:
            return placed
        moved = self._select(request, view, request.count, plan.since)  # its classes are full: ask again
        plan.retry_at = view.now + self.reselect_after_s
        if moved is None or moved.waiting:
            return EMPTY
        self._plans[request.job_id] = moved
        return self._fill(moved, request, view)

    def report(self) -> dict[str, Any]:
        """Algorithm 1's answers by kind and the class models it chose from (for the evaluation)."""
        return {"selections": dict(self.outcomes),
                "class_models": [{"at": t, "version": v, "classes": n} for t, v, n in self.harvest.refits]}

    def job_finished(self, outcome: JobOutcome) -> None:
        self._plans.pop(outcome.job_id, None)
        self.harvest.record_run(outcome)

    def _fill(self, plan: JobPlan, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        """Heartbeat order restricted to the plan's nodes; skips the scan when its classes had
        no free vcores at the start of this pass (the free arrays only shrink within a pass)."""
        fitted = self.harvest.fitted
        assert fitted is not None
        if plan.version != fitted.model.version:  # a refit renumbered the classes: map the nodes again
            plan.classes = np.unique(self._node_class(fitted)[plan.nodes])
            plan.version = fitted.model.version
        if not self._class_free(view)[plan.classes].any():
            return EMPTY
        order = self._heartbeats(view)
        order = order[plan.nodes[order]]
        slots = np.minimum(view.free_vcores[order] // request.vcores, view.free_memory_mb[order] // request.memory_mb)
        return fill_in_order(order, slots, request.count)

    def _class_free(self, view: ClusterView) -> np.ndarray:
        """Free vcores per class at the start of this pass (cached per view)."""
        if view is not self._free_view:
            fitted = self.harvest.fitted
            assert fitted is not None
            self._free = np.bincount(self._node_class(fitted), weights=view.free_vcores, minlength=len(fitted.class_ids) + 1)
            self._free_view = view
        return self._free

    @staticmethod
    def _node_class(fitted: Fitted) -> np.ndarray:
        """Class index per node with "no class" as the last index (so bincount covers every node)."""
        return np.where(fitted.class_of_node >= 0, fitted.class_of_node, len(fitted.class_ids))

    # --- Algorithm 1 ----------------------------------------------------------------------

    def _select(self, request: PlacementRequest, view: ClusterView, required: int, since: float) -> JobPlan | None:
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
        self.outcomes["none" if not sel.choices else ("one" if len(sel.choices) == 1 else "several")] += 1
        retry, n, version = view.now + self.reselect_after_s, fitted.class_of_node.shape[0], fitted.model.version
        if not sel.choices:  # line 16: no class can host the job now
            limit = self.no_class_wait_s
            if limit is None or view.now - since < limit:
                return JobPlan(sel, True, since, EMPTY, np.zeros(n, dtype=bool), retry, version)
            self.outcomes["no class: placed anywhere"] += 1
            return JobPlan(sel, False, since, np.arange(len(fitted.class_ids) + 1), np.ones(n, dtype=bool), retry, version)
        index = {cid: i for i, cid in enumerate(fitted.class_ids)}
        chosen = np.array([index[c.class_id] for c in sel.choices], dtype=np.int64)
        return JobPlan(sel, False, since, chosen, np.isin(fitted.class_of_node, chosen), retry, version)

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
    `no_class_wait_s` (module docstring), `jobs_refit_s`.
    """
    p = dict(params)
    settings = harvesting_settings(p.pop("harvesting", None), context.step_s)
    harvest = HarvestModels(context, settings, jobs_refit_s=float(p.pop("jobs_refit_s", 120.0)))
    reselect = float(p.pop("reselect_after_s", 30.0))
    wait = p.pop("no_class_wait_s", 600.0)
    if p:
        raise ValueError(f"unknown params {sorted(p)} (harvesting, reselect_after_s, jobs_refit_s, no_class_wait_s)")
    return Algorithm1Policy(context, harvest, reselect_after_s=reselect,
                            no_class_wait_s=None if wait is None else float(wait))

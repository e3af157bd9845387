"""Algorithm 1 as the simulator's placement policy (OSDI'16 §4.1, YARN-H) — decisions by the real code.

The policy plays the part of the RM plug-in asking SelectClasses: it reads what Harvester's
live loops published on the state board (board/harvesting.py) — the loops themselves run as the
simulation's controller (`harvester.sim.live:loops`, which hands this policy the board). For
each job, on its first placement request:
1. line 3, J.type: `decisions.class_selection.characterize` with the job-history model the
   jobs and refit loops published (fitted from the run's finished jobs; a job never seen
   before is medium);
2. line 4, J.req: the job's maximum concurrent containers from a breadth-first traversal of its
   DAG (`PlacementRequest.job_max_concurrent`, the same BFS as `models.job_history`);
3. lines 5–18: `decisions.class_selection.select_classes` over the classes the guard loop
   published (`decisions.class_view.class_states`: the model's pattern / average / peak, the
   class's current primary utilization, reserve and capacity), with the job's container size.
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
  again every `reselect_after_s` (default 30 s); after `no_class_wait_s` (default 0: at once,
  as Algorithm 1 line 16 picks no class — issue 16; the evaluation's `yarn-h-wait` uses 600 s)
  without any class it runs with no class preference (on every node, as primary-aware YARN
  would place it) — J.req is the job's PEAK concurrency, so a wide DAG on a busy cluster may
  never fit, and waiting forever would starve it. `no_class_wait_s: null` waits forever (the
  literal reading), 0 places such jobs at once.
- A running job whose classes have no room left for a pending stage asks again (at most once
  per `reselect_after_s`) with J.req = that stage's pending containers and moves its remaining
  containers to the new choice; containers already running stay where they are.
- Capacities belong to the guard loop: `capacity()` sets every node to 0 once at start (fail
  safe: nothing is harvested before the guard's first decision) and then never again.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from harvester.board.harvesting import HarvestingBoard
from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.class_selection import ClassTable, Selection, characterize, select_classes
from harvester.decisions.strategy import selection_strategy
from harvester.domain import Resources
from harvester.models.utilization_classes import TenantClassModel
from harvester.sim.live import harvesting_settings
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


@dataclass(frozen=True)
class Fitted:
    """The published class model as arrays over the simulated nodes."""

    model: TenantClassModel
    class_ids: tuple[str, ...]
    class_of_node: np.ndarray   # index into class_ids per node, -1 when the tenant has no class

    @classmethod
    def of(cls, model: TenantClassModel, context: SimContext) -> Fitted:
        class_ids = tuple(c.class_id for c in model.classes)
        index = {cid: i for i, cid in enumerate(class_ids)}
        tenant_class = model.tenant_class_map()
        per_tenant = np.array([index.get(tenant_class.get(t.name, ""), -1) for t in context.tenants], dtype=np.int64)
        return cls(model, class_ids, per_tenant[context.tenant_of])


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

    def __init__(self, context: SimContext, harvesting: HarvestingSettings, *, reselect_after_s: float = 30.0,
                 no_class_wait_s: float | None = 0.0) -> None:
        super().__init__(context)
        if reselect_after_s <= 0:
            raise ValueError(f"reselect_after_s must be > 0, got {reselect_after_s}")
        if no_class_wait_s is not None and no_class_wait_s < 0:
            raise ValueError(f"no_class_wait_s must be >= 0 or null, got {no_class_wait_s}")
        self.context = context
        self.no_class_wait_s = no_class_wait_s
        self.harvesting = harvesting  # the live loops' settings too (sim/live.py reads them here)
        self.reselect_after_s = reselect_after_s
        self.selection = selection_strategy(harvesting)
        self._board: HarvestingBoard | None = None
        self._fitted: Fitted | None = None
        self.models: list[tuple[float, int, int]] = []  # class models it chose from: (fitted_at, version, classes)
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

    def read_board(self, board: HarvestingBoard) -> None:
        """Where the live loops publish (called by `harvester.sim.live:loops`)."""
        self._board = board

    def _fitted_now(self) -> Fitted | None:
        """The published class model as node arrays (rebuilt when a refit publishes a new one)."""
        assert self._board is not None
        model = self._board.view().model
        if model is None:
            return None
        if self._fitted is None or self._fitted.model is not model:
            self._fitted = Fitted.of(model, self.context)
            self.models.append((model.fitted_at, model.version, len(model.classes)))
        return self._fitted

    def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        if self._board is None:
            raise PolicyError("the history-based policy needs Harvester's loops to publish the classes "
                              "(controller.factory: harvester.sim.live:loops)")
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
                "class_models": [{"at": t, "version": v, "classes": n} for t, v, n in self.models]}

    def job_finished(self, outcome: JobOutcome) -> None:
        """The job's plan is done (its run reaches the job history through the jobs loop)."""
        self._plans.pop(outcome.job_id, None)

    def _fill(self, plan: JobPlan, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        """Heartbeat order restricted to the plan's nodes; skips the scan when its classes had
        no free vcores at the start of this pass (the free arrays only shrink within a pass)."""
        fitted = self._fitted_now()
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
            fitted = self._fitted_now()
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
        assert self._board is not None
        published = self._board.view()
        fitted = self._fitted_now()
        if fitted is None or not published.classes:
            return None
        job = characterize(request.job_name, history=published.jobs,
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
        fitted = self._fitted_now()
        assert fitted is not None and self._board is not None
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
        for c in self._board.view().classes:
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
    patterns, clustering, reserve, guard, refit_interval_s, window_days — the live loops run
    with it too), `reselect_after_s`, `no_class_wait_s` (module docstring).
    """
    p = dict(params)
    settings = harvesting_settings(p.pop("harvesting", None), context.step_s)
    reselect = float(p.pop("reselect_after_s", 30.0))
    wait = p.pop("no_class_wait_s", 0.0)
    if p:
        raise ValueError(f"unknown params {sorted(p)} (harvesting, reselect_after_s, no_class_wait_s)")
    return Algorithm1Policy(context, settings, reselect_after_s=reselect,
                            no_class_wait_s=None if wait is None else float(wait))

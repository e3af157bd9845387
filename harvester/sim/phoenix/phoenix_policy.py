"""Phoenix (paper 003) in the short-job simulator: Eagle plus constraint awareness.

Sources and order of the mechanisms: docs/evaluation/phoenix-fidelity.md (S5-S7).

- **CRV** (§I: "CRV demand (tasks asking for the resource) and supply (total available
  resources) ratio of constrained resources"): every `tick_s` (5 s, the Phoenix-derived
  simulator's monitor interval), for every constraint dimension (and "any worker"):
  demand = not-yet-started tasks of the short jobs in flight asking for it, supply = workers
  satisfying it that hold no long work (the SSS view); a job's CRV ratio is that of its
  tightest dimension (`models.queueing.crv_ratio`).
- **Reordering** (§I: "reorder tasks based on its CRV ratio values"; the source's
  `get_next_probe_acc_to_crv`): long entries first, then the short probe whose job has the
  highest CRV ratio (the earliest in the queue among equal ratios), under Eagle's slack bound;
  only while the busy share of the workers at the last tick is above `crv_load` (80%, the
  source's threshold), else Eagle's SRPT. `order="mg1"` keeps the first review's order
  (`decisions.constrained_placement.contention_key`: log2 buckets of the class's M/G/1 wait in
  service times, then of its CRV ratio, then SRPT), always on — an ablation variant.
- **Admission control** (§I contribution 2: "negotiating resources for tasks in which all
  the constraints could not be satisfied ... by succinct sharing of demand supply
  information"), `admission="sss"`: at submission a short job's soft constraints are relaxed
  iff no worker satisfying all its constraints is free of long work (the SSS state the
  schedulers share) while some worker satisfying its hard ones is. `admission="mg1"`: the
  first review's rule, an ablation variant —
  relax soft constraints when the full class's M/G/1 wait exceeds max(30 s, 2 x estimate) and
  the hard-only class (plus the slower run) is sooner, or no worker of the full class is free
  of long work (`should_relax`).
- **Placement** (`placement="crv"`, the default since issue 27): Eagle's LWTF and SSS probing,
  but every tick the workers are ranked first by the highest CRV ratio of the constraint
  dimensions they satisfy (demand: tasks asked in the last 300 s and unbound tasks of older
  jobs in flight; supply: satisfying workers free of long work — `_crv_pressure`), bucketed as
  `contention_bucket` — the shared decision
  code's step 5 (decisions/constrained_placement.py: "lowest contention ... keep scarce nodes
  for the tasks that need them"; §I: "minimizing the job response times at constrained
  workers"). Unconstrained long tasks then stay off the workers a contended constraint needs.
  Issue 27's mechanism scenario showed the defect this fixes: with Eagle's placement (S7,
  `placement=False`) 84% of the scarce workers' time went to unconstrained long tasks while the
  p99 short job waited for them (docs/evaluation/phoenix.md, "Mechanism scenario").
  `placement=True`: the first review's pressure (tasks asked in a 300 s window / all satisfying
  workers, which ignores that the satisfying workers hold long work) — an ablation variant.
A relaxed task runs `engine.slowdowns()` slower on a worker that misses its soft constraints.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from harvester.decisions.constrained_placement import ANY, PlacementStrategy, contention_bucket, contention_buckets, should_relax
from harvester.models.constraints import Strength
from harvester.models.queueing import (
    Arrivals, ClassLoad, NodeLoads, ServiceMoments, crv_ratio, fit_class_loads, node_loads, waits_over,
)
from harvester.sim.phoenix.engine import SAMPLE_S, Job, Simulation, slowdowns
from harvester.sim.phoenix.policies import MIN_PROBES, SRPT_CAP, EagleC

CRV_LOAD = 0.8  # the Phoenix-derived simulator reorders by CRV only while the cluster load is above 80%


class PhoenixC(EagleC):
    name = "Phoenix"

    def __init__(self, cap: float = SRPT_CAP, tick_s: float = SAMPLE_S, strategy: PlacementStrategy | None = None, *,
                 reorder: bool = True, order: str = "crv", admission: str | None = "sss", placement: bool | str = "crv",
                 crv_load: float = CRV_LOAD, min_probes: int = MIN_PROBES) -> None:
        super().__init__(cap, min_probes)
        if order not in ("crv", "mg1") or admission not in (None, "sss", "mg1") or placement not in (False, True, "crv"):
            raise ValueError(f"unknown order {order!r}, admission {admission!r} or placement {placement!r}")
        self.reorder, self.order, self.admission, self.placement = reorder, order, admission, placement
        self.crv_load = crv_load
        self.tick_s = tick_s
        self.strategy = strategy or PlacementStrategy()
        self.active: list[Job] = []           # short jobs in flight with tasks not yet started
        self.crv_mode = False                 # busy share above crv_load at the last tick
        self.crv: dict[int, float] = {}       # class -> CRV ratio of its tightest dimension
        self.relaxed_jobs = 0
        self._slow: dict[tuple, np.ndarray] = {}
        # the first review's M/G/1 state (order="mg1", admission="mg1") and placement pressure
        self.asks: deque[tuple[float, int, int]] = deque()
        self.pressure: np.ndarray | None = None
        self.arrivals: deque[Arrivals] = deque()
        self.loaded: NodeLoads | None = None
        self.buckets: dict[int, tuple[int, int]] = {}

    @property
    def _mg1(self) -> bool:
        return (self.reorder and self.order == "mg1") or self.admission == "mg1"

    def submit(self, sim: Simulation, job: Job) -> None:
        self.asks.append((sim.now, job.full_cls, job.tasks))
        if not job.long:
            if self.admission == "sss":
                self._admit_sss(sim, job)
            elif self.admission == "mg1":
                self._admit_mg1(sim, job)
            self.active.append(job)
            if self._mg1:
                self.arrivals.append(Arrivals(sim.now, str(job.cls), job.tasks, job.tasks * job.estimate,
                                              job.tasks * job.estimate ** 2))
        super().submit(sim, job)

    def _relax(self, sim: Simulation, job: Job) -> None:
        soft = tuple(c for c in job.spec.constraints if c.strength is Strength.SOFT)
        job.cls = job.hard_cls
        job.relaxed = soft
        job.slowdown = self._slowdowns(sim, soft)
        self.relaxed_jobs += 1

    def _admit_sss(self, sim: Simulation, job: Job) -> None:
        """Relax the soft constraints of a job that no worker free of long work can take with
        them, when one can without them (module docstring)."""
        if job.full_cls == job.hard_cls:
            return
        free = sim.long_count == 0
        if not (sim.classes[job.full_cls].mask & free).any() and (sim.classes[job.hard_cls].mask & free).any():
            self._relax(sim, job)

    def _admit_mg1(self, sim: Simulation, job: Job) -> None:
        """The first review's admission control: relax when the full class waits too long (M/G/1)."""
        if job.full_cls == job.hard_cls or self.loaded is None:
            return
        w_full = self._wait_with(sim.classes[job.full_cls].weights, job)
        w_hard = self._wait_with(sim.classes[job.hard_cls].weights, job)
        soft = tuple(c for c in job.spec.constraints if c.strength is Strength.SOFT)
        hard = sim.classes[job.hard_cls].mask & (sim.long_count == 0)
        expected = float(self._slowdowns(sim, soft)[hard].mean()) if hard.any() else 1.0
        if should_relax(w_full, w_hard, job.estimate, self.strategy, any_node=bool(sim.classes[job.full_cls].mask.any()),
                        slowdown=expected):
            self._relax(sim, job)

    def _wait_with(self, weights: np.ndarray, job: Job) -> float:
        """M/G/1 wait of a class (0/1 `weights` over workers) on the workers free of long work,
        once the arriving job's own tasks load it too (rate tasks / window)."""
        loaded = self.loaded
        avail = weights * loaded.slots
        n = float(avail.sum())
        if n == 0:
            return math.inf
        rate = job.tasks / self.strategy.window_s
        extra = NodeLoads(loaded.slots, loaded.rho + avail * (rate * job.estimate / n),
                          loaded.lambda_m2 + avail * (rate * job.estimate ** 2 / n))
        return float(waits_over(weights[None, :], extra).wait_s[0])

    def _slowdowns(self, sim: Simulation, soft: tuple) -> np.ndarray:
        """Per worker, the run-time factor of a task whose `soft` constraints are relaxed (cached)."""
        hit = self._slow.get(soft)
        if hit is None:
            hit = self._slow[soft] = slowdowns(soft, sim.workers)
        return hit

    def tick(self, sim: Simulation) -> None:
        self.active = [j for j in self.active if j.unbound > 0]
        self.crv_mode = sim.busy / sim.workers.size > self.crv_load
        self.crv = self._crv(sim)
        if self._mg1:
            self._tick_mg1(sim)
        if self.placement == "crv":
            self.pressure = self._crv_pressure(sim)
        elif self.placement:
            self.pressure = self._pressure(sim)

    def _crv(self, sim: Simulation) -> dict[int, float]:
        """CRV ratio of every class: demand / supply of its tightest dimension (module docstring)."""
        free = sim.long_count == 0
        demand: dict[str, float] = {ANY: 0.0}
        for j in self.active:
            demand[ANY] += j.unbound
            for c in sim.classes[j.cls].constraints:
                demand[c.key] = demand.get(c.key, 0.0) + j.unbound
        ratio: dict[str, float] = {ANY: crv_ratio(demand[ANY], float(np.count_nonzero(free)))}
        out: dict[int, float] = {}
        for cls in sim.classes:
            dims = []
            for c in cls.constraints:
                if c.key not in ratio:
                    supply = float(np.count_nonzero(sim.workers.table.mask(c) & free))
                    ratio[c.key] = crv_ratio(demand.get(c.key, 0.0), supply)
                dims.append(ratio[c.key])
            out[cls.idx] = max(dims) if dims else ratio[ANY]
        return out

    def _tick_mg1(self, sim: Simulation) -> None:
        """The first review's M/G/1 wait of the classes of the short jobs in flight, on workers
        free of long work; the per-node loads are kept for its admission control."""
        now, s = sim.now, self.strategy
        while self.arrivals and self.arrivals[0].time <= now - s.window_s:
            self.arrivals.popleft()
        demand: dict[int, float] = {}
        for j in self.active:
            demand[j.cls] = demand.get(j.cls, 0.0) + j.unbound
        loads = fit_class_loads(self.arrivals, now, s.window_s, ServiceMoments.deterministic(s.default_duration_s))
        rows = sorted({int(k) for k in loads} | set(demand))
        n = sim.workers.size
        free = (sim.long_count == 0).astype(float)  # a worker holding long work takes no short task (SSS)
        masks = np.stack([sim.classes[c].weights for c in rows]) if rows else np.zeros((0, n), dtype=np.float32)
        zero = ClassLoad(0.0, ServiceMoments(1.0, 1.0))
        self.loaded = node_loads(masks, free, [loads.get(str(c), zero) for c in rows], sim.late_busy)
        estimate = waits_over(masks, self.loaded)
        default = s.default_duration_s
        self.buckets = {
            c: contention_buckets(float(w), loads[str(c)].moments.mean_s if str(c) in loads else default,
                                  crv_ratio(demand.get(c, 0.0), float(supply)))
            for c, w, supply in zip(rows, estimate.wait_s, estimate.slots)
        }

    def _crv_pressure(self, sim: Simulation) -> np.ndarray:
        """Per worker: the highest CRV ratio of the constraint dimensions it satisfies. Demand as
        the shared decision code's (decisions/constrained_placement.py step 1: the tasks asked
        in the last `window_s`, plus here the unbound tasks of older jobs still in flight), supply
        as `_crv` (workers satisfying that hold no long work)."""
        since = sim.now - self.strategy.window_s
        while self.asks and self.asks[0][0] <= since:
            self.asks.popleft()
        asked = [(sim.classes[c], n) for _, c, n in self.asks]
        older = [(sim.classes[j.cls], j.unbound) for j in self.active if j.arrival <= since]
        demand: dict[str, tuple] = {}
        for cls, n in asked + older:
            for c in cls.constraints:
                demand[c.key] = (c, demand.get(c.key, (c, 0.0))[1] + n)
        free = sim.long_count == 0
        out = np.zeros(sim.workers.size)
        for c, n in demand.values():
            mask = sim.workers.table.mask(c)
            r = crv_ratio(n, float(np.count_nonzero(mask & free)))
            np.maximum(out, np.where(mask, r, 0.0), out=out)
        return out

    def _pressure(self, sim: Simulation) -> np.ndarray | None:
        """Per worker: the highest CRV ratio (tasks asking in the window / workers satisfying) of
        the constrained classes it serves — the live decision's node ranking
        (decisions/constrained_placement.py step 5) shared with the schedulers every tick."""
        while self.asks and self.asks[0][0] <= sim.now - self.strategy.window_s:
            self.asks.popleft()
        demand: dict[int, int] = {}
        for _, c, n in self.asks:
            if sim.classes[c].constraints:
                demand[c] = demand.get(c, 0) + n
        out = np.zeros(sim.workers.size)
        for c, n in demand.items():
            mask = sim.classes[c].mask
            np.maximum(out, np.where(mask, crv_ratio(n, float(np.count_nonzero(mask))), 0.0), out=out)
        return out

    def _tier(self, sim: Simulation, cands: np.ndarray) -> np.ndarray:
        """CRV-aware LWTF: among workers with no long work, those no contended class needs come
        first; then by estimated work, a contended worker only after the others at the same bucket."""
        if not self.placement or self.pressure is None:
            return super()._tier(sim, cands)
        return np.array([contention_bucket(x) for x in self.pressure[cands].tolist()], dtype=np.int64)

    def _probe_candidates(self, sim: Simulation, cands: np.ndarray, k: int) -> np.ndarray:
        """Probes of a job go to workers no contended class needs, while there are `k` of them."""
        if not self.placement or self.pressure is None:
            return cands
        calm = cands[self.pressure[cands] < 1.0]
        return calm if calm.size >= k else cands

    def key(self, sim: Simulation, job: Job) -> tuple:
        if not self.reorder or job.long:
            return super().key(sim, job)
        if self.order == "mg1":
            return (*self.buckets.get(job.cls, (0, 0)), job.remaining_s())
        if not self.crv_mode:
            return super().key(sim, job)
        return (-self.crv.get(job.cls, 0.0),)  # the highest CRV ratio first; ties: earliest in the queue

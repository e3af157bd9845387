"""The schedulers compared in paper 003 §V, made constraint-aware as the paper describes ("-C").

Every policy sends a job's tasks only to workers that satisfy all its constraints (the "-C"
of Sparrow-C / Eagle-C: constraints are hard filters; only Phoenix may relax soft ones).
Choices where the papers leave room are marked CHOICE and listed in docs/evaluation/phoenix.md.

- `FifoC` — a centralized FIFO: one global queue in job arrival order; a free worker takes
  the next task of the earliest job whose constraints it satisfies (YARN FifoScheduler's
  node-heartbeat behaviour, which skips requests the node cannot serve). Every job, long or
  short. CHOICE: the issue asks for "FIFO"; this is the strongest FIFO (no probing, no head-of-
  line blocking across constraint classes).
- `SparrowC` — Sparrow (SOSP'13): batch sampling, probe ratio d = 2 (power of two choices
  per task; at least 20 probes per job, as the Phoenix-derived simulator), late binding, FIFO worker queues, for every job; constrained jobs sample among
  the satisfying workers (Sparrow §4.3 per-job constraints).
- `EagleC` — Eagle (SoCC'16) on Hawk's hybrid design: long jobs (mean task duration over the
  cutoff) go to a centralized scheduler that binds each task early to the satisfying worker of
  the general partition with the least estimated waiting time (LWTF); short jobs are probed
  by distributed schedulers (d = 2, late binding) that use Succinct State Sharing as the Eagle
  simulator (rejected probes resampled with the workers' bitmap snapshots, 5 rounds, then the
  short-only partition, `_probe`); a short partition (`short_partition` of the workers) never
  runs long tasks; Sticky Batch Probing;
  worker queues: early-bound long tasks first, then short probes in SRPT order (remaining tasks
  x estimated duration) with the Eagle simulator's starvation bound (a probe is passed by tasks
  whose estimates sum to at most `cap` = 5 x its own estimate).
- `PhoenixC` — Phoenix (paper 003) on Eagle: the same placement, plus (1) CRV + M/G/1 per
  constraint class every `tick_s` (demand = unbound short tasks asking for the class, supply =
  satisfying workers without long work, `models.queueing`), (2) worker queues in CRV order
  (`decisions.constrained_placement.contention_key`: most contended class first, SRPT within
  a bucket, with Eagle's long-tasks-first and starvation bound), (3) admission control at submission: a short job whose full class waits longer
  than max(`max_wait_s`, `max_wait_factor` x its task estimate) has its soft constraints
  relaxed when the hard-only class waits less (or no worker satisfies the full class).
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

from harvester.decisions.constrained_placement import PlacementStrategy, contention_bucket, contention_buckets, should_relax
from harvester.models.constraints import Strength
from harvester.models.queueing import (
    Arrivals, ClassLoad, NodeLoads, ServiceMoments, crv_ratio, fit_class_loads, node_loads, waits_over,
)
from harvester.sim.phoenix.engine import PROBE, TASK, Job, Simulation, slowdowns

PROBE_RATIO = 2
SRPT_CAP = 5.0  # the Eagle simulator's CAP_SRPT_SBP: a probe is passed by at most 5x its own estimate (S3b)
SSS_ROUNDS = 5  # the Phoenix-derived and Eagle (r5by/eagle-mod) simulators' ROUNDS_SCHEDULING (S4)
MIN_PROBES = 20  # the Phoenix-derived simulator's MIN_NR_PROBES: a job sends max(2 x tasks, 20) probes (fidelity S2b)


def probe_count(job: Job, min_probes: int = MIN_PROBES) -> int:
    return max(PROBE_RATIO * job.unbound, min_probes)


def sample_workers(sim: Simulation, candidates: np.ndarray, k: int) -> np.ndarray:
    """`k` probe targets among `candidates`: distinct workers while they last, then repeats."""
    perm = sim.rng.permutation(candidates) if k >= candidates.size else sim.rng.choice(candidates, size=k, replace=False)
    if k <= perm.size:
        return perm[:k]
    return np.concatenate([perm, sim.rng.choice(candidates, size=k - perm.size, replace=True)])


class _Defaults:
    """What a policy does where it has nothing to add: FIFO worker queues, no pull, no tick."""

    short_partition = False
    sticky = False
    tick_s: float | None = None

    def pick(self, sim: Simulation, w: int, queue: list[list]) -> int:
        return 0

    def pull(self, sim: Simulation, w: int) -> Job | None:
        return None

    def tick(self, sim: Simulation) -> None:
        return None


class FifoC(_Defaults):
    name = "FIFO"

    def __init__(self) -> None:
        self.waiting: dict[int, deque[Job]] = {}

    def submit(self, sim: Simulation, job: Job) -> None:
        self.waiting.setdefault(job.cls, deque()).append(job)
        for w in np.flatnonzero(sim.classes[job.cls].mask & sim.idle)[: job.unbound].tolist():
            sim.bind(w, job, sim.now + sim.rtt_s)

    def pull(self, sim: Simulation, w: int) -> Job | None:
        best: Job | None = None
        for c in list(self.waiting):
            dq = self.waiting[c]
            while dq and dq[0].unbound == 0:
                dq.popleft()
            if not dq:
                del self.waiting[c]
            elif sim.classes[c].mask[w] and (best is None or dq[0].idx < best.idx):
                best = dq[0]
        return best


class SparrowC(_Defaults):
    name = "Sparrow-C"

    def __init__(self, min_probes: int = MIN_PROBES) -> None:
        self.min_probes = min_probes

    def submit(self, sim: Simulation, job: Job) -> None:
        cands = np.flatnonzero(sim.classes[job.cls].mask)
        for w in sample_workers(sim, cands, probe_count(job, self.min_probes)).tolist():
            sim.enqueue(w, job, PROBE)


class EagleC(_Defaults):
    name = "Eagle-C"
    short_partition = True
    sticky = True

    def __init__(self, cap: float = SRPT_CAP, min_probes: int = MIN_PROBES) -> None:
        self.cap, self.min_probes = cap, min_probes

    def submit(self, sim: Simulation, job: Job) -> None:
        if job.long:
            self._place_long(sim, job)
        else:
            self._probe(sim, job)

    def _place_long(self, sim: Simulation, job: Job) -> None:
        """LWTF: each task to the general-partition worker with the least estimated long work."""
        mask = sim.classes[job.cls].mask
        cands = np.flatnonzero(mask & ~sim.short_only)
        if cands.size == 0:
            cands = np.flatnonzero(mask)  # the constraint wins over the partition
        work = sim.early_work_s[cands]
        tier = self._tier(sim, cands)
        heap = list(zip(((work > 0) & (tier > 0)).tolist(), tier.tolist(), work.tolist(), cands.tolist()))
        heapq.heapify(heap)
        n = job.unbound
        job.unbound = 0  # bound early, all of them
        placed = []
        for _ in range(n):
            _, t, work_s, w = heapq.heappop(heap)
            sim.enqueue(w, job, TASK)
            placed.append(w)
            heapq.heappush(heap, (t > 0, t, work_s + job.estimate, w))
        sim.share_long_state(placed)

    def _tier(self, sim: Simulation, cands: np.ndarray) -> np.ndarray:
        """Eagle's LWTF ranks by estimated work alone: every candidate is in tier 0."""
        return np.zeros(cands.size, dtype=np.int64)

    def _probe(self, sim: Simulation, job: Job) -> None:
        """Succinct State Sharing as the Eagle simulator (`send_probes_eagle`): probes go to random
        satisfying workers; a worker running or queueing long work rejects its probe, and the
        scheduler resamples the rejected probes among the satisfying workers that the freshest
        bitmap snapshot held by the workers it probed does not mark, for up to `SSS_ROUNDS`
        rounds; the rest go to satisfying short-only workers (our choice when there are none:
        any satisfying worker, where the probe queues behind the long work)."""
        mask = sim.classes[job.cls].mask
        cands = np.flatnonzero(mask)
        missing = probe_count(job, self.min_probes)
        targets = sample_workers(sim, self._probe_candidates(sim, cands, missing), missing)
        known_at, known = -math.inf, None
        for _ in range(SSS_ROUNDS):
            rejected = sim.long_count[targets] > 0
            for w in targets[~rejected].tolist():
                sim.enqueue(w, job, PROBE)
            snaps = sim.snapshot_of[targets]
            snaps = snaps[snaps >= 0]
            if snaps.size:
                s = sim.snapshots[int(snaps.max())]  # snapshots are appended in time order
                if s[0] > known_at:
                    known_at, known = s
            missing = int(rejected.sum())
            if missing == 0:
                return
            pool = cands if known is None else cands[~known[cands]]
            if pool.size == 0:
                break
            targets = sample_workers(sim, pool, missing)
        pool = cands[sim.short_only[cands]]
        for w in sample_workers(sim, pool if pool.size else cands, missing).tolist():
            sim.enqueue(w, job, PROBE)

    def _probe_candidates(self, sim: Simulation, cands: np.ndarray, k: int) -> np.ndarray:
        return cands

    def key(self, sim: Simulation, job: Job) -> tuple:
        return (job.remaining_s(),)

    def pick(self, sim: Simulation, w: int, queue: list[list]) -> int:
        """The Eagle simulator's `get_next_probe_acc_to_sbp_srpt`: the first early-bound (long)
        entry if any (S3a); else the short probe with the least `key` (SRPT) among those allowed
        to jump: a probe may pass the probes in front of it only while its task's estimate fits
        in the slack of each, slack = cap x own estimate - estimates that already passed it (S3b).
        The chosen task's estimate is charged to every probe it passes."""
        for i, e in enumerate(queue):
            if e[1] == TASK:
                return i
        best_i, best = 0, None
        slack = math.inf  # the least slack of the probes in front
        jobs = sim.jobs
        for i, e in enumerate(queue):
            job = jobs[e[0]]
            if job.estimate <= slack:
                k = self.key(sim, job)
                if best is None or k < best:
                    best_i, best = i, k
            slack = min(slack, self.cap * job.estimate - e[2])
        charge = jobs[queue[best_i][0]].estimate
        for e in queue[:best_i]:
            e[2] += charge
        return best_i


class PhoenixC(EagleC):
    name = "Phoenix"

    def __init__(self, cap: float = SRPT_CAP, tick_s: float = 10.0, strategy: PlacementStrategy | None = None, *,
                 reorder: bool = True, admission: bool = True, placement: bool = True, min_probes: int = MIN_PROBES) -> None:
        super().__init__(cap, min_probes)
        self.reorder, self.admission, self.placement = reorder, admission, placement
        self.asks: deque[tuple[float, int, int]] = deque()  # (time, class, tasks) of every job, for the pressure
        self.pressure: np.ndarray | None = None
        self.tick_s = tick_s
        self.strategy = strategy or PlacementStrategy()
        self.arrivals: deque[Arrivals] = deque()
        self.active: list[Job] = []
        self.loaded: NodeLoads | None = None
        self.buckets: dict[int, tuple[int, int]] = {}
        self.relaxed_jobs = 0
        self._slow: dict[tuple, np.ndarray] = {}

    def submit(self, sim: Simulation, job: Job) -> None:
        self.asks.append((sim.now, job.full_cls, job.tasks))
        if not job.long:
            if self.admission:
                self._admit(sim, job)
            self.active.append(job)
            self.arrivals.append(Arrivals(sim.now, str(job.cls), job.tasks, job.tasks * job.estimate,
                                          job.tasks * job.estimate ** 2))
        super().submit(sim, job)

    def _admit(self, sim: Simulation, job: Job) -> None:
        """Admission control (§I contribution 2): relax soft constraints of a job whose class waits too long."""
        if job.full_cls == job.hard_cls or self.loaded is None:
            return
        w_full = self._wait_with(sim.classes[job.full_cls].weights, job)
        w_hard = self._wait_with(sim.classes[job.hard_cls].weights, job)
        soft = tuple(c for c in job.spec.constraints if c.strength is Strength.SOFT)
        hard = sim.classes[job.hard_cls].mask & (sim.long_count == 0)
        expected = float(self._slowdowns(sim, soft)[hard].mean()) if hard.any() else 1.0
        if should_relax(w_full, w_hard, job.estimate, self.strategy, any_node=bool(sim.classes[job.full_cls].mask.any()),
                        slowdown=expected):
            job.cls = job.hard_cls
            job.relaxed = soft
            job.slowdown = self._slowdowns(sim, soft)
            self.relaxed_jobs += 1

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
        """CRV (demand/supply) and M/G/1 wait of the classes of the short jobs in flight, on
        workers free of long work; the per-node loads are kept for admission control."""
        now, s = sim.now, self.strategy
        while self.arrivals and self.arrivals[0].time <= now - s.window_s:
            self.arrivals.popleft()
        self.active = [j for j in self.active if j.unbound > 0]
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
        if self.placement:
            self.pressure = self._pressure(sim)
        default = s.default_duration_s
        self.buckets = {
            c: contention_buckets(float(w), loads[str(c)].moments.mean_s if str(c) in loads else default,
                                  crv_ratio(demand.get(c, 0.0), float(supply)))
            for c, w, supply in zip(rows, estimate.wait_s, estimate.slots)
        }

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
        if job.long or not self.reorder:
            return (0, 0, job.remaining_s())  # long entries keep their SRPT place behind short probes
        return (*self.buckets.get(job.cls, (0, 0)), job.remaining_s())

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
- `HawkC` — Hawk (ATC'15): the same centralized half, short jobs probed without SSS, FIFO
  worker queues and work stealing (class docstring).
- `PhoenixC` (phoenix_policy.py) — Phoenix on Eagle.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

from harvester.sim.phoenix.engine import PROBE, TASK, Job, Simulation

PROBE_RATIO = 2
SRPT_CAP = 5.0  # the Eagle simulator's CAP_SRPT_SBP: a probe is passed by at most 5x its own estimate (S3b)
SSS_ROUNDS = 5  # the Phoenix-derived and Eagle (r5by/eagle-mod) simulators' ROUNDS_SCHEDULING (S4)
STEAL_ATTEMPTS, STEAL_LIMIT = 10, 10000  # Eagle simulator README, Hawk on YH: stealing attempts 10, limit 10000
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


class _Hybrid(_Defaults):
    """Hawk's and Eagle's centralized half: long jobs bound early by least estimated waiting time."""

    short_partition = True

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
        """LWTF ranks by estimated work alone: every candidate is in tier 0."""
        return np.zeros(cands.size, dtype=np.int64)


class HawkC(_Hybrid):
    """Hawk (ATC'15), as the Eagle simulator's Hawk mode with the Yahoo parameters: long jobs
    by LWTF on the general partition, short jobs probed among all satisfying workers, FIFO
    worker queues, and work stealing: a worker whose queue empties asks up to `attempts`
    random general-partition workers; the first one holding short probes queued after its long
    entries gives them (the "ATC" strategy: skip the short probes at the head unless it runs a
    long task, skip the long entries, take the short probes that follow, at most `limit`).
    CHOICE ("-C"): only probes whose constraints the thief satisfies are stolen."""

    name = "Hawk-C"

    def __init__(self, attempts: int = STEAL_ATTEMPTS, limit: int = STEAL_LIMIT, min_probes: int = MIN_PROBES) -> None:
        self.attempts, self.limit, self.min_probes = attempts, limit, min_probes
        self.stolen = 0
        self._general: np.ndarray | None = None

    def submit(self, sim: Simulation, job: Job) -> None:
        if job.long:
            self._place_long(sim, job)
            return
        cands = np.flatnonzero(sim.classes[job.cls].mask)
        for w in sample_workers(sim, cands, probe_count(job, self.min_probes)).tolist():
            sim.enqueue(w, job, PROBE)

    def pull(self, sim: Simulation, w: int) -> Job | None:
        """Work stealing into `w`'s (empty) queue; the engine then serves it."""
        if self._general is None:
            self._general = np.flatnonzero(~sim.short_only)
        victims = sim.rng.choice(self._general, size=self.attempts)
        for v in victims.tolist():
            if v == w:
                continue
            got = self._steal(sim, int(v), w)
            if got:
                sim.queue[w].extend(got)
                self.stolen += len(got)
                break
        return None

    def _steal(self, sim: Simulation, v: int, thief: int) -> list[list]:
        q = sim.queue[v]
        i = 0
        if not sim.running_early[v]:
            while i < len(q) and q[i][1] == PROBE:
                i += 1
        while i < len(q) and q[i][1] == TASK:
            i += 1
        taken, keep = [], []
        for e in q[i:]:
            if e[1] == TASK or len(taken) >= self.limit:
                break
            (taken if sim.classes[sim.jobs[e[0]].cls].mask[thief] else keep).append(e)
        if taken:
            q[i:i + len(taken) + len(keep)] = keep
        return taken


class EagleC(_Hybrid):
    name = "Eagle-C"
    sticky = True

    def __init__(self, cap: float = SRPT_CAP, min_probes: int = MIN_PROBES) -> None:
        self.cap, self.min_probes = cap, min_probes

    def submit(self, sim: Simulation, job: Job) -> None:
        if job.long:
            self._place_long(sim, job)
        else:
            self._probe(sim, job)

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

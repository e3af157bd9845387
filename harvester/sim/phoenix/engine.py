"""Discrete-event core of the short-job simulator: one-slot workers with queues, late binding.

The model of Sparrow/Hawk/Eagle/Phoenix simulators (paper 003 §V builds on Eagle's):
- every worker runs one task at a time and holds a queue of *entries*: a probe
  (reservation) of a job, bound to one of the job's tasks only when the worker reaches it
  (late binding), or a task bound early by a centralized scheduler;
- a worker that reaches a probe asks the job's scheduler for a task: one network round trip
  (`rtt_s`) before the task starts; when the job has no unbound task left the answer is
  "none" and the worker moves on to its next entry after that round trip;
- which entry a free worker serves is the policy's `pick` (FIFO, SRPT, CRV order); with
  Sticky Batch Probing (Eagle SoCC'16: "the probe stays there until all tasks of the job have
  been completed") a probe that bound a task stays in the queue and competes again when the
  worker is free; probes of jobs with no unbound task are then dropped without a round trip,
  as the Eagle simulator's queue scan does;
- a centralized policy may `pull` work for an idle worker from its own queue (FIFO);
- a task runs its trace duration, times the slowdown of running on a worker that does not
  meet a soft constraint admission control relaxed (`slowdown`).
Time is simulated seconds from the first arrival. Nothing here reads a clock.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from harvester.decisions.constrained_placement import class_key
from harvester.models.constraints import Constraint, Strength
from harvester.sim.phoenix.cluster import Workers
from harvester.sim.phoenix.synthesis import JobConstraints
from harvester.sim.phoenix.workload import Trace

PROBE, TASK = 0, 1
_ARRIVE, _DONE, _TICK, _SAMPLE = 0, 1, 2, 3
SAMPLE_S = 5.0  # how often the busy share of the workers is recorded (the Eagle simulator's monitor interval)


def slowdowns(relaxed: Sequence[Constraint], workers: Workers) -> np.ndarray:
    """Per worker, the run-time factor of a task whose `relaxed` soft constraints it misses (our
    model): CPU clock — the task is CPU-bound, time x wanted/actual GHz; NIC — 20% of its time
    is network transfer, that part x wanted/actual Gbit/s. A met constraint costs nothing."""
    factor = np.ones(workers.size)
    for c in relaxed:
        codes, uniques = workers.table.codes(c.attribute)
        have = np.array([float(u) for u in uniques] + [np.nan])[codes]  # code -1 (missing) -> nan
        want = float(c.values[0])
        missed = ~workers.table.mask(c) & np.isfinite(have) & (have > 0)
        if c.attribute == "clock_ghz":
            factor[missed] *= want / have[missed]
        elif c.attribute == "nic_gbps":
            factor[missed] *= 0.8 + 0.2 * want / have[missed]
    return factor


@dataclass(slots=True, eq=False)
class ConstraintClass:
    idx: int
    key: str
    constraints: tuple[Constraint, ...]
    mask: np.ndarray
    weights: np.ndarray  # the mask as 0/1 float32: a row of the queueing model's matrix


@dataclass(slots=True, eq=False)
class Job:
    idx: int
    arrival: float
    durations: list[float]
    estimate: float
    long: bool
    spec: JobConstraints
    cls: int            # the class its tasks may run in (after admission control)
    full_cls: int       # all its constraints
    hard_cls: int       # hard constraints only
    unbound: int        # tasks not yet bound to a worker
    started: int = 0
    done: int = 0
    finish: float = math.nan
    relaxed: tuple[Constraint, ...] = ()
    slowdown: np.ndarray | None = None  # per worker, when soft constraints were relaxed

    @property
    def tasks(self) -> int:
        return len(self.durations)

    def remaining_s(self) -> float:
        """Eagle's SRPT estimate: tasks not started x the job's estimated task duration."""
        return (self.tasks - self.started) * self.estimate


class Policy(Protocol):
    name: str
    short_partition: bool
    sticky: bool
    tick_s: float | None

    def submit(self, sim: Simulation, job: Job) -> None: ...

    def pick(self, sim: Simulation, w: int, queue: list[list]) -> int: ...

    def pull(self, sim: Simulation, w: int) -> Job | None: ...

    def tick(self, sim: Simulation) -> None: ...


@dataclass(frozen=True, slots=True)
class JobResult:
    arrival: float
    finish: float
    long: bool
    constrained: bool
    relaxed: bool
    tasks: int

    @property
    def response_s(self) -> float:
        return self.finish - self.arrival


@dataclass(frozen=True, slots=True)
class RunResult:
    policy: str
    jobs: tuple[JobResult, ...]
    makespan_s: float
    probes: int
    wasted_probes: int
    busy_share: tuple[float, ...] = ()  # busy workers / all workers every SAMPLE_S from the first arrival
    extra: dict = field(default_factory=dict)


class Simulation:
    """One run of one policy over one trace on one set of workers."""

    def __init__(self, trace: Trace, workers: Workers, constraints: Sequence[JobConstraints], policy: Policy, *,
                 seed: int, rtt_s: float = 0.0005, short_partition: float = 0.0) -> None:
        if len(constraints) != len(trace.jobs):
            raise ValueError("one JobConstraints per job")
        self.workers, self.policy, self.rtt_s = workers, policy, rtt_s
        self.rng = np.random.default_rng(seed)
        n = workers.size
        self.now = 0.0
        self.queue: list[list[list]] = [[] for _ in range(n)]
        self.running: list[int] = [-1] * n          # job index or -1
        self.running_early = np.zeros(n, dtype=bool)  # running a task a centralized scheduler bound early
        self.long_count = np.zeros(n, dtype=np.int32)  # early-bound (long) tasks queued or running: Eagle's SSS bit
        self.late_busy = np.zeros(n, dtype=bool)       # running a late-bound task
        self.early_work_s = np.zeros(n)                # estimated work of its early-bound tasks (LWTF)
        # SSS (Eagle): the snapshot of the long-work bitmap a worker got with its last long task
        self.snapshot_of = np.full(n, -1, dtype=np.int64)  # index into self.snapshots, -1 = none
        self.snapshots: list[tuple[float, np.ndarray]] = []  # (time taken, long_count > 0 then)
        self.short_only = np.zeros(n, dtype=bool)
        if policy.short_partition and short_partition > 0:
            k = max(1, int(round(short_partition * n)))
            self.short_only[self.rng.choice(n, size=k, replace=False)] = True
        self.classes: list[ConstraintClass] = []
        self._class_index: dict[str, int] = {}
        self.jobs: list[Job] = []
        t0 = min(j.arrival_s for j in trace.jobs)
        for i, (tj, spec) in enumerate(zip(trace.jobs, constraints)):
            full = self.class_of(spec.constraints)
            hard = self.class_of(tuple(c for c in spec.constraints if c.strength is Strength.HARD))
            if not self.classes[full].mask.any():
                raise ValueError(f"job {tj.job_id}: no worker satisfies {self.classes[full].key}")
            self.jobs.append(Job(i, tj.arrival_s - t0, tj.durations_s.tolist(), tj.estimate_s, tj.long, spec,
                                 full, full, hard, tj.tasks))
        self.probes = self.wasted = 0
        self.busy = 0  # workers running a task
        self.busy_share: list[float] = []
        self._events: list[tuple[float, int, int, int]] = []
        self._seq = 0

    # --- classes ---------------------------------------------------------------------------

    def class_of(self, constraints: tuple[Constraint, ...]) -> int:
        key = class_key(constraints)
        idx = self._class_index.get(key)
        if idx is None:
            idx = self._class_index[key] = len(self.classes)
            mask = self.workers.table.mask_all(constraints)
            self.classes.append(ConstraintClass(idx, key, constraints, mask, mask.astype(np.float32)))
        return idx

    # --- events ----------------------------------------------------------------------------

    def _push(self, t: float, kind: int, x: int) -> None:
        self._seq += 1
        heapq.heappush(self._events, (t, self._seq, kind, x))

    def enqueue(self, w: int, job: Job, kind: int) -> None:
        self.queue[w].append([job.idx, kind, 0.0, False])  # [job, PROBE|TASK, estimates that passed it, bound a task]
        if kind == PROBE:
            self.probes += 1
        else:
            self.long_count[w] += 1
            self.early_work_s[w] += job.estimate
        if self.running[w] < 0:
            self._serve(w)

    def start(self, w: int, job: Job, at: float, *, early_bound: bool = False) -> None:
        d = job.durations[job.started]
        if job.slowdown is not None:
            d *= float(job.slowdown[w])
        job.started += 1
        self.running[w] = job.idx
        self.busy += 1
        if early_bound:
            self.running_early[w] = True
        else:
            self.late_busy[w] = True
        self._push(at + d, _DONE, w)

    def share_long_state(self, ws: Sequence[int]) -> None:
        """Succinct State Sharing: the workers `ws` that just received long tasks keep a snapshot
        of the centralized scheduler's bitmap of workers holding long work (Eagle simulator:
        the bitmap travels with the long job's probes)."""
        self.snapshots.append((self.now, self.long_count > 0))
        self.snapshot_of[np.asarray(ws, dtype=np.int64)] = len(self.snapshots) - 1

    @property
    def idle(self) -> np.ndarray:
        return ~(self.late_busy | self.running_early)

    def bind(self, w: int, job: Job, at: float) -> None:
        """Late binding: the job's next unbound task starts on `w` at `at`."""
        job.unbound -= 1
        self.start(w, job, at)

    def _serve(self, w: int) -> None:
        t = self.now
        q = self.queue[w]
        sticky = self.policy.sticky
        while True:
            if sticky and q:  # Eagle drops the probes of jobs with nothing left unbound, without asking
                live = [e for e in q if e[1] == TASK or self.jobs[e[0]].unbound > 0]
                if len(live) < len(q):
                    self.wasted += sum(not e[3] for e in q) - sum(not e[3] for e in live)
                    q[:] = live
            if not q:
                job = self.policy.pull(self, w)  # a centralized queue (FIFO) or work stealing (Hawk)
                if job is not None:
                    self.bind(w, job, t + self.rtt_s)
                    return
                if not q:
                    return
                continue
            i = self.policy.pick(self, w, q) if len(q) > 1 else 0
            e = q[i]
            job = self.jobs[e[0]]
            if e[1] == TASK:
                q.pop(i)
                self.start(w, job, t, early_bound=True)
                return
            if job.unbound > 0:
                if sticky:
                    e[3] = True  # with Sticky Batch Probing the probe stays until its job is fully bound
                else:
                    q.pop(i)
                self.bind(w, job, t + self.rtt_s)
                return
            q.pop(i)
            self.wasted += 1
            t += self.rtt_s  # the worker asked and the job had nothing left

    def _done(self, w: int) -> None:
        job = self.jobs[self.running[w]]
        self.running[w] = -1
        self.busy -= 1
        self.late_busy[w] = False
        if self.running_early[w]:
            self.running_early[w] = False
            self.long_count[w] -= 1
            self.early_work_s[w] = max(0.0, self.early_work_s[w] - job.estimate)
        job.done += 1
        if job.done == job.tasks:
            job.finish = self.now
        self._serve(w)

    def run(self) -> RunResult:
        for job in self.jobs:
            self._push(job.arrival, _ARRIVE, job.idx)
        if self.policy.tick_s:
            self._push(0.0, _TICK, 0)
        self._push(0.0, _SAMPLE, 0)
        pending = len(self.jobs)
        while self._events:
            t, _, kind, x = heapq.heappop(self._events)
            self.now = t
            if kind == _DONE:
                job = self.jobs[self.running[x]]
                self._done(x)
                pending -= job.done == job.tasks
            elif kind == _ARRIVE:
                self.policy.submit(self, self.jobs[x])
            elif kind == _SAMPLE:
                if pending:
                    self.busy_share.append(self.busy / self.workers.size)
                    self._push(t + SAMPLE_S, _SAMPLE, 0)
            elif pending:
                self.policy.tick(self)
                self._push(t + self.policy.tick_s, _TICK, 0)
        unfinished = [j.idx for j in self.jobs if math.isnan(j.finish)]
        if unfinished:
            raise RuntimeError(f"{self.policy.name}: {len(unfinished)} jobs never finished (first: {unfinished[0]})")
        results = tuple(JobResult(j.arrival, j.finish, j.long, j.spec.constrained, bool(j.relaxed), j.tasks)
                        for j in self.jobs)
        return RunResult(self.policy.name, results, self.now, self.probes, self.wasted, tuple(self.busy_share))

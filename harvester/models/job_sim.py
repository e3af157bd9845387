"""Jockey's event-based job simulator (EuroSys'12 §4.1) — pure, deterministic given its draws.

§4.1: "The job simulator takes as input these statistics, along with the job's algebra ... and
simulates events in the execution of the job. Events include allocating tasks to machines,
restarting failed tasks and scheduling tasks as their inputs become available. This simulator
captures important features of the job's performance such as outliers ... and barriers".

Mechanism, with `a` guaranteed containers (tokens, §2.1: "each running task uses one token,
which is released upon task completion"):
- a task is READY when its inputs exist: every task of each barrier parent finished, and task i
  of each one_to_one parent finished (models/job_model.py, `Edge`);
- whenever a container is free, the earliest-ready task starts in it (FIFO by ready time; a
  re-run goes before fresh tasks ready at the same instant, as YARN AMs ask for failed attempts
  at a higher priority; then stage order);
- an attempt holds its container for `init + runtime`, both drawn from the stage's
  distributions; it fails with the stage's per-attempt probability, at a uniform fraction of
  that time, and the task becomes ready again at that instant with fresh draws;
- `max_attempts` (default 4 = Hadoop's `mapreduce.map.maxattempts`) failures of one task fail
  the job, as in YARN.
Outliers are the tails of the runtime distributions (and a `Disturbance` in evaluations).

Implementation: a list scheduler. Because a started attempt's end is known at its start, the
run is a sequence of dispatches in non-decreasing start time, each `start = max(earliest free
container, earliest ready task)`; any task not yet known to be ready becomes ready after a
dispatch still to come, hence after that start, so the order is exactly that of the event
simulation. `advance(until)` dispatches every attempt starting before `until`; between calls
the allocation may change (`set_allocation`): more containers are free at once, fewer take
away the next ones to become free (running tasks are never killed, as when a reservation
shrinks). Observers see only what has ended by a time (`done_by`).

All randomness is drawn up front per (task, attempt) by `draw`, so runs at different
allocations with the same draws are common-random-number comparisons (C(p, a) in a is smooth).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from harvester.models.job_model import AttemptRecord, Edge, JobModel, RunRecord, StageRecord

_RETRY, _TASK, _BLOCK = 0, 1, 2  # ready-heap kinds; lower runs first at equal ready time


@dataclass(frozen=True, slots=True)
class Disturbance:
    """Cluster events the model never saw (evaluation only), applied to attempts as they start.

    - `kill_times_s`: at each, a fraction `kill_fraction` of the attempts running then ends
      unsuccessfully (a machine or rack loss: correlated, multiple task failures). As in YARN,
      where a container lost with its node exits ABORTED and MapReduce's RMContainerAllocator
      turns that into TA_KILL, such an attempt is re-run but does not count toward
      `max_attempts`;
    - attempts starting in [`slow_from_s`, `slow_to_s`) take `slow_factor` times longer
      (contention on the shared network and disks the token does not guarantee, §2.1).
    """

    kill_times_s: tuple[float, ...] = ()
    kill_fraction: float = 0.0
    slow_from_s: float = math.inf
    slow_to_s: float = math.inf
    slow_factor: float = 1.0


class CompiledJob:
    """A `JobModel` flattened to task-indexed arrays (task t of stage s is `offsets[s] + i`)."""

    def __init__(self, model: JobModel, max_attempts: int = 4) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        self.model = model
        self.max_attempts = max_attempts
        st = model.stages
        self.n_stages = len(st)
        self.tasks = np.array([s.tasks for s in st], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.tasks)]).astype(np.int64)
        self.n_tasks = int(self.offsets[-1])
        self.stage_of = np.repeat(np.arange(self.n_stages), self.tasks)
        self.barrier_children: list[list[int]] = [[] for _ in st]
        self.o2o_children: list[list[int]] = [[] for _ in st]
        for i, s in enumerate(st):
            for p, e in zip(s.parents, s.edges):
                (self.o2o_children if e is Edge.ONE_TO_ONE else self.barrier_children)[p].append(i)
        self.n_barrier_parents = [sum(e is Edge.BARRIER for e in s.edges) for s in st]
        self.n_o2o_parents = [sum(e is Edge.ONE_TO_ONE for e in s.edges) for s in st]
        self.o2o_wait = [self.n_o2o_parents[s] for s in self.stage_of.tolist()]  # per task
        self.draw_columns = max_attempts + 2  # spare draws for attempts killed by a Disturbance
        self.fail_p = np.array([[s.failure_prob(k) for k in range(self.draw_columns)] for s in st])


@dataclass(frozen=True, slots=True, eq=False)
class Draws:
    """Per (task, attempt): container-holding time, whether it fails, a uniform for disturbances."""

    occupy: list[list[float]]
    failed: list[list[bool]]
    u_kill: list[list[float]]
    init: np.ndarray


def draw(job: CompiledJob, rng: np.random.Generator) -> Draws:
    """Draw every attempt's duration and fate for one run (vectorised per stage)."""
    t, a = job.n_tasks, job.draw_columns
    u = rng.random((5, t, a))
    dur = np.empty((t, a))
    init = np.empty((t, a))
    for s, st in enumerate(job.model.stages):
        sl = slice(int(job.offsets[s]), int(job.offsets[s + 1]))
        init[sl] = st.init.sample(u[1, sl])
        dur[sl] = st.runtime.sample(u[0, sl]) + init[sl]
    failed = u[2] < job.fail_p[job.stage_of]
    occupy = np.where(failed, u[3] * dur, dur)
    return Draws(occupy.tolist(), failed.tolist(), u[4].tolist(), init)


class DagRun:
    """One run of a compiled job on `allocation` guaranteed containers (module docstring)."""

    def __init__(self, job: CompiledJob, draws: Draws, allocation: int, *, start_s: float = 0.0,
                 disturbance: Disturbance | None = None, keep_log: bool = True) -> None:
        if allocation < 1:
            raise ValueError(f"allocation must be >= 1 container, got {allocation}")
        self.job = job
        self.start_s = float(start_s)
        self.now = self.start_s
        self.allocation = int(allocation)
        self.finish_s = math.inf  # when the last task ends (known once it is dispatched)
        self.failed_at = math.inf  # when a task ran out of attempts (the job fails)
        self._draws = draws
        self._dist = disturbance if disturbance and (disturbance.kill_times_s or disturbance.slow_factor != 1.0) else None
        self._slots = [self.start_s] * self.allocation
        self._ready: list[tuple[float, int, int, int]] = []
        self._next = job.offsets[:-1].tolist()
        self._stop = job.offsets[1:].tolist()
        self._attempt = [0] * job.n_tasks
        self._fails = [0] * job.n_tasks
        self._left = job.tasks.tolist()  # tasks per stage still to succeed
        self._stage_end = [self.start_s] * job.n_stages
        self._bwait = list(job.n_barrier_parents)
        self._bready = [self.start_s] * job.n_stages
        self._owait = list(job.o2o_wait)
        self._oready = [self.start_s] * job.n_tasks
        self._stages_left = job.n_stages
        self._log: list[tuple[int, int, float, float, float, bool]] | None = [] if keep_log else None
        self.task_end = [math.inf] * job.n_tasks  # each task's successful end
        self._arrays: tuple[int, tuple[np.ndarray, ...]] | None = None
        for s in range(job.n_stages):
            if not self._bwait[s] and not job.n_o2o_parents[s]:
                self._ready.append((self.start_s, _BLOCK, s, -1))
        heapq.heapify(self._ready)

    # -- driving ------------------------------------------------------------------------------

    def advance(self, until: float) -> None:
        """Dispatch every attempt that starts before `until`; then `now = until`."""
        ready, slots, log, task_end = self._ready, self._slots, self._log, self.task_end
        heappop, heappush, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
        occupy, failed, attempt, fails = self._draws.occupy, self._draws.failed, self._attempt, self._fails
        nxt, stop, left, max_att = self._next, self._stop, self._left, self.job.max_attempts
        ncol, dist, stage_end, o2o = self.job.draw_columns, self._dist, self._stage_end, self.job.o2o_children
        while ready:
            item = ready[0]
            rt = item[0]
            free = slots[0]
            start = free if free > rt else rt
            if start >= until:
                break
            s = item[2]
            if item[1] == _BLOCK:
                task = nxt[s]
                nxt[s] = task + 1
                if task + 1 == stop[s]:
                    heappop(ready)
            else:
                heappop(ready)
                task = item[3]
            k = attempt[task]
            attempt[task] = k + 1
            if k < ncol:
                occ, bad = occupy[task][k], failed[task][k]
            else:  # killed more often than spare draws: the last draw, succeeding
                occ, bad = occupy[task][ncol - 1], False
            killed = False
            if dist is not None:
                occ, bad, killed = self._disturb(task, min(k, ncol - 1), start, occ, bad)
            end = start + occ
            heapreplace(slots, end)
            if log is not None:
                log.append((task, k, rt, start, end, bad))
            if bad:
                if not killed:
                    fails[task] += 1
                    if fails[task] >= max_att:
                        self.failed_at = end
                        ready.clear()
                        break
                heappush(ready, (end, _RETRY, s, task))
                continue
            task_end[task] = end
            if end > stage_end[s]:
                stage_end[s] = end
            left[s] -= 1
            if o2o[s]:
                self._o2o_done(s, task, end)
            if not left[s]:
                self._stage_done(s)
        self.now = max(self.now, until)

    def set_allocation(self, allocation: int) -> None:
        """Change the guaranteed containers from `now` on (after `advance(now)`)."""
        if allocation < 1:
            raise ValueError(f"allocation must be >= 1 container, got {allocation}")
        for _ in range(allocation - self.allocation):
            heapq.heappush(self._slots, self.now)
        for _ in range(self.allocation - allocation):
            heapq.heappop(self._slots)  # the next container to free up is not reused
        self.allocation = int(allocation)

    def run_to_end(self) -> float:
        """Run with the current allocation until the job ends; its finish (inf if it failed)."""
        self.advance(math.inf)
        return self.finish_s if self.failed_at == math.inf else math.inf

    # -- observing ----------------------------------------------------------------------------

    def done_by(self, t: float) -> np.ndarray:
        """Tasks finished successfully by `t`, per stage (what a job manager reports at `t`)."""
        _, stage, _, end, ok = self.arrays()
        return np.bincount(stage[ok & (end <= t)], minlength=self.job.n_stages)

    def running_at(self, t: float) -> np.ndarray:
        """Attempts holding a container at `t`, per stage."""
        _, stage, start, end, _ = self.arrays()
        return np.bincount(stage[(start <= t) & (end > t)], minlength=self.job.n_stages)

    def running_ages(self, t: float) -> list[np.ndarray]:
        """Per stage, how long each attempt running at `t` has held its container (what a job
        manager knows of its running containers: their start, not their end)."""
        _, stage, start, end, _ = self.arrays()
        live = (start <= t) & (end > t)
        return [t - start[live & (stage == s)] for s in range(self.job.n_stages)]

    def pending_at(self, t: float) -> np.ndarray:
        """Tasks ready by `t` but not started, per stage (valid for t <= now: everything starting
        before `now` is dispatched, so what is still in the ready queue waits for a container)."""
        n = np.zeros(self.job.n_stages, dtype=np.int64)
        for rt, kind, s, _ in self._ready:
            if rt <= t:
                n[s] += self._stop[s] - self._next[s] if kind == _BLOCK else 1
        return n

    def ended_by(self, t: float) -> bool:
        return self.finish_s <= t or self.failed_at <= t

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(task, stage, start, end, succeeded) of every attempt dispatched so far."""
        if self._log is None:
            raise ValueError("this run keeps no attempt log (keep_log=False)")
        if self._arrays is None or self._arrays[0] != len(self._log):
            log = np.array(self._log, dtype=np.float64).reshape(-1, 6)
            task = log[:, 0].astype(np.int64)
            self._arrays = (len(self._log), (task, self.job.stage_of[task], log[:, 3], log[:, 4], log[:, 5] == 0))
        task, stage, start, end, ok = self._arrays[1]
        return task, stage, start, end, ok

    def record(self, run_id: str) -> RunRecord:
        """This run as prior-run records (models/job_model.py): what a job history would hold."""
        st = self.job.model.stages
        stages = tuple(StageRecord(s.name, s.tasks, tuple(st[p].name for p in s.parents), s.edges) for s in st)
        init, offsets, stage_of = self._draws.init, self.job.offsets, self.job.stage_of
        attempts = []
        for task, k, ready, start, end, bad in self.attempts_log:
            s = int(stage_of[task])
            attempts.append(AttemptRecord(st[s].name, task - int(offsets[s]), k, start, end,
                                          min(float(init[task, min(k, init.shape[1] - 1)]), end - start), bad, ready))
        return RunRecord(run_id, stages, tuple(attempts))

    @property
    def attempts_log(self) -> list[tuple[int, int, float, float, float, bool]]:
        """(task, attempt, ready, start, end, failed) per dispatched attempt, in start order."""
        if self._log is None:
            raise ValueError("this run keeps no attempt log (keep_log=False)")
        return list(self._log)

    # -- internals ----------------------------------------------------------------------------

    def _disturb(self, task: int, k: int, start: float, occ: float, bad: bool) -> tuple[float, bool, bool]:
        """(holding time, unsuccessful, killed): a kill is not a failure of the task (below)."""
        d = self._dist
        assert d is not None
        if d.slow_from_s <= start < d.slow_to_s:
            occ *= d.slow_factor
        for kt in d.kill_times_s:
            if start < kt < start + occ and self._draws.u_kill[task][k] < d.kill_fraction:
                return kt - start, True, True
        return occ, bad, False

    def _o2o_done(self, s: int, task: int, end: float) -> None:
        i = task - int(self.job.offsets[s])
        for c in self.job.o2o_children[s]:
            ct = int(self.job.offsets[c]) + i
            self._oready[ct] = max(self._oready[ct], end)
            self._owait[ct] -= 1
            if not self._owait[ct] and not self._bwait[c]:
                heapq.heappush(self._ready, (max(self._oready[ct], self._bready[c]), _TASK, c, ct))

    def _stage_done(self, s: int) -> None:
        end = self._stage_end[s]
        for c in self.job.barrier_children[s]:
            self._bwait[c] -= 1
            self._bready[c] = max(self._bready[c], end)
            if self._bwait[c]:
                continue
            if not self.job.n_o2o_parents[c]:
                heapq.heappush(self._ready, (self._bready[c], _BLOCK, c, -1))
                continue
            for ct in range(int(self.job.offsets[c]), int(self.job.offsets[c + 1])):
                if not self._owait[ct]:
                    heapq.heappush(self._ready, (max(self._oready[ct], self._bready[c]), _TASK, c, ct))
        self._stages_left -= 1
        if not self._stages_left:
            self.finish_s = max(self._stage_end)


def simulate(job: CompiledJob, draws: Draws, allocation: int, *, keep_log: bool = True) -> DagRun:
    """One whole run at a fixed allocation (the offline use of §4.1)."""
    run = DagRun(job, draws, allocation, keep_log=keep_log)
    run.run_to_end()
    return run

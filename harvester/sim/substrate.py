"""The YARN-like substrate with primary tenants, driven by the event engine.

Semantics (issue "Simulator", item 4; OSDI'16 §2 and §4.1; issue 16 item 3):
- Capacity: each node's schedulable capacity is whatever the placement policy's `capacity()`
  (or a controller's SetNodeCapacity) last set — total, or total − primary − reserve.
- Scheduling passes run on the NodeManager heartbeat grid (`schedule_interval_s`, YARN's
  1 s default) whenever work is pending and something changed. Jobs are served FIFO by
  submission (the CapacityScheduler's default leaf-queue ordering); the policy places each
  runnable stage's containers on the free capacity.
- A running task wants `vcores × cores_per_vcore` physical cores. When the primary and the
  containers of a server want more than its cores, they SHARE them (sim/sharing.py: the
  recorded per-process sharing by default, `primary_weight`; strict priority with None): the
  batch tasks of that server slow down (processor sharing: every task of the node progresses
  at the node's speed) and the primary is short of what it did not get ("primary not
  served"). Nothing is killed for it: stock YARN never notices; kills come from the RM's rules
  (a capacity cut with `overCommitTimeout` >= 0: the youngest non-AM containers, exactly
  enough, once the timeout passes, ClusterModel.advance), from KillContainer actions, and
  from reimages.
- `reaction_delay_s` (None by default) restores the old substrate-level rule: that long after
  an overload, the youngest containers are killed until primary + batch fit (a primary-aware
  kill without a controller; kept for the small examples and sweeps over it).
- Killed tasks lose their work (wasted CPU-seconds: what they burned) and re-enter their
  stage's queue.
The model's set of nodes is fixed once a substrate is built (policies get read-only views
of its columns); servers leave and come back through `node_down` / `node_up`.
"""

from __future__ import annotations

import heapq
import math
from enum import IntEnum
from typing import Sequence

import numpy as np

from harvester.domain import Resources
from harvester.sim.cluster import ClusterModel, Container, EndCause
from harvester.sim.engine import Engine
from harvester.sim.jobrun import JobRun, StageRun
from harvester.sim.metrics.collector import JobRecord, SimStats
from harvester.sim.sharing import NodeClocks, share, share_one
from harvester.sim.policies import (
    CapacityUpdate,
    ClusterView,
    JobOutcome,
    PlacementPolicy,
    PlacementRequest,
    PolicyError,
)
from harvester.sim.workload import JobSpec

EPS = 1e-9


class Ev(IntEnum):
    """Event kinds of a simulation (the engine orders equal times by push order)."""

    FINISH = 1
    SCHEDULE = 2
    KILL_CHECK = 3
    RM_DEADLINE = 4
    PRIMARY_STEP = 5
    ARRIVAL = 6
    CONTROL = 7
    REIMAGE_DOWN = 8
    REIMAGE_UP = 9


def _alive(c: Container) -> bool:
    return c.ended_at is None


def _np_sum(values: list[float]) -> float:
    """numpy's sum of `values` (its pairwise order), so the few-node path adds the same bits."""
    if len(values) < 2:
        return values[0] if values else 0.0
    return float(np.add.reduce(np.array(values)))


def _ro(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class Substrate:
    """Jobs, containers, kills and scheduling on top of a `ClusterModel` (see module docstring)."""

    def __init__(self, model: ClusterModel, engine: Engine, policy: PlacementPolicy, stats: SimStats, *,
                 rng: np.random.Generator, tenant_of: np.ndarray, step_s: float, cores_per_vcore: float,
                 reaction_delay_s: float | None = None, schedule_interval_s: float = 1.0, cluster_ts: int = 1,
                 origin: float = 0.0, primary_weight: float | None = 1.0) -> None:
        if (reaction_delay_s is not None and reaction_delay_s < 0) or schedule_interval_s <= 0:
            raise ValueError("reaction_delay_s must be >= 0 (or None) and schedule_interval_s > 0")
        if primary_weight is not None and primary_weight <= 0:
            raise ValueError(f"primary_weight must be > 0 (or None: strict priority), got {primary_weight}")
        self.model, self.engine, self.policy, self.stats, self.rng = model, engine, policy, stats, rng
        self.delay = reaction_delay_s
        self.weight = primary_weight
        self.interval = schedule_interval_s
        self.cores_per_vcore = cores_per_vcore
        self.cluster_ts = cluster_ts
        self.origin = origin  # simulated time of t=0: job submit times are relative to it
        n = len(model)
        self._all = np.arange(n)
        self.over_amount = np.zeros(n)   # primary cores wanted and not granted (sharing)
        self.slow_amount = np.zeros(n)   # batch cores wanted and not granted
        self.over_since = np.zeros(n)
        self.primary_got = np.zeros(n)   # what the NM measures (cpu-contention: usage = what one got)
        self.batch_got = np.zeros(n)
        self.clocks = NodeClocks(n)
        self.kill_pending = np.zeros(n, dtype=bool)
        self._free_v = np.zeros(n, dtype=np.int64)
        self._free_m = np.zeros(n, dtype=np.int64)
        # one node at a time (task ends, a pass's nodes): memoryviews of the same buffers give
        # Python numbers, the same IEEE arithmetic at a fraction of a numpy scalar's cost
        self._over_1, self._slow_1, self._since_1 = (memoryview(self.over_amount), memoryview(self.slow_amount),
                                                     memoryview(self.over_since))
        self._pgot_1, self._bgot_1 = memoryview(self.primary_got), memoryview(self.batch_got)
        self._fv_1, self._fm_1 = memoryview(self._free_v), memoryview(self._free_m)
        self._no_room = np.ones(n, dtype=bool)  # free vcores or memory is 0, as of the last refresh
        self._no_room_1 = memoryview(self._no_room)
        self._prim_1, self._bcpu_1, self._cores_1, self._up_1 = (
            memoryview(model.primary_cpu), memoryview(model.container_cpu), memoryview(model.physical_cores),
            memoryview(model.running))
        self._capv_1, self._capm_1 = memoryview(model.cap_vcores), memoryview(model.cap_mem)
        model.track_changes()
        self._queue: list[tuple[int, JobRun]] = []
        self._tasks: dict[str, tuple[JobRun, StageRun, int, float]] = {}  # + progress clock at start
        self._sched_at: float | None = None
        self._rm_due: float | None = None
        self._last_caps: CapacityUpdate | None = None
        self.jobs: list[JobRun] = []
        self.pending_tasks = 0
        self.running_jobs = 0
        self._min_v = self._min_m = 1 << 62  # smallest container vcores / MB submitted so far
        self.tenant_history = np.zeros((0, 0), dtype=np.float32)
        self._static = dict(
            total_vcores=_ro(model.total_vcores), total_memory_mb=_ro(model.total_mem),
            physical_cores=_ro(model.physical_cores), primary_cpu_cores=_ro(model.primary_cpu),
            primary_memory_mb=_ro(model.primary_mem), batch_cpu_cores=_ro(model.container_cpu),
            running=_ro(model.running), tenant_of=_ro(np.asarray(tenant_of)),
            capacity_vcores=_ro(model.cap_vcores), capacity_memory_mb=_ro(model.cap_mem),
            allocated_vcores=_ro(model.alloc_vcores), allocated_memory_mb=_ro(model.alloc_mem),
            free_vcores=_ro(self._free_v), free_memory_mb=_ro(self._free_m),  # views: refreshed in place
            no_room=_ro(self._no_room),
        )
        self._history_of: np.ndarray | None = None
        self._history_ro = self.tenant_history
        self.step_s = step_s
        # task ends never read the clock: they are most events, so skip syncing it for them
        engine.on(Ev.FINISH, self._on_node_finish, sync_clock=False)
        for kind, handler in ((Ev.SCHEDULE, self._on_schedule), (Ev.KILL_CHECK, self._on_kill_check),
                              (Ev.RM_DEADLINE, self._on_rm_deadline)):
            engine.on(kind, handler)

    # --- views ---------------------------------------------------------------------------

    def _refresh_free(self) -> None:
        """free = max(capacity − allocated, 0), 0 on nodes down: recomputed for the nodes the
        model says changed since the last view (all of them after a bulk capacity update)."""
        m = self.model
        every, changed = m.take_changes()
        nodes = set(changed)  # a node is listed once per change
        if every:
            self._refresh_all()
        elif len(nodes) > 16:
            idx = np.fromiter(nodes, dtype=np.int64, count=len(nodes))
            fv = np.maximum(m.cap_vcores[idx] - m.alloc_vcores[idx], 0)
            fm = np.maximum(m.cap_mem[idx] - m.alloc_mem[idx], 0)
            up = m.running[idx]
            fv, fm = np.where(up, fv, 0), np.where(up, fm, 0)
            self._free_v[idx], self._free_m[idx] = fv, fm
            self._no_room[idx] = (fv <= 0) | (fm <= 0)
        else:
            cv, av, cm, am = self._capv_1, m.alloc_vcores1, self._capm_1, m.alloc_mem1
            up, fv, fm, no_room = self._up_1, self._fv_1, self._fm_1, self._no_room_1
            for n in nodes:
                if up[n]:
                    v, mb = max(cv[n] - av[n], 0), max(cm[n] - am[n], 0)
                    fv[n], fm[n], no_room[n] = v, mb, v <= 0 or mb <= 0
                else:
                    fv[n] = fm[n] = 0
                    no_room[n] = True

    def _refresh_all(self) -> None:
        m = self.model
        np.subtract(m.cap_vcores, m.alloc_vcores, out=self._free_v)
        np.subtract(m.cap_mem, m.alloc_mem, out=self._free_m)
        np.maximum(self._free_v, 0, out=self._free_v)
        np.maximum(self._free_m, 0, out=self._free_m)
        self._free_v[~m.running] = 0
        self._free_m[~m.running] = 0
        np.less_equal(np.minimum(self._free_v, self._free_m), 0, out=self._no_room)

    def view(self, now: float) -> ClusterView:
        """A read-only view for policies (free capacity refreshed now)."""
        self._refresh_free()
        if self._history_of is not self.tenant_history:  # a new one each primary step
            self._history_of, self._history_ro = self.tenant_history, _ro(self.tenant_history)
        return ClusterView(now=now, tenant_history=self._history_ro, step_s=self.step_s, rng=self.rng, **self._static)

    # --- jobs ----------------------------------------------------------------------------

    def submit(self, spec: JobSpec, now: float) -> JobRun:
        job = JobRun(spec, len(self.jobs) + 1, f"application_{self.cluster_ts}_{len(self.jobs) + 1:04d}", self.cores_per_vcore)
        self.jobs.append(job)
        self.running_jobs += 1
        self._min_v = min(self._min_v, *(st.vcores for st in job.stages))
        self._min_m = min(self._min_m, *(st.mem for st in job.stages))
        self.pending_tasks += sum(st.tasks for st in job.runnable)
        self._enqueue(job)
        self._want_schedule(now)
        return job

    def _enqueue(self, job: JobRun) -> None:
        if not job.queued and job.finish_s is None:
            job.queued = True
            heapq.heappush(self._queue, (job.seq, job))

    def _want_schedule(self, now: float, at: float | None = None) -> None:
        """A scheduling pass at the first heartbeat at or after `at` (default: now)."""
        if not self._queue:
            return
        t = max(math.ceil((now if at is None else at) / self.interval - 1e-9) * self.interval, now)
        if self._sched_at is not None and self._sched_at <= t:
            return
        self._sched_at = t
        self.engine.push(t, Ev.SCHEDULE)

    # --- scheduling ----------------------------------------------------------------------

    def _on_schedule(self, now: float, _: object) -> None:
        if self._sched_at is not None and now < self._sched_at:
            return  # a later wake-up that an earlier pass superseded
        self._sched_at = None
        if not self._queue:
            return
        self.stats.scheduling_passes += 1
        view = self.view(now)
        free_v, free_m = self._free_v, self._free_m
        full: list[tuple[int, int]] = []
        visited: list[JobRun] = []
        placed: list[int] = []
        cand: np.ndarray | None = None
        while self._queue:
            if any(v <= self._min_v and m <= self._min_m for v, m in full):
                break  # nothing of any size fits anywhere: later jobs cannot run either
            _, job = heapq.heappop(self._queue)
            job.queued = False
            visited.append(job)
            for st in list(job.runnable):
                k = st.pending
                if not k or any(st.vcores >= v and st.mem >= m for v, m in full):
                    continue
                req = PlacementRequest(job.spec.job_id, job.spec.name, st.spec.name, k, st.vcores, st.mem,
                                       self.origin + job.spec.submit_s, job.spec.period_s is not None, job.spec.period_s, job.tasks,
                                       job.max_concurrent)
                nodes = np.asarray(self.policy.place(req, view), dtype=np.int64).ravel()
                if nodes.size:
                    self._launch(job, st, nodes, now)
                    placed.extend(nodes.tolist())
                if nodes.size < k:
                    if cand is None:  # free only shrinks during a pass: look at the nodes with room at its start
                        cand = ((free_v > 0) & (free_m > 0)).nonzero()[0]
                    if not ((free_v[cand] >= st.vcores) & (free_m[cand] >= st.mem)).any():
                        full.append((st.vcores, st.mem))
        for job in visited:
            if job.pending:
                self._enqueue(job)
        if placed:
            nodes_placed = sorted(set(placed))
            if len(nodes_placed) == 1:
                self._account_one(nodes_placed[0], now, reschedule=True)
            elif len(nodes_placed) <= 16:
                self._account_few(nodes_placed, now, reschedule=True)
            else:
                self._account(np.asarray(nodes_placed, dtype=np.int64), now, reschedule=True)
        wake = getattr(self.policy, "wake_at", None)  # optional: a policy whose answers change with time alone
        if wake is not None and self._queue:
            at = wake(now)
            if at is not None and at > now:
                self._want_schedule(now, at)

    def _launch(self, job: JobRun, st: StageRun, nodes: np.ndarray, now: float) -> None:
        """Start containers for `st` on `nodes` after checking the policy's choice fits."""
        if nodes.size > st.pending:
            raise PolicyError(f"policy {self.policy.name} placed {nodes.size} containers for {st.pending} pending tasks")
        node_list = nodes.tolist()
        counts: dict[int, int] = {}
        for n in node_list:
            counts[n] = counts.get(n, 0) + 1
        fv, fm, v, m = self._free_v, self._free_m, st.vcores, st.mem
        if len(counts) <= 32:  # scalar checks beat numpy fancy indexing for a handful of nodes
            fv1, fm1, size = self._fv_1, self._fm_1, fv.shape[0]
            for n, c in counts.items():
                if not 0 <= n < size:
                    raise PolicyError(f"policy {self.policy.name} returned node index {n} outside 0..{size - 1}")
                if fv1[n] < c * v or fm1[n] < c * m:
                    self._misplaced(n, c, st)
            for n, c in counts.items():
                fv1[n] -= c * v
                fm1[n] -= c * m
        else:
            u = np.fromiter(counts.keys(), np.int64, len(counts))
            c_ = np.fromiter(counts.values(), np.int64, len(counts))
            if u.min() < 0 or u.max() >= fv.shape[0]:
                raise PolicyError(f"policy {self.policy.name} returned a node index outside 0..{fv.shape[0] - 1}")
            bad = np.flatnonzero((fv[u] < c_ * v) | (fm[u] < c_ * m))
            if bad.size:
                self._misplaced(int(u[bad[0]]), int(c_[bad[0]]), st)
            fv[u] -= c_ * v
            fm[u] -= c_ * m
        k = nodes.size
        prefix = f"container_{self.cluster_ts}_{job.seq:04d}_01_"
        ids = [f"{prefix}{i:06d}" for i in range(job.containers + 1, job.containers + k + 1)]
        job.containers += k
        started = self.model.allocate_batch(ids, job.app_id, node_list, st.res, now, cpu_cores=st.cpu)
        tasks, durations, add = self._tasks, st.durations, self.clocks.add
        for c, ti in zip(started, st.take(k)):
            tasks[c.container_id] = (job, st, ti, add(c.node, now, durations[ti], c))
        job.attempts += nodes.size
        self.stats.attempts += nodes.size
        self.pending_tasks -= nodes.size
        if job.start_s is None:
            job.start_s = now

    def _misplaced(self, node: int, count: int, st: StageRun) -> None:
        raise PolicyError(f"policy {self.policy.name} placed {count} x {st.vcores} vcores/{st.mem} MB on node "
                          f"{self.model.node_ids[node]} with {self._free_v[node]} vcores/{self._free_m[node]} MB free")

    # --- task ends -----------------------------------------------------------------------

    def _on_node_finish(self, now: float, node: int) -> None:
        """The node's earliest task ends now (stale events, superseded by a reschedule, are skipped)."""
        clocks = self.clocks
        if clocks.queued[node] != now:
            return  # superseded by an earlier finish of the node
        clocks.queued[node] = math.inf
        want = clocks.next_at[node]
        if want != now:  # the finish moved later (or away) since this event was queued: re-arm
            if want != math.inf:
                clocks.queued[node] = want
                self.engine.push(want, Ev.FINISH, node)
            return
        clocks.next_at[node] = math.inf
        for c in clocks.due(node, now, _alive):
            self._complete(c, now)
        if clocks.speed1[node] == 1.0 and self._over_1[node] <= EPS:
            self._reschedule_one(node, now)  # fewer tasks on a node that was not short: nothing to share anew
        else:
            self._account_one(node, now, reschedule=True)
        self._want_schedule(now)

    def _complete(self, c: Container, now: float) -> None:
        self.model.complete(c, now)
        job, st, ti, _ = self._tasks.pop(c.container_id)
        self.stats.useful_cpu_s += st.durations[ti] * c.cpu_cores
        self.stats.tasks_completed += 1
        st.done += 1
        if st.done == st.tasks:
            unlocked = job.stage_done(st)
            if unlocked:
                self.pending_tasks += unlocked
                self._enqueue(job)
            if not job.left:
                self._job_done(job, now)

    def killed(self, containers: Sequence[Container], now: float, cause: str) -> None:
        """Account containers the model already released: waste, stats, tasks back in queue."""
        for c in containers:
            self.model.forget(c.container_id)
            job, st, ti, began = self._tasks.pop(c.container_id)
            wasted = max(0.0, self.clocks.read(c.node, now) - began) * c.cpu_cores  # what it burned
            st.retry.append(ti)
            job.kills += 1
            job.wasted_cpu_s += wasted
            self.stats.kill(cause, wasted)
            self.pending_tasks += 1
            self._enqueue(job)
        if containers:
            self._want_schedule(now)

    def kill_container(self, container_id: str, now: float, graceful: bool) -> Container:
        """A KillContainer action: SIGTERM/SIGKILL; the task re-runs. KeyError if not running."""
        c = self.model.containers.get(container_id)
        if c is None or c.ended_at is not None:
            raise KeyError(f"container {container_id} is not running")
        self.model.release(container_id, now, EndCause.SIGNAL_GRACEFUL if graceful else EndCause.SIGNAL_FORCEFUL)
        self.killed([c], now, "controller")
        self._account(np.array([c.node]), now)
        return c

    def _job_done(self, job: JobRun, now: float) -> None:
        job.finish_s = now
        self.running_jobs -= 1
        self.stats.jobs.append(self.record(job))
        self.policy.job_finished(JobOutcome(job.spec.job_id, job.spec.name, self.origin + job.spec.submit_s, now,
                                            job.tasks, job.kills))

    def record(self, job: JobRun) -> JobRecord:
        """The job's row; times in seconds from the run's start."""
        s, o = job.spec, self.origin
        return JobRecord(s.job_id, s.name, s.source, s.recurring, s.submit_s,
                         None if job.start_s is None else job.start_s - o, None if job.finish_s is None else job.finish_s - o,
                         job.tasks, job.attempts, job.kills, job.wasted_cpu_s)

    # --- primary tenants and kills -------------------------------------------------------

    def primary_step(self, now: float, cpu_cores: np.ndarray) -> None:
        """New primary CPU wanted on every node; the cores are shared anew, then capacities."""
        self.model.set_primary_usage(cpu_cores)
        self._account(self._all, now)
        self.apply_capacity(self.policy.capacity(self.view(now)), now)

    def apply_capacity(self, update: CapacityUpdate | None, now: float) -> None:
        if update is None:
            return
        self.model.set_capacities(self._all, update.vcores, update.memory_mb, now, update.overcommit_timeout_ms)
        self._last_caps = update
        self.sync_rm_deadline(now)
        self._want_schedule(now)

    def _account(self, nodes: np.ndarray, now: float, trigger: bool = True, reschedule: bool = False) -> None:
        """Integrate the primary shortfall and batch slowdown of `nodes` up to now, then share
        their cores anew (sim/sharing.py); tasks of nodes whose speed changed (or all of
        `nodes` with `reschedule`) get their next finish rescheduled."""
        if nodes.size == 1:
            self._account_one(int(nodes[0]), now, trigger, reschedule)
            return
        if nodes.size <= 16:
            self._account_few(nodes.tolist(), now, trigger, reschedule)
            return
        m, st = self.model, self.stats
        prev, slow = self.over_amount[nodes], self.slow_amount[nodes]
        active = (prev > EPS) | (slow > EPS)
        if active.any():
            dt = now - self.over_since[nodes[active]]
            st.unserved_core_s += float((prev[active] * dt).sum())
            st.slowed_core_s += float((slow[active] * dt).sum())
            st.overflow_node_s += float(dt[prev[active] > EPS].sum())
        primary, batch = m.primary_cpu[nodes], m.container_cpu[nodes]
        got_p, got_b = share(primary, batch, m.physical_cores[nodes], self.weight)
        down = ~m.running[nodes]
        if down.any():
            got_p, got_b = np.where(down, 0.0, got_p), np.where(down, 0.0, got_b)
        self.primary_got[nodes], self.batch_got[nodes] = got_p, got_b
        short = np.where(down, 0.0, primary - got_p)
        self.over_amount[nodes] = short
        self.slow_amount[nodes] = np.where(down, 0.0, batch - got_b)
        self.over_since[nodes] = now
        speeds = np.where(batch > EPS, got_b / np.where(batch > EPS, batch, 1.0), 1.0)
        changed = self.clocks.set_speeds(nodes, speeds, now)
        self._reschedule_many(nodes if reschedule else changed, now)
        if trigger and self.delay is not None:
            hit = nodes[(short > EPS) & ~self.kill_pending[nodes]]
            if hit.size:
                self.kill_pending[hit] = True
                self.engine.push(now + self.delay, Ev.KILL_CHECK, hit)

    def _account_one(self, node: int, now: float, trigger: bool = True, reschedule: bool = False) -> None:
        """`_account_few([node])` without its lists (task ends on a shared server call it once
        each: most events of a stock-YARN run); the same arithmetic in the same order."""
        st = self.stats
        over_1, slow_1, since_1 = self._over_1, self._slow_1, self._since_1
        prev, slow = over_1[node], slow_1[node]
        if prev > EPS or slow > EPS:
            dt = now - since_1[node]
            st.unserved_core_s += prev * dt
            st.slowed_core_s += slow * dt
            if prev > EPS:
                st.overflow_node_s += dt
        if self._up_1[node]:
            primary, batch = self._prim_1[node], self._bcpu_1[node]
            got_p, got_b = share_one(primary, batch, self._cores_1[node], self.weight)
            short, slowed = primary - got_p, batch - got_b
        else:
            batch = self._bcpu_1[node]
            got_p = got_b = short = slowed = 0.0
        self._pgot_1[node], self._bgot_1[node] = got_p, got_b
        over_1[node] = short
        slow_1[node] = slowed
        since_1[node] = now
        changed = self.clocks.set_speed(node, got_b / batch if batch > EPS else 1.0, now)
        if reschedule or changed:
            self._reschedule_one(node, now)
        if trigger and self.delay is not None and short > EPS and not self.kill_pending[node]:
            self.kill_pending[node] = True
            self.engine.push(now + self.delay, Ev.KILL_CHECK, np.array([node]))

    def _account_few(self, nodes: list[int], now: float, trigger: bool = True, reschedule: bool = False) -> None:
        """`_account` for a few distinct nodes in Python floats: the same arithmetic, in the same
        order, as the vectorized path (sim/sharing.py `share_one`; the stats add numpy's sum of
        the same products), without numpy's per-call overhead on tiny arrays (task ends and
        scheduling passes touch one to a few nodes each: most events of a run)."""
        st, clocks = self.stats, self.clocks
        over_amount, slow_amount, over_since = self._over_1, self._slow_1, self._since_1
        up, prim, bcpu, cores, pgot, bgot = self._up_1, self._prim_1, self._bcpu_1, self._cores_1, self._pgot_1, self._bgot_1
        unserved: list[float] = []
        slowed_s: list[float] = []
        overflow: list[float] = []
        for node in nodes:
            prev, slow = over_amount[node], slow_amount[node]
            if prev > EPS or slow > EPS:
                dt = now - over_since[node]
                unserved.append(prev * dt)
                slowed_s.append(slow * dt)
                if prev > EPS:
                    overflow.append(dt)
        if unserved:
            st.unserved_core_s += _np_sum(unserved)
            st.slowed_core_s += _np_sum(slowed_s)
            st.overflow_node_s += _np_sum(overflow)
        hit: list[int] = []
        for node in nodes:
            if up[node]:
                primary, batch = prim[node], bcpu[node]
                got_p, got_b = share_one(primary, batch, cores[node], self.weight)
                short, slowed = primary - got_p, batch - got_b
            else:
                batch = bcpu[node]
                got_p = got_b = short = slowed = 0.0
            pgot[node], bgot[node] = got_p, got_b
            over_amount[node] = short
            slow_amount[node] = slowed
            over_since[node] = now
            changed = clocks.set_speed(node, got_b / batch if batch > EPS else 1.0, now)
            if reschedule or changed:
                self._reschedule_one(node, now)
            if trigger and self.delay is not None and short > EPS and not self.kill_pending[node]:
                hit.append(node)
        if hit:
            self.kill_pending[hit] = True
            self.engine.push(now + self.delay, Ev.KILL_CHECK, np.array(hit))

    def _reschedule_one(self, node: int, now: float) -> None:
        clocks = self.clocks
        t = clocks.next_finish(node, now, _alive)
        if t != clocks.next_at[node]:
            clocks.next_at[node] = t
            if t < clocks.queued[node]:  # later than the armed event: that one re-arms for it
                clocks.queued[node] = t
                self.engine.push(t, Ev.FINISH, node)

    def _reschedule_many(self, nodes: np.ndarray, now: float) -> None:
        """`_reschedule_one` for each of `nodes` in order (the same events pushed in the same
        order), their next finishes computed at once."""
        if nodes.size <= 16:
            for node in nodes.tolist():
                self._reschedule_one(node, now)
            return
        clocks, push = self.clocks, self.engine.push
        next_at, queued = clocks.next_at, clocks.queued
        for node, t in zip(nodes.tolist(), clocks.next_finishes(nodes, now, _alive).tolist()):
            if t != next_at[node]:
                next_at[node] = t
                if t < queued[node]:
                    queued[node] = t
                    push(t, Ev.FINISH, node)

    def _on_kill_check(self, now: float, nodes: np.ndarray) -> None:
        self.kill_pending[nodes] = False
        self._account(nodes, now, trigger=False)
        m = self.model
        hot = nodes[self.over_amount[nodes] > EPS]
        for node in hot.tolist():
            victims = []
            for c in m.youngest_first(node):
                if m.primary_cpu[node] + m.container_cpu[node] - m.physical_cores[node] <= EPS:
                    break
                victims.append(m.release(c.container_id, now, EndCause.PRIMARY))
            self.killed(victims, now, "primary")
        if hot.size:
            self._account(hot, now)

    def sync_rm_deadline(self, now: float) -> None:
        """Keep one RM_DEADLINE event at the model's earliest over-commit deadline."""
        due = self.model.next_due()
        if due is not None and (self._rm_due is None or due < self._rm_due):
            self._rm_due = max(due, now)
            self.engine.push(self._rm_due, Ev.RM_DEADLINE)

    def _on_rm_deadline(self, now: float, _: object) -> None:
        if self._rm_due is not None and now < self._rm_due:
            return  # superseded by an earlier one that already ran
        self._rm_due = None
        killed = self.model.advance(now)
        if killed:
            self.killed(killed, now, "rm_overcommit")
            self._account(np.unique(np.array([c.node for c in killed])), now)
        self.sync_rm_deadline(now)

    # --- servers down and up (disk reimages) ---------------------------------------------

    def node_down(self, node: int, now: float) -> None:
        if not self.model.running[node]:
            return
        self._account(np.array([node]), now, trigger=False)
        self.killed(self.model.remove_node(node, now), now, "reimage")
        self.clocks.clear(node)
        self._account(np.array([node]), now, trigger=False)

    def node_up(self, node: int, now: float) -> None:
        if self.model.running[node]:
            return
        self.model.restore_node(node, now)
        if self._last_caps is not None:
            caps = self._last_caps
            self.model.set_capacity(node, Resources(int(caps.memory_mb[node]), int(caps.vcores[node])), now)
        self._account(np.array([node]), now)
        self._want_schedule(now)

    def on_capacity_changed(self, now: float) -> None:
        """Called after a controller changed capacities: deadlines, then a scheduling pass."""
        self.sync_rm_deadline(now)
        self._want_schedule(now)

    def account_until(self, now: float) -> None:
        """Close the books at the end of a run: integrate every open overload up to `now`."""
        self._account(self._all, now, trigger=False)

    def cpu_usage(self) -> tuple[np.ndarray, np.ndarray]:
        """(cores the primary got, cores the containers got) per node: what the NM measures."""
        return self.primary_got, self.batch_got

    def running_containers(self) -> int:
        return len(self._tasks)

    def unfinished(self) -> list[JobRecord]:
        return [self.record(j) for j in self.jobs if j.finish_s is None]

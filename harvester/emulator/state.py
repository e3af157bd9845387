"""The emulated ResourceManager's state over the shared cluster model ("one model, two faces").

`Emulator` owns a `ClusterModel` (node capacity, running containers) and adds the RM's view:
node metadata, the NMs' reported utilization, application/attempt/container records, queues
and the reservation plan. It never reads time itself: every public entry point first catches
up to its injected `Clock` (`sync()`), applying deferred work in time order (dynamics.py):
over-commit deadlines (`ClusterModel.next_due/advance`), timed callbacks, the NM heartbeats at
which the scheduler allocates, the plan follower's steps and the NM resource monitors' grid.

Thread safety: every public method takes `self.lock` (an RLock); the HTTP server and the
background ticker call in from their own threads.

Negative node capacity: the real RM accepts `{"memory":-5,"vCores":-1}` and reports it
(captures/nodes-id-resource-negative-accepted); the cluster model refuses negatives. The
emulator keeps what the RM was told (`declared_*`; when negative it is shown as totalResource,
and available = declared - used) and gives the model the value clamped at 0, which kills and
schedules exactly as the RM does, since nothing fits under either.

The model may be shared: pass the simulator's `ClusterModel` and the emulator serves it (nodes
the simulator added are adopted with default metadata at the next request).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from harvester.clock import Clock
from harvester.domain import Resources
from harvester.emulator.applications import AppManager
from harvester.emulator.contention import host_usage
from harvester.emulator.dynamics import EventQueue, Timing, UtilizationSampler, next_beats, next_heartbeat
from harvester.emulator.exits import nm_timestamp, set_exit_status
from harvester.emulator.lifecycle import ContainerState
from harvester.emulator.plan import ReservationSystem
from harvester.emulator.queues import DEFAULT_QUEUES, QueueConfig, QueueTree
from harvester.emulator.records import VMEM_EXTRA_MB, App, ContainerRecord, new_container_lifecycle
from harvester.emulator.scheduler import Scheduler
from harvester.sim.cluster import ClusterModel, Container, EndCause


@dataclass(frozen=True)
class EmulatorConfig:
    """Static settings of one emulated cluster (defaults: the recorded 3.3.6 pseudo-cluster)."""

    cluster_ts_ms: int | None = None       # ResourceManager.clusterTimeStamp; None = clock at start
    rm_login_user: str = "root"
    web_user: str = "dr.who"               # hadoop.http.staticuser.user: writes without ?user.name=
    rm_web_address: str = "localhost:8088"
    queues: tuple[QueueConfig, ...] = DEFAULT_QUEUES
    max_priority: int = 0                  # yarn.cluster.max-application-priority
    # yarn.scheduler.minimum-allocation-mb / -vcores (recurring-reservation RM log:
    # minimumAllocationFactor 0.875 on 8192 MB nodes = 1024 MB)
    minimum_allocation: Resources = Resources(1024, 1)
    timing: Timing = field(default_factory=Timing)
    log_aggregation_status: str = "DISABLED"
    seed: int = 0                          # NM heartbeat, monitor and plan-follower phases


class Emulator:
    """The state of one emulated RM; see the module docstring."""

    def __init__(self, clock: Clock, config: EmulatorConfig | None = None, model: ClusterModel | None = None) -> None:
        self.clock = clock
        self.config = config or EmulatorConfig()
        self.timing = self.config.timing
        self.lock = threading.RLock()
        self.now = clock.now()
        self.cluster_ts_ms = self.config.cluster_ts_ms or int(self.now * 1000)
        self.model = model if model is not None else ClusterModel()
        self.queues = QueueTree(self.config.queues, self.config.max_priority)
        self.events = EventQueue()
        self._grid_s = self.timing.monitor_grid_s
        if self._grid_s <= 0:
            raise ValueError(f"monitor_grid_s must be positive, got {self._grid_s}")
        self.sampler = UtilizationSampler(max(1, int(round(self.timing.monitor_interval_s / self._grid_s))))
        self._rng = np.random.default_rng(self.config.seed)
        # per-node metadata the model does not hold
        self.http_addresses: list[str] = []
        self.host_mem_mb = np.zeros(0)
        self.registered_ms = np.zeros(0, dtype=np.int64)
        self.hb_phase = np.zeros(0)          # each NM's heartbeat phase in [0, heartbeat_s)
        self.declared_mem = np.zeros(0, dtype=np.int64)
        self.declared_vc = np.zeros(0, dtype=np.int64)
        self.declared_negative = np.zeros(0, dtype=bool)
        self.lag_mem = np.zeros(0, dtype=np.int64)  # RM-killed containers the NM has not reported yet
        self.lag_vc = np.zeros(0, dtype=np.int64)
        self.lag_n = np.zeros(0, dtype=np.int64)
        self.cont_mem_used = np.zeros(0)
        self.cont_vmem = np.zeros(0)
        self.host_index = np.zeros(0, dtype=np.int64)
        self._hosts: dict[str, int] = {}
        self.node_version = np.zeros(0, dtype=np.int64)  # bumps on any change (render cache)
        # RM records
        self.apps: dict[str, App] = {}
        self.app_seq = 0
        self.containers: dict[str, ContainerRecord] = {}
        self.nm_done: dict[int, list[str]] = {}  # node -> DONE containers the NM still lists
        self.primary_patterns: list[Callable[[float], None]] = []
        self.tick_hooks: list[Callable[[float], None]] = []  # called at each monitor grid point
        self._tick_k = int(np.floor(self.now / self._grid_s)) + 1  # the next grid point is _tick_k × grid
        step = self.timing.plan_step_s
        self._next_follow = next_heartbeat(self.now, float(self._rng.random()) * step, step)
        self.apps_mgr = AppManager(self)
        self.plan = ReservationSystem(self)
        self.scheduler = Scheduler(self)

    # --- time -----------------------------------------------------------------------------

    def now_ms(self) -> int:
        return int(round(self.now * 1000))

    def sync(self) -> float:
        """Catch up to the clock; returns the emulator's now (epoch seconds)."""
        with self.lock:
            self._adopt()
            self.advance_to(self.clock.now())
            return self.now

    def advance_to(self, t: float) -> None:
        """Apply everything due up to `t` in time order (see the module docstring)."""
        with self.lock:
            while True:
                t_dead = self.model.next_due()
                t_dead = np.inf if t_dead is None else t_dead
                t_ev = self.events.peek()
                t_follow = self._next_follow
                t_tick = self._tick_k * self._grid_s
                t_sched = self.scheduler.next_time()
                nxt = min(t_dead, t_ev, t_follow, t_tick, t_sched)
                if nxt > t:
                    break
                self.now = max(self.now, nxt)
                if t_dead == nxt:
                    for c in self.model.advance(nxt):
                        self._after_rm_kill(c)
                elif t_ev == nxt:
                    _, fn = self.events.pop()
                    fn(nxt)
                elif t_follow == nxt:
                    self.plan.follow(nxt)
                    self._next_follow = nxt + self.timing.plan_step_s
                elif t_tick == nxt:
                    self._tick(self._tick_k)
                    self._tick_k += 1
                else:
                    self.scheduler.beat(nxt)
            self.now = max(self.now, t)
            self._publish(self.now)

    def _tick(self, k: int) -> None:
        """Point `k` of the NM resource monitors' grid (t = k × monitor_grid_s): tenants' load,
        samples, hooks."""
        t = k * self._grid_s
        for pattern in self.primary_patterns:
            pattern(t)
        self._publish(t)
        beats = next_beats(t, self.hb_phase, self.timing.heartbeat_s)
        self.sampler.sample(k, *self._instant_utilization(), beats)
        for hook in self.tick_hooks:
            hook(t)

    def _publish(self, t: float) -> None:
        changed = self.sampler.publish(t)
        if len(changed):
            self.node_version[changed] += 1

    def _instant_utilization(self) -> tuple[np.ndarray, ...]:
        m = self.model
        cores = m.physical_cores
        # NMs on one host each report the whole host (cpu-burn: both NMs read 2.0), and an
        # oversubscribed host's cores are shared per runnable process (contention.py)
        node_cpu, got = host_usage(self.host_index, cores, m.primary_cpu, m.container_cpu,
                                   lambda i: [c.cpu_cores for c in m.containers_on(i) if c.cpu_cores > 0])
        cont_vcores = got * m.total_vcores / cores
        host_mem = np.bincount(self.host_index, weights=m.primary_mem + self.cont_mem_used,
                               minlength=len(self._hosts))[self.host_index]
        return node_cpu, cont_vcores, host_mem, self.cont_mem_used.copy(), self.cont_vmem.copy()

    # --- nodes ----------------------------------------------------------------------------

    def add_nodes(self, node_ids: Iterable[str], total: Resources, physical_cores: float, *,
                  http_addresses: Iterable[str] | None = None, host_memory_mb: float | None = None,
                  racks: Iterable[str] | None = None, base_memory_mb: float = 1200.0) -> np.ndarray:
        """Register RUNNING NodeManagers; `base_memory_mb` is the host's memory in use at idle."""
        with self.lock:
            ids = list(node_ids)
            idx = self.model.add_nodes(ids, total, physical_cores, racks)
            self._adopt(list(http_addresses) if http_addresses is not None else None,
                        host_memory_mb if host_memory_mb is not None else 3.0 * total.memory_mb, base_memory_mb)
            return idx

    def _adopt(self, http_addresses: list[str] | None = None, host_memory_mb: float | None = None,
               base_memory_mb: float | None = None) -> None:
        """Give the RM's per-node metadata to model nodes it does not know yet.

        Nodes come from `add_nodes` or straight from the simulator, which fills the shared
        model itself (then defaults apply: NM web port 8042, host RAM 3 x the NM's memory).
        """
        m = self.model
        start, n = len(self.http_addresses), len(m)
        if n == start:
            return
        k = n - start
        new = np.arange(start, n)
        hosts = m.hostnames[start:]
        self.http_addresses.extend(http_addresses or [f"{h}:8042" for h in hosts])
        for h in hosts:
            self._hosts.setdefault(h, len(self._hosts))
        self.host_index = np.concatenate([self.host_index, [self._hosts[h] for h in hosts]]).astype(np.int64)
        ram = np.full(k, host_memory_mb) if host_memory_mb is not None else 3.0 * m.total_mem[new]
        self.host_mem_mb = np.concatenate([self.host_mem_mb, ram])
        self.registered_ms = np.concatenate([self.registered_ms, np.full(k, self.now_ms(), dtype=np.int64)])
        self.hb_phase = np.concatenate([self.hb_phase, self._rng.random(k) * self.timing.heartbeat_s])
        self.declared_mem = np.concatenate([self.declared_mem, m.cap_mem[new]])
        self.declared_vc = np.concatenate([self.declared_vc, m.cap_vcores[new]])
        self.declared_negative = np.concatenate([self.declared_negative, np.zeros(k, dtype=bool)])
        for name in ("lag_mem", "lag_vc", "lag_n", "node_version"):
            setattr(self, name, np.concatenate([getattr(self, name), np.zeros(k, dtype=np.int64)]))
        self.cont_mem_used = np.concatenate([self.cont_mem_used, np.zeros(k)])
        self.cont_vmem = np.concatenate([self.cont_vmem, np.zeros(k)])
        if base_memory_mb is not None:  # adopted nodes keep the memory the simulator gave them
            m.set_primary_usage(m.primary_cpu[new], np.full(k, base_memory_mb), nodes=new)
        self.sampler.grow(k, m.primary_mem[new].copy(), self._rng)
        self.scheduler.grow(k)
        self._cluster_resource_changed()

    def pin_heartbeat(self, node_id: str, at: float) -> None:
        """Make the NM heartbeat at time `at` (and every heartbeat interval from it)."""
        with self.lock:
            i = self.model.index(node_id)
            self.hb_phase[i] = at % self.timing.heartbeat_s
            self.scheduler.touch()

    def pin_plan_follower(self, at: float) -> None:
        """Make the reservation plan follower step at time `at` (and every plan step from it)."""
        with self.lock:
            self._next_follow = next_heartbeat(self.now, at % self.timing.plan_step_s, self.timing.plan_step_s)

    def total_resource(self, node: int) -> Resources:
        """The node's totalResource as the RM reports it (what it was told, even negative)."""
        if self.declared_negative[node]:
            return Resources(int(self.declared_mem[node]), int(self.declared_vc[node]))
        return self.model.capacity(node)

    def node_index(self, node_id: str) -> int | None:
        try:
            return self.model.index(node_id)
        except KeyError:
            return None

    def next_heartbeat(self, node: int, after: float) -> float:
        return next_heartbeat(after, float(self.hb_phase[node]), self.timing.heartbeat_s)

    def update_node_resource(self, node: int, memory_mb: int, vcores: int, overcommit_timeout_ms: int) -> None:
        """POST /nodes/{id}/resource as the RM applies it (see module doc for negatives).

        Even an unchanged resource counts as a cluster resource change: the scheduler
        recomputes every queue's effective resources (the recorded "nudge")."""
        with self.lock:
            now = self.now
            if overcommit_timeout_ms > 0:
                # the kill happens at the first NM heartbeat after T (scenario: T=20000 -> 20.96 s)
                due = self.next_heartbeat(node, now + overcommit_timeout_ms / 1000.0)
                timeout = int(round((due - now) * 1000))
            else:
                timeout = overcommit_timeout_ms  # 0: at once (recorded within ~40 ms); -1: never
            self.declared_mem[node] = memory_mb
            self.declared_vc[node] = vcores
            self.declared_negative[node] = memory_mb < 0 or vcores < 0
            self.model.set_capacity(node, Resources(max(memory_mb, 0), max(vcores, 0)), now, max(timeout, -1))
            self.node_version[node] += 1
            self._cluster_resource_changed()

    def _cluster_resource_changed(self) -> None:
        self.queues.update_cluster_resource(self.cluster_resource())
        self.plan.on_cluster_resource_change()
        self.scheduler.touch()

    def set_primary(self, node: int | np.ndarray | slice, cpu_cores: float | np.ndarray,
                    memory_mb: float | np.ndarray | None = None) -> None:
        """The primary tenant's (outside YARN) CPU in physical cores and memory on nodes."""
        with self.lock:
            self.model.set_primary_usage(cpu_cores, memory_mb, nodes=node)

    # --- containers -----------------------------------------------------------------------

    def container_id(self, app: App, attempt_no: int, seq: int) -> str:
        return f"container_{self.cluster_ts_ms}_{app.seq:04d}_{attempt_no:02d}_{seq:06d}"

    def start_container(self, app: App, node: int, resources: Resources, *, is_am: bool, priority: int,
                        allocation_request_id: int, cpu_cores: float, mem_used_mb: float) -> ContainerRecord:
        """Allocate a container (the scheduler's decision); its process starts later (`run`)."""
        att = app.attempt
        assert att is not None
        cid = self.container_id(app, att.number, len(att.containers) + 1)
        self.model.allocate(cid, app.app_id, node, resources, self.now, is_am=is_am, priority=priority, force=True)
        rec = ContainerRecord(cid, app.app_id, att.attempt_id, node, resources, self.now, is_am, priority,
                              allocation_request_id, new_container_lifecycle(cid, self.now),
                              mem_used_mb=mem_used_mb, cpu_cores=cpu_cores)
        self.containers[cid] = rec
        att.containers.append(cid)
        self.node_version[node] += 1
        return rec

    def run(self, rec: ContainerRecord, at: float, then: Callable[[float], None] | None = None) -> None:
        """The NM starts `rec`'s process at `at` (it burns CPU and memory from then on)."""
        def started(t: float) -> None:
            if not rec.live:
                return
            rec.running_at = t
            if rec.lifecycle.can(ContainerState.ACQUIRED):
                rec.lifecycle.to(ContainerState.ACQUIRED, t, "acquired")
            rec.lifecycle.to(ContainerState.RUNNING, t, "process started")
            self.model.set_container_cpu(rec.container_id, rec.cpu_cores)
            self.cont_mem_used[rec.node] += rec.mem_used_mb
            self.cont_vmem[rec.node] += rec.mem_used_mb + VMEM_EXTRA_MB[rec.is_am]
            self.node_version[rec.node] += 1
            if then is not None:
                then(t)

        self.events.at(at, started)

    def end_container(self, cid: str, cause: EndCause, *, exit_code: int | None = None) -> ContainerRecord | None:
        """Stop a running container (task exit, signal, app kill); None if it already ended."""
        rec = self.containers.get(cid)
        if rec is None or not rec.live:
            return None
        self.model.release(cid, self.now, cause)
        self._finish_record(rec, cause, exit_code)
        # the NM reports a finished container at once (an out-of-band heartbeat): the RM may
        # place another container on the node right away
        self.scheduler.touch(rec.node)
        return rec

    def signal_container(self, cid: str, graceful: bool) -> None:
        """GRACEFUL_SHUTDOWN (SIGTERM, exit 143) / FORCEFUL_SHUTDOWN (SIGKILL, exit 137): the
        NM gets the signal at its next heartbeat and the process exits right after."""
        rec = self.containers[cid]
        cause = EndCause.SIGNAL_GRACEFUL if graceful else EndCause.SIGNAL_FORCEFUL
        at = self.next_heartbeat(rec.node, self.now) + self.timing.process_exit_s
        self.events.at(at, lambda t: self.end_container(cid, cause))

    def _after_rm_kill(self, c: Container) -> None:
        """The model killed `c` at an over-commit deadline: NM -106, AM -102. The node's used
        resource keeps it until the NM reports the exit: the NM hears of the kill at its next
        heartbeat and reports the exit at the one after (overcommit-timeout: used 5120 at
        +0.2 s, 3072 by +2.2 s)."""
        rec = self.containers.get(c.container_id)
        if rec is None or not rec.live:
            return
        node = rec.node
        self.lag_mem[node] += rec.resources.memory_mb
        self.lag_vc[node] += rec.resources.vcores
        self.lag_n[node] += 1

        def reported(_: float, node: int = node, res: Resources = rec.resources) -> None:
            self.lag_mem[node] -= res.memory_mb
            self.lag_vc[node] -= res.vcores
            self.lag_n[node] -= 1
            self.node_version[node] += 1
            self.scheduler.touch(node)

        self.events.at(self.next_heartbeat(node, self.next_heartbeat(node, self.now)), reported)
        self._finish_record(rec, EndCause.RM_OVERCOMMIT, None)
        self.scheduler.touch()

    def _finish_record(self, rec: ContainerRecord, cause: EndCause, exit_code: int | None) -> None:
        now = self.now
        rec.finished_at = now
        node = rec.node
        if rec.running_at is not None:
            self.cont_mem_used[node] -= rec.mem_used_mb
            self.cont_vmem[node] -= rec.mem_used_mb + VMEM_EXTRA_MB[rec.is_am]
        if not self.model.containers_on(node):
            self.cont_mem_used[node] = 0.0
            self.cont_vmem[node] = 0.0
        set_exit_status(rec, cause, exit_code, self.nm_timestamp(now), self.apps[rec.app_id].spec.user)
        final = ContainerState.COMPLETED if cause in (EndCause.COMPLETED, EndCause.SIGNAL_GRACEFUL,
                                                      EndCause.SIGNAL_FORCEFUL) else ContainerState.KILLED
        rec.lifecycle.to(final, now, cause.value)
        if cause is not EndCause.APP_KILLED and rec.running_at is not None:
            # the NM lists it as DONE until the RM acknowledged the report (the next heartbeat)
            rec.nm_forget_at = self.next_heartbeat(node, self.next_heartbeat(node, now))
            self.nm_done.setdefault(node, []).append(rec.container_id)
            self.events.at(rec.nm_forget_at, lambda t, n=node, c=rec.container_id: self._nm_forget(n, c))
        self.node_version[node] += 1
        self.apps_mgr.on_container_end(rec, cause)

    def _nm_forget(self, node: int, cid: str) -> None:
        done = self.nm_done.get(node, [])
        if cid in done:
            done.remove(cid)
            self.node_version[node] += 1

    def nm_timestamp(self, t: float) -> str:
        return nm_timestamp(t)

    def live_containers(self, app: App) -> list[ContainerRecord]:
        att = app.attempt
        if att is None:
            return []
        return [self.containers[c] for c in att.containers if self.containers[c].live]

    # --- cluster totals -------------------------------------------------------------------

    def cluster_resource(self) -> Resources:
        run = self.model.running
        return Resources(int(self.model.cap_mem[run].sum()), int(self.model.cap_vcores[run].sum()))

    def cluster_allocated(self) -> Resources:
        run = self.model.running
        return Resources(int(self.model.alloc_mem[run].sum() + self.lag_mem[run].sum()),
                         int(self.model.alloc_vcores[run].sum() + self.lag_vc[run].sum()))

"""The emulated ResourceManager's state over the shared cluster model ("one model, two faces").

`Emulator` owns a `ClusterModel` (node capacity, running containers) and adds the RM's view:
node metadata, the NMs' reported utilization, application/attempt/container records, queues
and the reservation plan. It never reads time itself: every public entry point first catches
up to its injected `Clock` (`sync()`), applying deferred work in time order — over-commit
deadlines through `ClusterModel.next_due/advance`, timed callbacks, and a 1 s tick (NM
heartbeats: utilization samples, scheduling, the reservation plan follower).

Thread safety: every public method takes `self.lock` (an RLock); the HTTP server and the
background ticker call in from their own threads.

Negative node capacity: the real RM accepts `{"memory":-5,"vCores":-1}` and reports it
(captures/nodes-id-resource-negative-accepted); the cluster model refuses negatives. The
emulator keeps what the RM was told (`declared_*`; when negative it is shown as totalResource,
and available = declared - used) and gives the model the value clamped at 0 — which kills and
schedules exactly as the RM does, since nothing fits under either.

The model may be shared: pass the simulator's `ClusterModel` and the emulator serves it (nodes
the simulator added are adopted with default metadata at the next request).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterable

import numpy as np

from harvester.clock import Clock
from harvester.domain import Resources
from harvester.sim.cluster import ClusterModel, Container, EndCause
from harvester.emulator.dynamics import EventQueue, Timing, UtilizationSampler, next_heartbeat
from harvester.emulator.lifecycle import ContainerState
from harvester.emulator.queues import DEFAULT_QUEUES, QueueConfig, QueueTree
from harvester.emulator.records import App, ContainerRecord, new_container_lifecycle

# What each party sees when a container ends (scenarios/overcommit-timeout, signal-and-kill).
EXIT_PREEMPTED = -102          # the AM: "Container preempted by scheduler"
EXIT_KILLED_BY_RM = -106       # the NM: "Container Killed by ResourceManager"
EXIT_ABORTED = -100
# Virtual memory the NM reports on top of a container's resident memory (captures/nodes-running:
# an AM JVM and two `sleep` shells = 127 MB resident, 3079 MB virtual).
VMEM_EXTRA_MB = {True: 2800.0, False: 14.0}  # keyed by "is an AM"


@dataclass(frozen=True)
class EmulatorConfig:
    """Static settings of one emulated cluster (defaults: the recorded 3.3.6 pseudo-cluster)."""

    cluster_ts_ms: int | None = None       # ResourceManager.clusterTimeStamp; None = clock at start
    rm_login_user: str = "root"
    web_user: str = "dr.who"               # hadoop.http.staticuser.user: writes without ?user.name=
    rm_web_address: str = "localhost:8088"
    queues: tuple[QueueConfig, ...] = DEFAULT_QUEUES
    max_priority: int = 0                  # yarn.cluster.max-application-priority
    timing: Timing = field(default_factory=Timing)
    log_aggregation_status: str = "DISABLED"
    seed: int = 0


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
        self.sampler = UtilizationSampler()
        self._rng = np.random.default_rng(self.config.seed)
        # per-node metadata the model does not hold
        self.http_addresses: list[str] = []
        self.host_mem_mb = np.zeros(0)
        self.registered_ms = np.zeros(0, dtype=np.int64)
        self.hb_phase = np.zeros(0)
        self.declared_mem = np.zeros(0, dtype=np.int64)
        self.declared_vc = np.zeros(0, dtype=np.int64)
        self.declared_negative = np.zeros(0, dtype=bool)
        self.lag_mem = np.zeros(0, dtype=np.int64)
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
        self.tick_hooks: list[Callable[[float], None]] = []  # called each 1 s tick (e.g. a simulator's step)
        self._tick_k = int(np.floor(self.now)) + 1
        # components (imported late: they import this module's constants)
        from harvester.emulator.applications import AppManager
        from harvester.emulator.plan import ReservationSystem
        from harvester.emulator.scheduler import Scheduler

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
        """Apply everything due up to `t` in time order (deadlines, callbacks, 1 s ticks)."""
        with self.lock:
            while True:
                t_dead = self.model.next_due()
                t_dead = np.inf if t_dead is None else t_dead
                t_ev = self.events.peek()
                t_tick = float(self._tick_k)
                nxt = min(t_dead, t_ev, t_tick)
                if nxt > t:
                    break
                self.now = max(self.now, nxt)
                if t_dead == nxt:
                    for c in self.model.advance(nxt):
                        self._after_rm_kill(c)
                elif t_ev == nxt:
                    _, fn = self.events.pop()
                    fn(nxt)
                else:
                    self._tick(self._tick_k)
                    self._tick_k += 1
            self.now = max(self.now, t)

    def _tick(self, k: int) -> None:
        t = float(k)
        for pattern in self.primary_patterns:
            pattern(t)
        self.sampler.tick(k, *self._instant_utilization())
        self.node_version[self.sampler.published] += 1
        self.plan.follow(t)
        self.scheduler.schedule(t)
        for hook in self.tick_hooks:
            hook(t)
        for node, cids in list(self.nm_done.items()):
            keep = [c for c in cids if (self.containers[c].nm_forget_at or 0) > t]
            if keep != cids:
                self.nm_done[node] = keep
                self.node_version[node] += 1

    def _instant_utilization(self) -> tuple[np.ndarray, ...]:
        m = self.model
        cores = m.physical_cores
        used = m.primary_cpu + m.container_cpu
        # NMs on one host each report the whole host (cpu-burn: both NMs read 2.0)
        host_used = np.bincount(self.host_index, weights=used, minlength=len(self._hosts))[self.host_index]
        node_cpu = np.minimum(cores, host_used)
        cont_vcores = m.container_cpu * m.total_vcores / cores
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
        self.hb_phase = np.concatenate([self.hb_phase, self._rng.random(k)])
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
        self.plan.on_cluster_resource_change(self.now)

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
        """POST /nodes/{id}/resource as the RM applies it (see module doc for negatives)."""
        with self.lock:
            now = self.now
            if overcommit_timeout_ms > 0:
                # the kill happens at the first NM heartbeat after T (scenario: T=20000 -> 20.96 s)
                due = self.next_heartbeat(node, now + overcommit_timeout_ms / 1000.0)
                timeout = int(round((due - now) * 1000))
            elif overcommit_timeout_ms == 0:
                timeout = int(round(self.timing.rm_kill_delay_s * 1000))
            else:
                timeout = -1
            self.declared_mem[node] = memory_mb
            self.declared_vc[node] = vcores
            self.declared_negative[node] = memory_mb < 0 or vcores < 0
            self.model.set_capacity(node, Resources(max(memory_mb, 0), max(vcores, 0)), now, max(timeout, -1))
            self.node_version[node] += 1
            self.plan.on_cluster_resource_change(now)

    def set_primary(self, node: int | np.ndarray | slice, cpu_cores: float | np.ndarray,
                    memory_mb: float | np.ndarray | None = None) -> None:
        """The primary tenant's (outside YARN) CPU in physical cores and memory on nodes."""
        with self.lock:
            self.model.set_primary_usage(cpu_cores, memory_mb, nodes=node)

    # --- containers -----------------------------------------------------------------------

    def container_id(self, app: App, attempt_no: int, seq: int) -> str:
        return f"container_{self.cluster_ts_ms}_{app.seq:04d}_{attempt_no:02d}_{seq:06d}"

    def start_container(self, app: App, node: int, res: Resources, *, is_am: bool, priority: int,
                        allocation_request_id: int, cpu_cores: float, mem_used_mb: float) -> ContainerRecord:
        attempt = app.attempt
        assert attempt is not None
        cid = self.container_id(app, attempt.number, len(attempt.containers) + 1)
        c = self.model.allocate(cid, app.app_id, node, res, self.now, is_am=is_am, priority=priority,
                                cpu_cores=cpu_cores)
        if c is None:
            raise RuntimeError(f"scheduler placed {cid} on a node where it does not fit")
        rec = ContainerRecord(cid, app.app_id, attempt.attempt_id, node, res, self.now, is_am, priority,
                              allocation_request_id, new_container_lifecycle(cid, self.now),
                              mem_used_mb=mem_used_mb, cpu_cores=cpu_cores)
        rec.lifecycle.path(ContainerState.ACQUIRED, ContainerState.RUNNING, at=self.now, reason="launched")
        self.containers[cid] = rec
        attempt.containers.append(cid)
        self.cont_mem_used[node] += mem_used_mb
        self.cont_vmem[node] += mem_used_mb + VMEM_EXTRA_MB[is_am]
        self.node_version[node] += 1
        return rec

    def end_container(self, cid: str, cause: EndCause, *, exit_code: int | None = None) -> ContainerRecord | None:
        """Stop a running container (task exit, signal, app kill); None if it already ended."""
        rec = self.containers.get(cid)
        if rec is None or not rec.live:
            return None
        self.model.release(cid, self.now, cause)
        self._finish_record(rec, cause, exit_code)
        return rec

    def signal_container(self, cid: str, graceful: bool) -> None:
        """GRACEFUL_SHUTDOWN (SIGTERM, exit 143) / FORCEFUL_SHUTDOWN (SIGKILL, exit 137), delivered
        with the node's next heartbeat (signal-and-kill: 0.94 s and 0.34 s after the POST)."""
        rec = self.containers[cid]
        cause = EndCause.SIGNAL_GRACEFUL if graceful else EndCause.SIGNAL_FORCEFUL
        at = self.next_heartbeat(rec.node, self.now) + self.timing.signal_exit_s
        self.events.at(at, lambda t: self.end_container(cid, cause))

    def _after_rm_kill(self, c: Container) -> None:
        """The model killed `c` at an over-commit deadline: NM -106, AM -102, node used lags."""
        rec = self.containers.get(c.container_id)
        if rec is None or not rec.live:
            return
        node = rec.node
        self.lag_mem[node] += rec.resources.memory_mb
        self.lag_vc[node] += rec.resources.vcores
        self.lag_n[node] += 1

        def clear(_: float, node: int = node, res: Resources = rec.resources) -> None:
            self.lag_mem[node] -= res.memory_mb
            self.lag_vc[node] -= res.vcores
            self.lag_n[node] -= 1
            self.node_version[node] += 1

        self.events.at(self.now + self.timing.node_used_lag_s, clear)
        self._finish_record(rec, EndCause.RM_OVERCOMMIT, None)

    def _finish_record(self, rec: ContainerRecord, cause: EndCause, exit_code: int | None) -> None:
        now = self.now
        rec.finished_at = now
        rec.nm_forget_at = now + self.timing.nm_done_retention_s
        node = rec.node
        self.cont_mem_used[node] -= rec.mem_used_mb
        self.cont_vmem[node] -= rec.mem_used_mb + VMEM_EXTRA_MB[rec.is_am]
        if not self.model.containers_on(node):
            self.cont_mem_used[node] = 0.0
            self.cont_vmem[node] = 0.0
        stamp = self.nm_timestamp(now)
        if cause is EndCause.RM_OVERCOMMIT:
            rec.nm_exit_code, rec.am_exit_status = EXIT_KILLED_BY_RM, EXIT_PREEMPTED
            rec.nm_diagnostics = (f"[{stamp}]Container Killed by ResourceManager\n[{stamp}]Container killed on "
                                  f"request. Exit code is 143\n[{stamp}]Container exited with a non-zero exit code 143. \n")
            rec.am_diagnostics = "Container preempted by scheduler"
        elif cause in (EndCause.SIGNAL_GRACEFUL, EndCause.SIGNAL_FORCEFUL, EndCause.PRIMARY):
            code, sig, cmd = ((143, "SIGTERM", "GRACEFUL_SHUTDOWN") if cause is EndCause.SIGNAL_GRACEFUL
                              else (137, "SIGKILL", "FORCEFUL_SHUTDOWN"))
            rec.nm_exit_code = rec.am_exit_status = code
            rec.nm_diagnostics = (f"[{stamp}]Sent signal {cmd} ({sig}) to pid {self._pid(rec)} "
                                  f"as user {self.apps[rec.app_id].spec.user} for container {rec.container_id}, "
                                  f"result=success\n[{stamp}]Container killed on request. Exit code is {code}\n"
                                  f"[{stamp}]Container exited with a non-zero exit code {code}. \n"
                                  f"[{stamp}]Killed by external signal\n")
            rec.am_diagnostics = rec.nm_diagnostics
        elif cause is EndCause.COMPLETED:
            code = 0 if exit_code is None else exit_code
            rec.nm_exit_code = rec.am_exit_status = code
            if code != 0:
                rec.nm_diagnostics = (f"[{stamp}]Exception from container-launch.\nContainer id: {rec.container_id}\n"
                                      f"Exit code: {code}\n")
        else:  # app killed, node lost
            rec.nm_exit_code = EXIT_KILLED_BY_RM if cause is EndCause.APP_KILLED else EXIT_ABORTED
            rec.am_exit_status = rec.nm_exit_code
            rec.nm_diagnostics = f"[{stamp}]Container Killed by ResourceManager\n"
        final = ContainerState.COMPLETED if cause in (EndCause.COMPLETED, EndCause.SIGNAL_GRACEFUL,
                                                      EndCause.SIGNAL_FORCEFUL) else ContainerState.KILLED
        rec.lifecycle.to(final, now, cause.value)
        if cause is not EndCause.APP_KILLED:
            self.nm_done.setdefault(node, []).append(rec.container_id)
        self.node_version[node] += 1
        self.apps_mgr.on_container_end(rec, cause)

    @staticmethod
    def _pid(rec: ContainerRecord) -> int:
        """A stable process id for NM diagnostics (derived from the container number)."""
        return 30000 + int(rec.container_id.rsplit("_", 1)[1]) * 13 % 20000

    def nm_timestamp(self, t: float) -> str:
        """NM diagnostics time stamps: `2026-11-23 10:37:21.776` (UTC here)."""
        return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

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

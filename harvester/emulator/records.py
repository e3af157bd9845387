"""What the emulated RM remembers about applications, attempts and containers.

The cluster model (`harvester.sim.cluster`) owns node capacity and the running containers'
resources; these records add what only the RM/NM/AM faces need: ids, lifecycles, exit
statuses as each party reports them (NM `exitCode` + diagnostics, AM `exitStatus`), the
app's counters (resource-seconds, preemption counts) and pending resource requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from harvester.domain import Resources
from harvester.emulator.lifecycle import (
    APP_TRANSITIONS,
    ATTEMPT_TRANSITIONS,
    CONTAINER_TRANSITIONS,
    AppState,
    AttemptState,
    ContainerState,
    Lifecycle,
)


# What each party sees when a container ends (scenarios/overcommit-timeout, signal-and-kill).
EXIT_PREEMPTED = -102          # the AM: "Container preempted by scheduler"
EXIT_KILLED_BY_RM = -106       # the NM: "Container Killed by ResourceManager"
EXIT_ABORTED = -100
# Virtual memory the NM reports on top of a container's resident memory (captures/nodes-running:
# an AM JVM and two `sleep` shells = 127 MB resident, 3079 MB virtual).
VMEM_EXTRA_MB = {True: 2800.0, False: 14.0}  # keyed by "is an AM"


class AmKind(str, Enum):
    """How the ApplicationMaster behaves (scenarios: DS never replaces lost containers, MR does)."""

    DISTRIBUTED_SHELL = "distributed-shell"  # registers, runs N workers, replaces none
    MAPREDUCE = "mapreduce"                  # registers with an RPC port, re-runs lost tasks
    COMMAND = "command"                      # a plain AM command (REST submission): never registers


# How long each ApplicationMaster program takes from its container's allocation to its
# registration with the RM (its own start-up: JVM, client libraries), read off the RM logs:
# the DS AM 0.98, 1.37, 1.88 and 2.70 s (cpu-contention, cpu-burn, signal-and-kill,
# overcommit-timeout; the median is the default), the MR AM 2.9-3.1 s (recurring-reservation:
# 54.065 -> 57.193; recurring-reservation-update: 25.135 -> 28.052). A property of the AM
# program, like its size, so it lives in the AppSpec; the RM's own timing follows from heartbeats.
AM_STARTUP_S = {AmKind.DISTRIBUTED_SHELL: 1.6, AmKind.MAPREDUCE: 3.0, AmKind.COMMAND: 0.0}
# A MapReduce task's own start-up (its JVM) before the map's work begins: `sleep -mt T` maps
# completed T + 1.5 .. 4.5 s after their containers were launched, 3 s typically (RM logs of
# recurring-reservation and recurring-reservation-update).
MR_TASK_STARTUP_S = 3.0
# From unregistering to its container's exit (the app is FINISHING meanwhile): the DS AM took
# 0.45 s (cpu-burn: ATTEMPT_UNREGISTERED 42.334, AM container COMPLETED 42.787).
AM_STOP_S = 0.45


@dataclass(frozen=True, slots=True)
class AppSpec:
    """What a submitted application asks for and how its containers behave.

    `worker_duration_s` None = run until killed; `worker_cpu_cores` is the physical cores each
    worker WANTS (a busy loop wants 1.0; under contention it gets its fair share of the host).
    `am_hold_s` is how long a COMMAND AM runs (`sleep N` -> N); None = forever.
    `am_startup_s` None = the AM program's recorded start-up (AM_STARTUP_S); `am_heartbeat_s`
    is its allocate interval (1 s for the DS AM and `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`).
    """

    name: str = "DistributedShell"
    user: str = "root"
    queue: str = "root.default"
    app_type: str = "YARN"
    tags: tuple[str, ...] = ()
    priority: int = 0
    kind: AmKind = AmKind.DISTRIBUTED_SHELL
    am: Resources = Resources(1024, 1)
    workers: int = 0
    worker: Resources = Resources(1024, 1)
    worker_duration_s: float | None = None
    worker_cpu_cores: float = 0.0
    worker_mem_used_mb: float = 6.0
    worker_exit_code: int = 0
    worker_startup_s: float = 0.0  # the task's own start-up before `worker_duration_s` of work
    am_cpu_cores: float = 0.02
    am_mem_used_mb: float = 120.0
    am_hold_s: float | None = None
    reservation_id: str | None = None
    rest_submitted: bool = False
    max_app_attempts: int = 1
    command: str = ""
    am_startup_s: float | None = None
    am_heartbeat_s: float = 1.0
    am_stop_s: float = AM_STOP_S

    @property
    def startup_s(self) -> float:
        return AM_STARTUP_S[self.kind] if self.am_startup_s is None else self.am_startup_s


@dataclass(slots=True)
class Ask:
    """An outstanding resource request (one `resourceRequests` entry)."""

    resources: Resources
    count: int
    priority: int
    allocation_request_id: int
    is_am: bool = False


@dataclass(eq=False)
class ContainerRecord:
    container_id: str
    app_id: str
    attempt_id: str
    node: int
    resources: Resources
    started_at: float
    is_am: bool
    priority: int
    allocation_request_id: int
    lifecycle: Lifecycle[ContainerState]
    mem_used_mb: float = 0.0
    cpu_cores: float = 0.0
    finished_at: float | None = None
    nm_exit_code: int = -1000          # NM's `exitCode` (-1000 = INVALID while running)
    nm_diagnostics: str = ""
    am_exit_status: int | None = None  # what the AM got (ContainerStatus.getExitStatus)
    am_diagnostics: str = ""
    nm_forget_at: float | None = None  # the NM drops a DONE container once the RM acknowledged it
    running_at: float | None = None    # its process runs (the NM started it); None while localizing
    acquired: bool = False             # the AM pulled it in an allocate call (AMs start their own)

    @property
    def live(self) -> bool:
        return self.finished_at is None


@dataclass(eq=False)
class Attempt:
    attempt_id: str
    number: int
    started_at: float
    lifecycle: Lifecycle[AttemptState]
    am_container_id: str | None = None
    am_node: int | None = None
    finished_at: float = 0.0
    diagnostics: str = ""
    containers: list[str] = field(default_factory=list)  # every container ever, allocation order


@dataclass(eq=False)
class App:
    app_id: str
    seq: int
    spec: AppSpec
    submitted_at: float
    lifecycle: Lifecycle[AppState]
    queue: str                      # the REST `queue` field
    leaf: str | None                # the scheduler leaf it sits in (None when rejected)
    priority: int
    final_status: str = "UNDEFINED"
    diagnostics: str = ""
    launched_at: float = 0.0
    finished_at: float = 0.0
    attempts: list[Attempt] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)
    stuck_until_resource_change: bool = False
    activated: bool = False         # the leaf queue activated it (AM limit passed; the first app always is)
    registered_at: float | None = None
    am_beat_at: float | None = None  # the AM's next allocate call already queued (None: none pending)
    unsent_asks: int = 0            # tasks the AM will ask for at its next allocate call
    unseen_done: list[str] = field(default_factory=list)  # ended containers the AM has not heard of yet
    lifetime_expiry_ms: int | None = None
    mem_seconds: float = 0.0        # of ended containers; running ones are added at render time
    vcore_seconds: float = 0.0
    preempted_mb: int = 0
    preempted_vcores: int = 0
    preempted_non_am: int = 0
    preempted_am: int = 0
    preempted_mem_seconds: float = 0.0
    preempted_vcore_seconds: float = 0.0
    workers_started: int = 0
    workers_done: int = 0
    workers_failed: int = 0
    registered: bool = False
    killed_by: str | None = None
    am_resource: Resources = Resources(0, 0)  # the AM request, normalized to the minimum allocation

    @property
    def state(self) -> AppState:
        return self.lifecycle.state

    @property
    def attempt(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None


def new_app_lifecycle(app_id: str, at: float) -> Lifecycle[AppState]:
    return Lifecycle.start(app_id, APP_TRANSITIONS, AppState.NEW, at, "submitted")


def new_attempt_lifecycle(attempt_id: str, at: float) -> Lifecycle[AttemptState]:
    return Lifecycle.start(attempt_id, ATTEMPT_TRANSITIONS, AttemptState.NEW, at, "created")


def new_container_lifecycle(container_id: str, at: float) -> Lifecycle[ContainerState]:
    return Lifecycle.start(container_id, CONTAINER_TRANSITIONS, ContainerState.ALLOCATED, at, "allocated")

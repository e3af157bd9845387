"""Frozen value types shared by every stage (DESIGN.md "What flows through it").

Units are part of the field names: `_mb` megabytes, `_cores` physical cores, `_vcores` YARN
virtual cores, times are epoch seconds (float) unless a name says `_ms`. The RM reports the
whole host's CPU in physical cores and the containers' CPU in vcores (fixtures README); the
conversion harvesting uses lives in one place, `models.tenant_series.primary_cpu_cores`
(it scales by max(configured, current) vcores; `NodeSample.containers_cpu_cores` is the plain
view by the current total only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Mapping


@dataclass(frozen=True, slots=True, order=True)
class Resources:
    """A YARN resource vector (memory in MB, vcores)."""

    memory_mb: int
    vcores: int

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.memory_mb + other.memory_mb, self.vcores + other.vcores)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.memory_mb - other.memory_mb, self.vcores - other.vcores)

    def fits_in(self, other: Resources) -> bool:
        return self.memory_mb <= other.memory_mb and self.vcores <= other.vcores

    @staticmethod
    def zero() -> Resources:
        return Resources(0, 0)


@dataclass(frozen=True, slots=True)
class NodeSample:
    """One observation of one NodeManager, as the RM reports it at `time`.

    `total` is the capacity the scheduler currently uses (it changes when Harvester updates
    the node); `physical_cores` comes from configuration or the node itself and is what turns
    the containers' vcores into cores. Utilization fields are None when the RM has none yet.
    """

    node_id: str
    time: float
    state: str
    rack: str
    hostname: str
    total: Resources
    used: Resources
    num_containers: int
    node_cpu_cores: float | None
    containers_cpu_vcores: float | None
    node_memory_mb: float | None
    containers_memory_mb: float | None
    physical_cores: float | None = None
    labels: tuple[str, ...] = ()  # YARN node labels (`nodeLabels`; empty when labels are disabled)

    @property
    def containers_cpu_cores(self) -> float | None:
        """Containers' CPU in physical cores: vcores usage scaled by cores per vcore.

        The NM reports containers' CPU as `vcores / physical cores * core usage`
        (fixtures README; scenarios/cpu-burn: one busy container on an 8-vcore, 2-core host
        reads ~3.8). Unknown when the node's physical core count is unknown. This scales by the
        CURRENT total vcores only; harvesting decisions use
        `harvester.models.tenant_series.primary_cpu_cores`, which scales by max(NM configured,
        current) vcores because the NM's behaviour after a node resource update is not pinned.
        """
        if self.containers_cpu_vcores is None or not self.physical_cores or self.total.vcores <= 0:
            return None
        return self.containers_cpu_vcores * self.physical_cores / self.total.vcores


@dataclass(frozen=True, slots=True)
class NodeBaseline:
    """A node's total as Harvester first saw it, BEFORE any capacity update of its own.

    Once the guard has updated a node, the RM's `totalResource` is Harvester's own number, so
    the NodeManager's configured size must come from this record (persisted in the history
    store; decisions/strategy.NodeIdentity.baseline).
    """

    node_id: str
    hostname: str
    resources: Resources
    seen_at: float


class ContainerState(str, Enum):
    ALLOCATED = "ALLOCATED"
    ACQUIRED = "ACQUIRED"
    RUNNING = "RUNNING"
    COMPLETE = "COMPLETE"


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    """A running YARN container as seen through the RM (apps → attempts → containers)."""

    container_id: str
    app_id: str
    node_id: str
    resources: Resources
    started_at: float
    is_am: bool
    priority: int
    state: ContainerState = ContainerState.RUNNING


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Everything one telemetry poll saw. `time` is when the poll completed (the Clock's)."""

    time: float
    source: str
    nodes: tuple[NodeSample, ...] = ()
    containers: tuple[ContainerInfo, ...] = ()
    containers_complete: bool = False
    # The ApplicationMasters of the live apps, from the RM's apps list (masterNodeId + amUsed):
    # known without listing every container; `ams_complete` says the list was read this poll.
    am_containers: tuple[ContainerInfo, ...] = ()
    ams_complete: bool = False

    def node(self, node_id: str) -> NodeSample | None:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        return None


# --- Actions: what decisions return and actuators apply (DESIGN.md principles 2 and 4) ------


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """Base of every action: `reason` is the formula that produced it, `stimulus_id` the tick.

    `data_at` is the time (the Clock's epoch seconds) of the observation the action was decided
    from — DESIGN.md principle 16: an actuator drops an action whose data is older than its
    staleness limit at the moment of sending (harvester/actuators/deadline.py). Every decision
    sets it; an action without one (None) has no known age and is never sent by a live actuator.
    """

    kind: ClassVar[str] = "action"  # the label of metrics and logs (set_capacity, kill, ...)
    reason: str
    stimulus_id: str = ""
    data_at: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SetNodeCapacity(Action):
    """Set the capacity the YARN scheduler may use on a node.

    `overcommit_timeout_ms`: -1 lets the node run over-committed (the RM kills nothing);
    >= 0 makes the RM kill its youngest non-AM containers after that many milliseconds.
    """

    kind: ClassVar[str] = "set_capacity"
    node_id: str
    resources: Resources
    overcommit_timeout_ms: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class KillContainer(Action):
    """Signal one container: graceful = SIGTERM (GRACEFUL_SHUTDOWN), else SIGKILL."""

    kind: ClassVar[str] = "kill"
    container_id: str
    node_id: str
    graceful: bool = True


#: What became of an action that was not simply accepted (ActionError.outcome):
#: failed  - not applied: refused locally or by the RM, or it never reached the RM;
#: unknown - it MAY have been applied (read timeout, connection lost after sending, a proxy's
#:           502/503/504, an unreadable 2xx answer): the next snapshot tells, never a retry;
#: dropped - never sent: its data was too old, or the tick's time budget was spent.
OUTCOMES = ("failed", "unknown", "dropped")


@dataclass(frozen=True, slots=True)
class ActionError:
    """An actuation that did not simply succeed, returned as data on the next tick (DESIGN.md
    principle 5); `outcome` is one of `OUTCOMES`, recorded as the RM reported it."""

    action: Action
    time: float
    error: str
    details: dict[str, str] = field(default_factory=dict)
    outcome: str = "failed"


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """One decision a loop acted on (or would have, in a dry run), as `harvester explain` shows
    it (DESIGN.md principle 4): what, on what, why (`reason`: the formula with its numbers),
    from which inputs, from data of which time, and what became of it.

    `loop` is the deciding loop (guard, …); `kind` the action (set_capacity, kill, …); `target`
    its object (node, container, reservation id); `node_id`, `tenant` and `app_id` the subjects
    it touches ('' when none); `fate` sent | would send | not sent | failed|unknown|dropped: <error>;
    `data_as_of` the time of the snapshot it was decided from (None: unknown); `inputs` the
    formula's inputs by name (JSON-able values)."""

    at: float
    loop: str
    kind: str
    target: str
    reason: str
    fate: str
    stimulus_id: str = ""
    detail: str = ""
    node_id: str = ""
    tenant: str = ""
    app_id: str = ""
    data_as_of: float | None = None
    inputs: Mapping[str, Any] = field(default_factory=dict)

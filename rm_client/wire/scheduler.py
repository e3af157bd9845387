"""``/scheduler``: the CapacityScheduler queue tree (captures ``scheduler*``), and
``/queues/{queue}/access`` (capture ``queues-default-access``).

Shape notes (3.3.6, root.default reservable):

* the tree is ``scheduler.schedulerInfo`` (the root, ``"type":"capacityScheduler"``) with
  children under ``queues.queue``; leaves carry ``"type":"capacitySchedulerLeafQueueInfo"``,
  parents no ``type``;
* ``queueName`` is the short name, except the plan's default reservation queue which the RM
  names ``root.default-default``; reservation queues are named after the reservation id.
  :attr:`Queue.path` is built as ``parent.path + "." + queueName`` (so that queue's path reads
  ``root.default.root.default-default``, exactly as the RM's own ``health.operationsInfo``);
* percentages are 0..100 floats; ``absolute*`` are relative to the whole cluster.

Every key of the recorded answers is modelled, so encoding a decoded tree gives the RM's JSON
back; the emulator renders ``/scheduler`` from this same table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rm_client.errors import RMDecodeError
from rm_client.ids import RESERVATION_ID_RE
from rm_client.wire._json import (
    Field,
    Struct,
    dec_str,
    fbool,
    fstrs,
    fcustom,
    ffloat,
    fobj,
    fint,
    flist,
    fstr,
    items,
    join,
    obj,
)
from rm_client.wire.resources import PARTITION_USAGE, PartitionResourceUsage, Resource, field_resource

__all__ = [
    "HealthOperation",
    "HealthRunDetail",
    "Queue",
    "SchedulerHealth",
    "QueueAccess",
    "QueueAcl",
    "QueueCapacities",
    "QueueUser",
    "SchedulerInfo",
    "decode_queue_access",
    "decode_scheduler",
    "encode_queue_access",
    "encode_scheduler",
    "iter_queues",
]


@dataclass(frozen=True, slots=True)
class QueueCapacities:
    """One entry of ``capacities.queueCapacitiesByPartition`` (percents 0..100)."""

    partition_name: str
    capacity: float | None = None
    used_capacity: float | None = None
    max_capacity: float | None = None
    absolute_capacity: float | None = None
    absolute_used_capacity: float | None = None
    absolute_max_capacity: float | None = None
    max_am_limit_percentage: float | None = None
    configured_min_resource: Resource | None = None
    configured_max_resource: Resource | None = None
    effective_min_resource: Resource | None = None
    effective_max_resource: Resource | None = None


QUEUE_CAPACITIES: Struct[QueueCapacities] = Struct(QueueCapacities, [
    fstr("partition_name", "partitionName"),
    ffloat("capacity", "capacity", True),
    ffloat("used_capacity", "usedCapacity", True),
    ffloat("max_capacity", "maxCapacity", True),
    ffloat("absolute_capacity", "absoluteCapacity", True),
    ffloat("absolute_used_capacity", "absoluteUsedCapacity", True),
    ffloat("absolute_max_capacity", "absoluteMaxCapacity", True),
    ffloat("max_am_limit_percentage", "maxAMLimitPercentage", True),
    field_resource("configured_min_resource", "configuredMinResource"),
    field_resource("configured_max_resource", "configuredMaxResource"),
    field_resource("effective_min_resource", "effectiveMinResource"),
    field_resource("effective_max_resource", "effectiveMaxResource"),
])


@dataclass(frozen=True, slots=True)
class QueueAcl:
    access_type: str
    acl: str


QUEUE_ACL: Struct[QueueAcl] = Struct(QueueAcl, [fstr("access_type", "accessType"), fstr("acl", "accessControlList")])


@dataclass(frozen=True, slots=True)
class QueueUser:
    username: str
    resources_used: Resource | None = None
    num_pending_applications: int | None = None
    num_active_applications: int | None = None
    am_resource_used: Resource | None = None
    user_resource_limit: Resource | None = None
    partition_usage: tuple[PartitionResourceUsage, ...] | None = None
    user_weight: float | None = None
    is_active: bool | None = None


QUEUE_USER: Struct[QueueUser] = Struct(QueueUser, [
    fstr("username", "username"),
    field_resource("resources_used", "resourcesUsed"),
    fint("num_pending_applications", "numPendingApplications", True),
    fint("num_active_applications", "numActiveApplications", True),
    field_resource("am_resource_used", "AMResourceUsed"),
    field_resource("user_resource_limit", "userResourceLimit"),
    flist("partition_usage", "resources", PARTITION_USAGE, inner="resourceUsagesByPartition", default=None),
    ffloat("user_weight", "userWeight", True),
    fbool("is_active", "isActive", True),
])


@dataclass(frozen=True, slots=True)
class HealthOperation:
    """One ``health.operationsInfo`` entry: the scheduler's last allocation/release/... ("N/A" if none)."""

    operation: str
    node_id: str = "N/A"
    container_id: str = "N/A"
    queue: str = "N/A"


HEALTH_OPERATION: Struct[HealthOperation] = Struct(HealthOperation, [
    fstr("operation", "operation"),
    fstr("node_id", "nodeId"),
    fstr("container_id", "containerId"),
    fstr("queue", "queue"),
])


@dataclass(frozen=True, slots=True)
class HealthRunDetail:
    """One ``health.lastRunDetails`` entry (``releases``/``allocations``/``reservations``)."""

    operation: str
    count: int
    resources: Resource | None = None


HEALTH_RUN_DETAIL: Struct[HealthRunDetail] = Struct(HealthRunDetail, [
    fstr("operation", "operation"),
    fint("count", "count"),
    field_resource("resources", "resources"),
])


@dataclass(frozen=True, slots=True)
class SchedulerHealth:
    """The root's ``health`` block (CapacitySchedulerHealthInfo)."""

    last_run_ms: int
    operations: tuple[HealthOperation, ...] = ()
    last_run_details: tuple[HealthRunDetail, ...] = ()


SCHEDULER_HEALTH: Struct[SchedulerHealth] = Struct(SchedulerHealth, [
    fint("last_run_ms", "lastrun"),
    flist("operations", "operationsInfo", HEALTH_OPERATION),
    flist("last_run_details", "lastRunDetails", HEALTH_RUN_DETAIL),
])


def _dec_template(raw: Any, where: str, key: str) -> dict[str, Any]:
    return obj(raw, where, key)


def _enc_template(value: dict[str, Any], strings: bool) -> dict[str, Any]:
    return dict(value)


@dataclass(frozen=True, slots=True)
class Queue:
    """A CapacityScheduler queue. ``kind`` is ``root``, ``parent`` or ``leaf``; leaf-only
    fields are None on parents. Lifetimes are seconds (-1 = unlimited)."""

    name: str
    capacity_percent: float
    used_capacity_percent: float
    max_capacity_percent: float
    type: str | None = None
    path: str = ""
    state: str | None = None
    absolute_capacity_percent: float | None = None
    absolute_max_capacity_percent: float | None = None
    absolute_used_capacity_percent: float | None = None
    num_applications: int | None = None
    is_absolute_resource: bool | None = None
    resources_used: Resource | None = None
    hide_reservation_queues: bool | None = None
    node_labels: tuple[str, ...] = ()
    allocated_containers: int | None = None
    reserved_containers: int | None = None
    pending_containers: int | None = None
    capacities: tuple[QueueCapacities, ...] = ()
    health: SchedulerHealth | None = None
    partition_usage: tuple[PartitionResourceUsage, ...] | None = None
    min_effective_capacity: Resource | None = None
    max_effective_capacity: Resource | None = None
    maximum_allocation: Resource | None = None
    acls: tuple[QueueAcl, ...] = ()
    queue_priority: int | None = None
    ordering_policy: str | None = None
    auto_create_child_queue_enabled: bool | None = None
    leaf_queue_template: dict[str, Any] | None = None
    num_active_applications: int | None = None
    num_pending_applications: int | None = None
    num_containers: int | None = None
    max_applications: int | None = None
    max_applications_per_user: int | None = None
    user_limit_percent: int | None = None
    users: tuple[QueueUser, ...] | None = None
    user_limit_factor: float | None = None
    configured_max_am_resource_limit: float | None = None
    am_resource_limit: Resource | None = None
    used_am_resource: Resource | None = None
    user_am_resource_limit: Resource | None = None
    preemption_disabled: bool | None = None
    intra_queue_preemption_disabled: bool | None = None
    default_priority: int | None = None
    is_auto_created_leaf_queue: bool | None = None
    max_application_lifetime_s: int | None = None
    default_application_lifetime_s: int | None = None
    children: tuple[Queue, ...] = ()

    @property
    def kind(self) -> str:
        if self.type == "capacityScheduler":
            return "root"
        return "leaf" if self.type == "capacitySchedulerLeafQueueInfo" else "parent"

    @property
    def is_reservation_queue(self) -> bool:
        """A queue the reservation system created for one reservation (named by its id)."""
        return RESERVATION_ID_RE.fullmatch(self.name) is not None


def _dec_children(raw: Any, where: str, key: str) -> tuple[Queue, ...]:
    w = join(join(where, key), "queue")
    return tuple(QUEUE.decode(q, f"{w}[{i}]") for i, q in enumerate(items(obj(raw, where, key).get("queue"), w)))


def _enc_children(children: tuple[Queue, ...], strings: bool) -> dict[str, Any]:
    return {"queue": [QUEUE.encode(c) for c in children]}


_QUEUE_FIELDS: list[Field] = [
    fstr("type", "type", True),
    ffloat("capacity_percent", "capacity"),
    ffloat("used_capacity_percent", "usedCapacity"),
    ffloat("max_capacity_percent", "maxCapacity"),
    ffloat("absolute_capacity_percent", "absoluteCapacity", True),
    ffloat("absolute_max_capacity_percent", "absoluteMaxCapacity", True),
    ffloat("absolute_used_capacity_percent", "absoluteUsedCapacity", True),
    fint("num_applications", "numApplications", True),
    fstr("name", "queueName"),
    fbool("is_absolute_resource", "isAbsoluteResource", True),
    fstr("state", "state", True),
    fcustom("children", "queues", _dec_children, _enc_children, True, ()),
    field_resource("resources_used", "resourcesUsed"),
    fbool("hide_reservation_queues", "hideReservationQueues", True),
    fstrs("node_labels", "nodeLabels"),
    fint("allocated_containers", "allocatedContainers", True),
    fint("reserved_containers", "reservedContainers", True),
    fint("pending_containers", "pendingContainers", True),
    flist("capacities", "capacities", QUEUE_CAPACITIES, inner="queueCapacitiesByPartition"),
    fobj("health", "health", SCHEDULER_HEALTH, True),
    flist("partition_usage", "resources", PARTITION_USAGE, inner="resourceUsagesByPartition", default=None),
    field_resource("min_effective_capacity", "minEffectiveCapacity"),
    field_resource("max_effective_capacity", "maxEffectiveCapacity"),
    field_resource("maximum_allocation", "maximumAllocation"),
    flist("acls", "queueAcls", QUEUE_ACL, inner="queueAcl"),
    fint("queue_priority", "queuePriority", True),
    fstr("ordering_policy", "orderingPolicyInfo", True),
    fbool("auto_create_child_queue_enabled", "autoCreateChildQueueEnabled", True),
    fcustom("leaf_queue_template", "leafQueueTemplate", _dec_template, _enc_template, True),
    fint("num_active_applications", "numActiveApplications", True),
    fint("num_pending_applications", "numPendingApplications", True),
    fint("num_containers", "numContainers", True),
    fint("max_applications", "maxApplications", True),
    fint("max_applications_per_user", "maxApplicationsPerUser", True),
    fint("user_limit_percent", "userLimit", True),
    flist("users", "users", QUEUE_USER, inner="user", default=None),
    ffloat("user_limit_factor", "userLimitFactor", True),
    ffloat("configured_max_am_resource_limit", "configuredMaxAMResourceLimit", True),
    field_resource("am_resource_limit", "AMResourceLimit"),
    field_resource("used_am_resource", "usedAMResource"),
    field_resource("user_am_resource_limit", "userAMResourceLimit"),
    fbool("preemption_disabled", "preemptionDisabled", True),
    fbool("intra_queue_preemption_disabled", "intraQueuePreemptionDisabled", True),
    fint("default_priority", "defaultPriority", True),
    fbool("is_auto_created_leaf_queue", "isAutoCreatedLeafQueue", True),
    fint("max_application_lifetime_s", "maxApplicationLifetime", True),
    fint("default_application_lifetime_s", "defaultApplicationLifetime", True),
]
QUEUE: Struct[Queue] = Struct(Queue, _QUEUE_FIELDS)


@dataclass(frozen=True, slots=True)
class SchedulerInfo:
    """``type`` is ``capacityScheduler`` (``root`` set), or another scheduler (``root`` None:
    Harvester needs the CapacityScheduler)."""

    type: str
    root: Queue | None


def _with_paths(q: Queue, parent_path: str, depth: int) -> Queue:
    if depth > 64:
        raise RMDecodeError("queue tree nested deeper than 64 levels", where="scheduler")
    path = f"{parent_path}.{q.name}" if parent_path else q.name
    children = tuple(_with_paths(c, path, depth + 1) for c in q.children)
    return dataclasses.replace(q, path=path, children=children)


def decode_scheduler(doc: Any) -> SchedulerInfo:
    info = obj(obj(obj(doc, "").get("scheduler"), "scheduler").get("schedulerInfo"), "scheduler.schedulerInfo")
    kind = dec_str(info.get("type", ""), "scheduler.schedulerInfo", "type")
    if kind != "capacityScheduler":
        return SchedulerInfo(type=kind, root=None)
    try:
        root = QUEUE.decode(info, "scheduler.schedulerInfo")
    except RecursionError:
        raise RMDecodeError("queue tree nested too deeply", where="scheduler.schedulerInfo") from None
    return SchedulerInfo(type=kind, root=_with_paths(root, "", 0))


def encode_scheduler(info: SchedulerInfo) -> dict[str, Any]:
    body = QUEUE.encode(info.root) if info.root is not None else {}
    body["type"] = info.type
    return {"scheduler": {"schedulerInfo": body}}


def iter_queues(queue: Queue, depth: int = 0) -> Any:
    """Depth-first ``(depth, queue)`` pairs, parents before their children."""
    yield depth, queue
    for child in queue.children:
        yield from iter_queues(child, depth + 1)


@dataclass(frozen=True, slots=True)
class QueueAccess:
    """``/queues/{queue}/access?user=..&queue-acl-type=..`` (``allowed`` arrives as "true")."""

    allowed: bool
    user: str
    diagnostics: str = ""


QUEUE_ACCESS: Struct[QueueAccess] = Struct(QueueAccess, [
    fbool("allowed", "allowed"),
    fstr("user", "user"),
    fstr("diagnostics", "diagnostics", True, ""),
])


def decode_queue_access(doc: Any) -> QueueAccess:
    return QUEUE_ACCESS.decode(doc, "")


def encode_queue_access(access: QueueAccess) -> dict[str, Any]:
    out = QUEUE_ACCESS.encode(access, strings=True)
    out["diagnostics"] = access.diagnostics
    return out

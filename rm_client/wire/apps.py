"""``/apps`` and ``/apps/{id}`` (captures ``apps-*``; scenarios: every app poll).

Quirks kept faithfully:

* ``resourceSecondsMap``/``preemptedResourceSecondsMap`` are maps written with REPEATED
  ``entry`` keys and string values: ``{"entry":{"key":"memory-mb","value":"35044"},
  "entry":{"key":"vcores","value":"65"}}`` (read with :func:`rm_client.wire._json.loads`);
* ``applicationTags`` is one comma-separated string;
* after an app finishes, ``allocatedMB``/``allocatedVCores``/``reservedMB``/
  ``reservedVCores``/``runningContainers`` read ``-1`` (capture ``apps-id-killed``);
* an app whose AM never registers (a plain ``sleep`` submitted over REST) stays ACCEPTED while
  its AM container runs, then FAILS when the container exits, even with exit code 0
  (capture ``apps-id-rest-app-final``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rm_client.wire._json import (
    RepeatedKeys,
    Struct,
    dec_int,
    decode_list,
    encode_list,
    dec_str,
    fail,
    fbool,
    fcustom,
    ffloat,
    fint,
    flist,
    fobj,
    fstr,
    items,
    join,
    obj,
)
from rm_client.wire.resources import PARTITION_USAGE, PartitionResourceUsage, Resource, field_resource

__all__ = [
    "APP",
    "App",
    "AppTimeout",
    "ExecutionTypeRequest",
    "ResourceRequest",
    "APP_TIMEOUT",
    "decode_app",
    "decode_apps",
    "decode_entry_map",
    "encode_app",
    "encode_apps",
    "encode_entry_map",
]

# YarnApplicationState and FinalApplicationStatus values of 3.3.6 (used to check filters).
APP_STATES = ("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED")
FINAL_STATUSES = ("UNDEFINED", "SUCCEEDED", "FAILED", "KILLED", "ENDED")


def decode_entry_map(raw: Any, where: str, key: str) -> tuple[tuple[str, int], ...]:
    """A JAXB map ``{"entry":[{"key":k,"value":"v"}, ...]}`` (entries may be repeated keys,
    a single object, or absent = empty) -> ``((k, v), ...)`` with integer values."""
    w = join(where, key)
    out = []
    for i, e in enumerate(items(obj(raw, w).get("entry"), w, "entry")):
        we = f"{w}.entry[{i}]"
        e = obj(e, we)
        k, v = e.get("key"), e.get("value")
        if k is None or v is None:
            raise fail(we, "key" if k is None else "value", "missing in map entry")
        out.append((dec_str(k, we, "key"), dec_int(v, we, "value")))
    return tuple(out)


def encode_entry_map(pairs: tuple[tuple[str, int], ...], strings: bool = False, *,
                     repeated: bool = True) -> dict[str, Any]:
    """The RM's map form. ``repeated``: several entries as repeated ``entry`` keys (AppInfo's
    maps); otherwise as a JSON array (ContainerInfo's ``allocatedResources``)."""
    entries = [{"key": k, "value": str(v)} for k, v in pairs]
    if not entries:
        return {}
    if len(entries) == 1:
        return {"entry": entries[0]}
    return RepeatedKeys(("entry", e) for e in entries) if repeated else {"entry": entries}


def _dec_tags(raw: Any, where: str, key: str) -> tuple[str, ...]:
    text = dec_str(raw, where, key)
    return tuple(t for t in text.split(",") if t)


def _enc_tags(tags: tuple[str, ...], strings: bool) -> str:
    return ",".join(tags)


@dataclass(frozen=True, slots=True)
class ExecutionTypeRequest:
    execution_type: str
    enforce_execution_type: bool


EXECUTION_TYPE_REQUEST: Struct[ExecutionTypeRequest] = Struct(ExecutionTypeRequest, [
    fstr("execution_type", "executionType"),
    fbool("enforce_execution_type", "enforceExecutionType"),
])


@dataclass(frozen=True, slots=True)
class ResourceRequest:
    """An outstanding ask of the app (only while it has pending containers)."""

    priority: int
    resource_name: str
    capability: Resource | None
    num_containers: int
    relax_locality: bool | None = None
    allocation_request_id: int | None = None
    node_label_expression: str | None = None
    execution_type_request: ExecutionTypeRequest | None = None


RESOURCE_REQUEST: Struct[ResourceRequest] = Struct(ResourceRequest, [
    fint("priority", "priority"),
    fint("allocation_request_id", "allocationRequestId", True),
    fstr("resource_name", "resourceName"),
    field_resource("capability", "capability"),
    fint("num_containers", "numContainers"),
    fbool("relax_locality", "relaxLocality", True),
    fstr("node_label_expression", "nodeLabelExpression", True),
    fobj("execution_type_request", "executionTypeRequest", EXECUTION_TYPE_REQUEST, True),
])


@dataclass(frozen=True, slots=True)
class AppTimeout:
    """``expiry_time`` is ISO-8601 (``2030-01-01T00:00:00.000+0000``) or ``UNLIMITED``;
    ``remaining_time_s`` is -1 when unlimited."""

    type: str
    expiry_time: str
    remaining_time_s: int


APP_TIMEOUT: Struct[AppTimeout] = Struct(AppTimeout, [
    fstr("type", "type"),
    fstr("expiry_time", "expiryTime"),
    fint("remaining_time_s", "remainingTimeInSeconds"),
])

_entry_map_field = (decode_entry_map, encode_entry_map)


@dataclass(frozen=True, slots=True)
class App:
    """One application. Times in epoch ms (``finished_time_ms`` 0 while running); memory in
    MB; ``memory_seconds`` in MB-seconds; ``progress_percent`` 0..100."""

    id: str
    user: str
    name: str
    queue: str
    state: str
    final_status: str
    progress_percent: float
    application_type: str
    started_time_ms: int
    finished_time_ms: int
    elapsed_time_ms: int
    allocated_mb: int
    allocated_vcores: int
    running_containers: int
    tracking_ui: str | None = None
    tracking_url: str | None = None
    diagnostics: str | None = None
    cluster_id: int | None = None
    application_tags: tuple[str, ...] = ()
    priority: int | None = None
    launch_time_ms: int | None = None
    am_container_logs: str | None = None
    am_host_http_address: str | None = None
    am_rpc_address: str | None = None
    master_node_id: str | None = None
    reserved_mb: int | None = None
    reserved_vcores: int | None = None
    memory_seconds: int | None = None
    vcore_seconds: int | None = None
    queue_usage_percent: float | None = None
    cluster_usage_percent: float | None = None
    resource_seconds: tuple[tuple[str, int], ...] = ()
    preempted_resource_mb: int | None = None
    preempted_resource_vcores: int | None = None
    num_non_am_container_preempted: int | None = None
    num_am_container_preempted: int | None = None
    preempted_memory_seconds: int | None = None
    preempted_vcore_seconds: int | None = None
    preempted_resource_seconds: tuple[tuple[str, int], ...] = ()
    resource_requests: tuple[ResourceRequest, ...] = ()
    log_aggregation_status: str | None = None
    unmanaged_application: bool | None = None
    app_node_label_expression: str | None = None
    am_node_label_expression: str | None = None
    partition_usage: tuple[PartitionResourceUsage, ...] | None = None
    timeouts: tuple[AppTimeout, ...] = ()

    @property
    def is_finished(self) -> bool:
        return self.state in ("FINISHED", "FAILED", "KILLED")


APP: Struct[App] = Struct(App, [
    fstr("id", "id"),
    fstr("user", "user"),
    fstr("name", "name"),
    fstr("queue", "queue"),
    fstr("state", "state"),
    fstr("final_status", "finalStatus"),
    ffloat("progress_percent", "progress"),
    fstr("tracking_ui", "trackingUI", True),
    fstr("tracking_url", "trackingUrl", True),
    fstr("diagnostics", "diagnostics", True),
    fint("cluster_id", "clusterId", True),
    fstr("application_type", "applicationType"),
    fcustom("application_tags", "applicationTags", _dec_tags, _enc_tags, True, (), always=True),
    fint("priority", "priority", True),
    fint("started_time_ms", "startedTime"),
    fint("launch_time_ms", "launchTime", True),
    fint("finished_time_ms", "finishedTime"),
    fint("elapsed_time_ms", "elapsedTime"),
    fstr("am_container_logs", "amContainerLogs", True),
    fstr("am_host_http_address", "amHostHttpAddress", True),
    fstr("am_rpc_address", "amRPCAddress", True),
    fstr("master_node_id", "masterNodeId", True),
    fint("allocated_mb", "allocatedMB"),
    fint("allocated_vcores", "allocatedVCores"),
    fint("reserved_mb", "reservedMB", True),
    fint("reserved_vcores", "reservedVCores", True),
    fint("running_containers", "runningContainers"),
    fint("memory_seconds", "memorySeconds", True),
    fint("vcore_seconds", "vcoreSeconds", True),
    ffloat("queue_usage_percent", "queueUsagePercentage", True),
    ffloat("cluster_usage_percent", "clusterUsagePercentage", True),
    fcustom("resource_seconds", "resourceSecondsMap", *_entry_map_field, True, (), always=True),
    fint("preempted_resource_mb", "preemptedResourceMB", True),
    fint("preempted_resource_vcores", "preemptedResourceVCores", True),
    fint("num_non_am_container_preempted", "numNonAMContainerPreempted", True),
    fint("num_am_container_preempted", "numAMContainerPreempted", True),
    fint("preempted_memory_seconds", "preemptedMemorySeconds", True),
    fint("preempted_vcore_seconds", "preemptedVcoreSeconds", True),
    fcustom("preempted_resource_seconds", "preemptedResourceSecondsMap", *_entry_map_field, True, (),
            always=True),
    flist("resource_requests", "resourceRequests", RESOURCE_REQUEST),
    fstr("log_aggregation_status", "logAggregationStatus", True),
    fbool("unmanaged_application", "unmanagedApplication", True),
    fstr("app_node_label_expression", "appNodeLabelExpression", True),
    fstr("am_node_label_expression", "amNodeLabelExpression", True),
    flist("partition_usage", "resourceInfo", PARTITION_USAGE, inner="resourceUsagesByPartition", default=None),
    flist("timeouts", "timeouts", APP_TIMEOUT, inner="timeout", always=True),
])


def decode_app(doc: Any) -> App:
    """``{"app":{...}}`` (GET /apps/{id})."""
    return APP.decode(obj(doc, "").get("app"), "app")


def decode_apps(doc: Any) -> tuple[App, ...]:
    """``{"apps":{"app":[...]}}``; ``{"apps":{}}`` (recorded) = no apps."""
    return decode_list(doc, "apps", "app", APP)


def encode_app(app: App) -> dict[str, Any]:
    return {"app": APP.encode(app)}


def encode_apps(apps: tuple[App, ...] | list[App]) -> dict[str, Any]:
    return encode_list("apps", "app", apps, APP)

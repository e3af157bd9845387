"""App attempts and their containers (captures ``apps-id-appattempts*``).

Two DAO families answer here, with different number conventions (both recorded):

* ``/apps/{id}/appattempts`` -> RM ``AppAttemptsInfo``: JSON numbers, ``id`` = attempt number;
* ``/apps/{id}/appattempts/{attempt}`` and ``.../containers[/{id}]`` -> the generic
  ``server.webapp.dao`` ``AppAttemptInfo``/``ContainerInfo``: EVERY value a string
  (``"allocatedMB":"512"``, ``"rpcPort":"-1"``); they are decoded to ints and encoded back as
  strings.

An attempt that has not launched its AM yet has ``"containerId":""`` (capture
``apps-id-appattempts-rest-app``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rm_client.wire._json import Struct, collapse, decode_list, encode_list, fcustom, fint, fstr
from rm_client.wire.apps import decode_entry_map, encode_entry_map

__all__ = [
    "APP_ATTEMPT",
    "APP_ATTEMPT_DETAIL",
    "CONTAINER",
    "AppAttempt",
    "AppAttemptDetail",
    "Container",
    "decode_app_attempt",
    "decode_app_attempts",
    "decode_container",
    "decode_containers",
    "encode_app_attempt",
    "encode_app_attempts",
    "encode_container",
    "encode_containers",
]


@dataclass(frozen=True, slots=True)
class AppAttempt:
    """An entry of ``appAttempts.appAttempt``. ``container_id`` is the AM container
    (``""`` until the AM is allocated)."""

    attempt_number: int
    attempt_id: str
    start_time_ms: int
    finished_time_ms: int
    container_id: str
    node_id: str
    node_http_address: str
    logs_link: str
    blacklisted_nodes: str | None = None
    nodes_blacklisted_by_system: str | None = None
    export_ports: str | None = None

    @property
    def am_container_id(self) -> str | None:
        return self.container_id or None


APP_ATTEMPT: Struct[AppAttempt] = Struct(AppAttempt, [
    fint("attempt_number", "id"),
    fint("start_time_ms", "startTime"),
    fint("finished_time_ms", "finishedTime"),
    fstr("container_id", "containerId"),
    fstr("node_http_address", "nodeHttpAddress"),
    fstr("node_id", "nodeId"),
    fstr("logs_link", "logsLink"),
    fstr("blacklisted_nodes", "blacklistedNodes", True),
    fstr("nodes_blacklisted_by_system", "nodesBlacklistedBySystem", True),
    fstr("attempt_id", "appAttemptId"),
    fstr("export_ports", "exportPorts", True),
])


@dataclass(frozen=True, slots=True)
class AppAttemptDetail:
    """GET ``/apps/{id}/appattempts/{attempt}`` (all strings on the wire)."""

    attempt_id: str
    state: str
    am_container_id: str
    started_time_ms: int
    finished_time_ms: int
    host: str | None = None
    rpc_port: int | None = None
    tracking_url: str | None = None
    original_tracking_url: str | None = None
    diagnostics: str | None = None


APP_ATTEMPT_DETAIL: Struct[AppAttemptDetail] = Struct(AppAttemptDetail, [
    fstr("attempt_id", "appAttemptId"),
    fstr("host", "host", True),
    fint("rpc_port", "rpcPort", True),
    fstr("tracking_url", "trackingUrl", True),
    fstr("original_tracking_url", "originalTrackingUrl", True),
    fstr("diagnostics", "diagnosticsInfo", True),
    fstr("state", "appAttemptState"),
    fstr("am_container_id", "amContainerId"),
    fint("started_time_ms", "startedTime"),
    fint("finished_time_ms", "finishedTime"),
])


def _dec_alloc(raw: Any, where: str, key: str) -> tuple[tuple[str, int], ...]:
    return decode_entry_map(raw, where, key)


def _enc_alloc(pairs: tuple[tuple[str, int], ...], strings: bool) -> dict[str, Any]:
    # ContainerInfo writes its map entries as a JSON array (unlike AppInfo's repeated keys).
    return encode_entry_map(pairs, strings, repeated=False) if len(pairs) != 1 else {
        "entry": [{"key": pairs[0][0], "value": str(pairs[0][1])}]
    }


@dataclass(frozen=True, slots=True)
class Container:
    """A container of an attempt. ``exit_status`` is meaningful once ``state`` is COMPLETE
    (-106 killed by the RM, -102 preempted, 143 SIGTERM, 137 SIGKILL; scenarios/README)."""

    container_id: str
    allocated_mb: int
    allocated_vcores: int
    assigned_node_id: str
    priority: int
    started_time_ms: int
    finished_time_ms: int
    elapsed_time_ms: int
    exit_status: int
    state: str
    node_id: str
    log_url: str | None = None
    node_http_address: str | None = None
    allocated_resources: tuple[tuple[str, int], ...] = ()
    exposed_ports: str | None = None


CONTAINER: Struct[Container] = Struct(Container, [
    fstr("container_id", "containerId"),
    fint("allocated_mb", "allocatedMB"),
    fint("allocated_vcores", "allocatedVCores"),
    fstr("assigned_node_id", "assignedNodeId"),
    fint("priority", "priority"),
    fint("started_time_ms", "startedTime"),
    fint("finished_time_ms", "finishedTime"),
    fint("elapsed_time_ms", "elapsedTime"),
    fstr("log_url", "logUrl", True),
    fint("exit_status", "containerExitStatus"),
    fstr("state", "containerState"),
    fstr("node_http_address", "nodeHttpAddress", True),
    fstr("node_id", "nodeId"),
    fcustom("allocated_resources", "allocatedResources", _dec_alloc, _enc_alloc, True, (), always=True),
    fstr("exposed_ports", "exposedPorts", True),
])


def decode_app_attempts(doc: Any) -> tuple[AppAttempt, ...]:
    """``{"appAttempts":{"appAttempt":[...]}}``."""
    return decode_list(doc, "appAttempts", "appAttempt", APP_ATTEMPT)


def encode_app_attempts(attempts: tuple[AppAttempt, ...] | list[AppAttempt]) -> dict[str, Any]:
    return encode_list("appAttempts", "appAttempt", attempts, APP_ATTEMPT)


def decode_app_attempt(doc: Any) -> AppAttemptDetail:
    """The bare (root-unwrapped) attempt object."""
    return APP_ATTEMPT_DETAIL.decode(doc, "")


def encode_app_attempt(attempt: AppAttemptDetail) -> dict[str, Any]:
    return APP_ATTEMPT_DETAIL.encode(attempt, strings=True)


def decode_containers(doc: Any) -> tuple[Container, ...]:
    """``{"container":[...]}`` (no outer wrapper); ``{}`` = none."""
    return decode_list(doc, None, "container", CONTAINER)


def encode_containers(containers: tuple[Container, ...] | list[Container]) -> dict[str, Any]:
    """The "mapped" list: ``{}`` when empty, ONE container collapsed to the bare object
    (scenarios/cpu-burn), an array for several."""
    out = [CONTAINER.encode(c, strings=True) for c in containers]
    return {"container": collapse(out)} if out else {}


def decode_container(doc: Any) -> Container:
    """The bare (root-unwrapped) container object."""
    return CONTAINER.decode(doc, "")


def encode_container(container: Container) -> dict[str, Any]:
    return CONTAINER.encode(container, strings=True)

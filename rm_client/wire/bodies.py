"""Request bodies the client sends (and an RM or the emulator receives) that are not covered
elsewhere: node resource update and application submission.

Forms are those the live 3.3.6 RM accepted (ENDPOINTS.txt, captures
``nodes-id-resource-update.request.json`` and ``apps-submit-rest-*.request.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rm_client.wire._json import dec_bool, dec_int, dec_str, fail, items, obj
from rm_client.wire.resources import Resource, decode_resource, encode_resource

__all__ = [
    "AppSubmission",
    "NodeResourceOption",
    "decode_app_submission",
    "decode_node_resource_option",
    "encode_app_submission",
    "encode_node_resource_option",
]


@dataclass(frozen=True, slots=True)
class NodeResourceOption:
    """Body of POST /nodes/{id}/resource. ``resource`` None means the body had no root-level
    ``resource`` (missing, or wrapped in ``{"resourceOption":..}``): the real RM then SILENTLY
    sets the node to 0 MB / 0 vcores (captures ``nodes-id-resource-missing-resource``,
    ``-wrapped-root``). ``overcommit_timeout_ms`` None when absent."""

    resource: Resource | None
    overcommit_timeout_ms: int | None


def encode_node_resource_option(resource: Resource, overcommit_timeout_ms: int) -> dict[str, Any]:
    """``{"resource":{"memory":M,"vCores":V},"overCommitTimeout":T}`` (root-UNwrapped)."""
    return {
        "resource": encode_resource(resource, informations=False),
        "overCommitTimeout": overcommit_timeout_ms,
    }


def decode_node_resource_option(doc: Any) -> NodeResourceOption:
    d = obj(doc, "")
    raw_res, raw_t = d.get("resource"), d.get("overCommitTimeout")
    resource = decode_resource(raw_res, "resource") if raw_res is not None else None
    timeout = dec_int(raw_t, "", "overCommitTimeout") if raw_t is not None else None
    return NodeResourceOption(resource, timeout)


@dataclass(frozen=True, slots=True)
class AppSubmission:
    """An ``ApplicationSubmissionContextInfo`` for POST /apps, AM given as a shell command.

    ``queue`` should be the FULL path (``root.default``): with a reservable root.default, the
    short name fails for apps in a reservation. ``command`` runs in the AM container; an AM
    that never registers (e.g. ``sleep 60``) keeps the app ACCEPTED while it runs and the
    app FAILS when it exits (captures ``apps-id-in-active-reservation``,
    ``apps-id-rest-app-final``)."""

    application_id: str
    application_name: str
    queue: str
    command: str
    resource: Resource
    application_type: str = "YARN"
    max_app_attempts: int = 1
    environment: tuple[tuple[str, str], ...] = ()
    tags: tuple[str, ...] = ()
    reservation_id: str | None = None
    priority: int | None = None
    unmanaged_am: bool = False
    keep_containers_across_application_attempts: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # other context keys, passed verbatim


def encode_app_submission(s: AppSubmission) -> dict[str, Any]:
    body: dict[str, Any] = {
        "application-id": s.application_id,
        "application-name": s.application_name,
        "queue": s.queue,
    }
    if s.reservation_id is not None:
        body["reservation-id"] = s.reservation_id
    spec: dict[str, Any] = {"commands": {"command": s.command}}
    if s.environment:
        spec["environment"] = {"entry": [{"key": k, "value": v} for k, v in s.environment]}
    body["am-container-spec"] = spec
    body["unmanaged-AM"] = s.unmanaged_am
    body["max-app-attempts"] = s.max_app_attempts
    body["resource"] = encode_resource(s.resource, informations=False)
    body["application-type"] = s.application_type
    body["keep-containers-across-application-attempts"] = s.keep_containers_across_application_attempts
    if s.tags:
        body["application-tags"] = {"tag": list(s.tags)}
    if s.priority is not None:
        body["priority"] = s.priority
    body.update(s.extra)
    return body


_KNOWN = {
    "application-id", "application-name", "queue", "reservation-id", "am-container-spec", "unmanaged-AM",
    "max-app-attempts", "resource", "application-type", "keep-containers-across-application-attempts",
    "application-tags", "priority",
}


def decode_app_submission(doc: Any) -> AppSubmission:
    """Read a POST /apps body (emulator side). Missing required parts raise RMDecodeError."""
    d = obj(doc, "")

    def req(key: str) -> Any:
        v = d.get(key)
        if v is None:
            raise fail("", key, "missing in application submission")
        return v

    spec = obj(req("am-container-spec"), "am-container-spec")
    cmds = obj(spec.get("commands"), "am-container-spec", "commands")
    w = "am-container-spec.commands"
    raw_cmd = cmds.get("command")
    if type(raw_cmd) is str:
        command_list = [raw_cmd]
    else:
        command_list = [dec_str(c, w, "command") for c in items(raw_cmd, w, "command")]
    env_raw = obj(spec.get("environment") or {}, "am-container-spec", "environment").get("entry")
    env = []
    for i, e in enumerate(items(env_raw, "am-container-spec.environment", "entry")):
        we = f"am-container-spec.environment.entry[{i}]"
        e = obj(e, we)
        env.append((dec_str(e.get("key"), we, "key"), dec_str(e.get("value"), we, "value")))
    tags_raw = d.get("application-tags")
    tags: tuple[str, ...] = ()
    if tags_raw is not None:
        t = obj(tags_raw, "application-tags").get("tag")
        tags = (t,) if type(t) is str else tuple(dec_str(x, "application-tags.tag", str(i))
                                                 for i, x in enumerate(items(t, "application-tags", "tag")))

    def opt(key: str, dec: Any, default: Any) -> Any:
        v = d.get(key)
        return default if v is None else dec(v, "", key)

    return AppSubmission(
        application_id=dec_str(req("application-id"), "", "application-id"),
        application_name=opt("application-name", dec_str, ""),
        queue=opt("queue", dec_str, "default"),
        command=" && ".join(command_list),
        resource=decode_resource(req("resource"), "resource"),
        application_type=opt("application-type", dec_str, "YARN"),
        max_app_attempts=opt("max-app-attempts", dec_int, 1),
        environment=tuple(env),
        tags=tags,
        reservation_id=opt("reservation-id", dec_str, None),
        priority=opt("priority", dec_int, None),
        unmanaged_am=opt("unmanaged-AM", dec_bool, False),
        keep_containers_across_application_attempts=opt("keep-containers-across-application-attempts",
                                                        dec_bool, False),
        extra={k: v for k, v in d.items() if k not in _KNOWN},
    )


"""Small app DAOs: state, queue, priority (GET answers and PUT bodies/answers), timeouts,
``/appstatistics`` and ``/apps/new-application`` (captures ``apps-id-state*``,
``apps-id-queue*``, ``apps-id-priority``, ``apps-id-timeout*``, ``appstatistics``,
``apps-new-application*``).

The PUT bodies are root-UNWRAPPED (``{"state":"KILLED"}``), except the app timeout which is
wrapped (``{"timeout":{...}}``): the unwrapped timeout is refused with 400
(capture ``err-apps-id-timeout-put-unwrapped``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rm_client.wire._json import Struct, dec_int, dec_str, decode_list, encode_list, fail, fint, fstr, obj
from rm_client.wire.apps import APP_TIMEOUT, AppTimeout
from rm_client.wire.resources import Resource, field_resource

__all__ = [
    "AppStatItem",
    "NewApplication",
    "decode_app_priority",
    "decode_app_queue",
    "decode_app_state",
    "decode_app_statistics",
    "decode_app_timeout",
    "decode_app_timeouts",
    "decode_new_application",
    "encode_app_priority",
    "encode_app_queue",
    "encode_app_state",
    "encode_app_statistics",
    "encode_app_timeout",
    "encode_app_timeouts",
    "encode_new_application",
]


def _one(doc: Any, key: str, dec: Any) -> Any:
    d = obj(doc, "")
    raw = d.get(key)
    if raw is None:
        raise fail("", key, "missing")
    return dec(raw, "", key)


def decode_app_state(doc: Any) -> str:
    """``{"state":"RUNNING"}`` (GET and the PUT echo: KILLING/KILLED/RUNNING)."""
    result: str = _one(doc, "state", dec_str)
    return result


def encode_app_state(state: str) -> dict[str, Any]:
    return {"state": state}


def decode_app_queue(doc: Any) -> str:
    """``{"queue":"root.default"}``; the PUT echoes the requested name."""
    result: str = _one(doc, "queue", dec_str)
    return result


def encode_app_queue(queue: str) -> dict[str, Any]:
    return {"queue": queue}


def decode_app_priority(doc: Any) -> int:
    """``{"priority":0}``; the PUT answer shows the value after clamping to the cluster max."""
    result: int = _one(doc, "priority", dec_int)
    return result


def encode_app_priority(priority: int) -> dict[str, Any]:
    return {"priority": priority}


def decode_app_timeouts(doc: Any) -> tuple[AppTimeout, ...]:
    """``{"timeouts":{"timeout":[...]}}``."""
    return decode_list(doc, "timeouts", "timeout", APP_TIMEOUT)


def encode_app_timeouts(timeouts: tuple[AppTimeout, ...] | list[AppTimeout]) -> dict[str, Any]:
    return encode_list("timeouts", "timeout", timeouts, APP_TIMEOUT)


def decode_app_timeout(doc: Any) -> AppTimeout:
    """``{"timeout":{...}}`` (GET /timeouts/{type} and the PUT /timeout answer)."""
    return APP_TIMEOUT.decode(obj(doc, "").get("timeout"), "timeout")


def encode_app_timeout(timeout: AppTimeout) -> dict[str, Any]:
    return {"timeout": APP_TIMEOUT.encode(timeout)}


@dataclass(frozen=True, slots=True)
class AppStatItem:
    """``type`` is ``*`` when no applicationTypes filter was given."""

    state: str
    type: str
    count: int


APP_STAT_ITEM: Struct[AppStatItem] = Struct(AppStatItem, [
    fstr("state", "state"),
    fstr("type", "type"),
    fint("count", "count"),
])


def decode_app_statistics(doc: Any) -> tuple[AppStatItem, ...]:
    return decode_list(doc, "appStatInfo", "statItem", APP_STAT_ITEM)


def encode_app_statistics(stats: tuple[AppStatItem, ...] | list[AppStatItem]) -> dict[str, Any]:
    return encode_list("appStatInfo", "statItem", stats, APP_STAT_ITEM)


@dataclass(frozen=True, slots=True)
class NewApplication:
    """POST /apps/new-application: a fresh id and the largest container the RM will grant."""

    application_id: str
    maximum_resource_capability: Resource | None


NEW_APPLICATION: Struct[NewApplication] = Struct(NewApplication, [
    fstr("application_id", "application-id"),
    field_resource("maximum_resource_capability", "maximum-resource-capability"),
])


def decode_new_application(doc: Any) -> NewApplication:
    return NEW_APPLICATION.decode(doc, "")


def encode_new_application(new_app: NewApplication) -> dict[str, Any]:
    return NEW_APPLICATION.encode(new_app)

"""Filters of GET /ws/v1/cluster/apps (RMWebServices.getApps, ENDPOINTS.txt).

Multi-valued filters are sent comma-joined in one parameter (``states=RUNNING,ACCEPTED``,
as in capture ``apps-with-reservation-app``); the RM splits on commas. The deprecated
single-valued ``state`` is not offered (it cannot be combined with ``states``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rm_client.errors import Problem
from rm_client.wire.apps import APP_STATES, FINAL_STATUSES

__all__ = ["DESELECTS", "AppQuery"]

# DeSelectFields.DeSelectType literals of 3.3.6: parts of each app the RM can leave out.
DESELECTS = ("resourceRequests", "appNodeLabelExpression", "amNodeLabelExpression", "resourceInfo", "timeouts")


@dataclass(frozen=True)
class AppQuery:
    """Times are epoch milliseconds; ``limit`` caps the number of apps returned."""

    states: tuple[str, ...] = ()
    final_status: str | None = None
    user: str | None = None
    queue: str | None = None
    limit: int | None = None
    started_time_begin_ms: int | None = None
    started_time_end_ms: int | None = None
    finished_time_begin_ms: int | None = None
    finished_time_end_ms: int | None = None
    application_types: tuple[str, ...] = ()
    application_tags: tuple[str, ...] = ()
    name: str | None = None
    deselects: tuple[str, ...] = ()

    def problems(self) -> list[Problem]:
        out: list[Problem] = []
        for i, s in enumerate(_seq(self.states, "states", out)):
            if not isinstance(s, str) or s.upper() not in APP_STATES:
                out.append(Problem(f"states[{i}]", f"{s!r} is not one of {', '.join(APP_STATES)}"))
        if self.final_status is not None and (
            not isinstance(self.final_status, str) or self.final_status.upper() not in FINAL_STATUSES
        ):
            out.append(Problem("final_status", f"{self.final_status!r} is not one of {', '.join(FINAL_STATUSES)}"))
        for name in ("user", "queue", "name"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                out.append(Problem(name, "must be a non-empty string"))
        if self.limit is not None and (type(self.limit) is not int or self.limit < 1):
            out.append(Problem("limit", f"must be an integer >= 1, got {self.limit!r}"))
        for lo, hi in (("started_time_begin_ms", "started_time_end_ms"),
                       ("finished_time_begin_ms", "finished_time_end_ms")):
            a, b = getattr(self, lo), getattr(self, hi)
            for nm, v in ((lo, a), (hi, b)):
                if v is not None and (type(v) is not int or v < 0):
                    out.append(Problem(nm, f"must be epoch milliseconds >= 0, got {v!r}"))
            if type(a) is int and type(b) is int and a > b:
                out.append(Problem(hi, f"{b} is before {lo} {a}"))
        for field in ("application_types", "application_tags"):
            for i, v in enumerate(_seq(getattr(self, field), field, out)):
                if not isinstance(v, str) or not v.strip() or "," in v:
                    out.append(Problem(f"{field}[{i}]", f"{v!r} must be a non-empty string without ','"))
        for i, d in enumerate(_seq(self.deselects, "deselects", out)):
            if d not in DESELECTS:
                out.append(Problem(f"deselects[{i}]", f"{d!r} is not one of {', '.join(DESELECTS)}"))
        return out

    def to_params(self) -> dict[str, Any]:
        """The query parameters (call :meth:`problems` first)."""
        p: dict[str, Any] = {}
        if self.states:
            p["states"] = ",".join(s.upper() for s in self.states)
        if self.final_status is not None:
            p["finalStatus"] = self.final_status.upper()
        for key, v in (("user", self.user), ("queue", self.queue), ("name", self.name), ("limit", self.limit),
                       ("startedTimeBegin", self.started_time_begin_ms), ("startedTimeEnd", self.started_time_end_ms),
                       ("finishedTimeBegin", self.finished_time_begin_ms),
                       ("finishedTimeEnd", self.finished_time_end_ms)):
            if v is not None:
                p[key] = str(v)
        if self.application_types:
            p["applicationTypes"] = ",".join(self.application_types)
        if self.application_tags:
            p["applicationTags"] = ",".join(self.application_tags)
        if self.deselects:
            p["deSelects"] = ",".join(self.deselects)
        return p


def _seq(v: Any, field: str, out: list[Problem]) -> tuple[Any, ...]:
    if isinstance(v, str) or not isinstance(v, tuple | list):
        out.append(Problem(field, f"must be a tuple of strings, got {type(v).__name__}"))
        return ()
    return tuple(v)

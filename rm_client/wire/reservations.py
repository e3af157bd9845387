"""The reservation system: list answers and the submit/update/delete request bodies
(captures ``reservation-*``; scenarios ``reservation-lifecycle``, ``reservation-early-submit``).

Recorded 3.3.6 behaviour this module encodes:

* ``reservation-request-interpreter`` is sent as the enum ORDINAL (:class:`Interpreter`); the
  string "R_ORDER_NO_GAP" is silently stored as 0 (R_ANY); 7 gives HTTP 500;
* ``recurrence-expression`` is a period in ms, sent as a string; "0" = not recurring;
* the LIST answer writes every number as a string, collapses one-element lists
  (``reservations``, ``resource-allocations``, ``reservation-request``) to the bare object,
  and answers ``{}`` when nothing matches;
* allocations of a RECURRING reservation are offsets within the period (epoch-aligned: the
  first offset equals ``arrival % period``), not epoch times; see
  :meth:`ReservationInfo.allocation_windows`;
* the list may hold ZERO-resource ranges: the time between the ranges that hold resources (a
  live 1-hour recurring reservation whose 10 minutes wrapped the hour listed [0, 5 min) and
  [55, 60 min) with 1024 MB and [5, 55 min) with <0, 0>): :attr:`ResourceAllocation.holds`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from rm_client.wire._json import Struct, dec_int, decode_list, fail, fcustom, fint, flist, fobj, fstr, join, obj
from rm_client.wire.resources import Resource, encode_resource, field_resource

__all__ = [
    "DAY_MS",
    "RESERVATION_INFO",
    "Interpreter",
    "ReservationDefinition",
    "ReservationInfo",
    "ReservationRequest",
    "ReservationSubmission",
    "ResourceAllocation",
    "decode_new_reservation",
    "decode_reservation_definition",
    "decode_reservation_list",
    "decode_reservation_submission",
    "encode_definition_request",
    "encode_new_reservation",
    "encode_reservation_definition",
    "encode_reservation_list",
]

DAY_MS = 86_400_000  # recurrence periods must divide one day (ReservationSystem's window)


class Interpreter(IntEnum):
    """How the requests of a definition combine (``ReservationRequestInterpreter`` ordinal)."""

    R_ANY = 0  # any one of the requests
    R_ALL = 1  # all of them, in any order / overlap
    R_ORDER = 2  # all, each stage after the previous (gaps allowed)
    R_ORDER_NO_GAP = 3  # all, each stage right after the previous


def _dec_interpreter(raw: Any, where: str, key: str) -> Interpreter:
    n = dec_int(raw, where, key)
    try:
        return Interpreter(n)
    except ValueError:
        raise fail(where, key, f"interpreter ordinal {n} is not 0..3") from None


def _enc_interpreter(v: Interpreter, strings: bool) -> Any:
    return str(int(v)) if strings else int(v)


@dataclass(frozen=True, slots=True)
class ReservationRequest:
    """``num_containers`` containers of ``capability``, at least ``min_concurrency`` at once
    (the gang size), each running ``duration_ms``."""

    capability: Resource
    num_containers: int
    min_concurrency: int
    duration_ms: int


RESERVATION_REQUEST: Struct[ReservationRequest] = Struct(ReservationRequest, [
    field_resource("capability", "capability", optional=False),
    fint("min_concurrency", "min-concurrency"),
    fint("num_containers", "num-containers"),
    fint("duration_ms", "duration"),
])


@dataclass(frozen=True, slots=True)
class ReservationDefinition:
    """What to reserve, between ``arrival_ms`` and ``deadline_ms`` (epoch ms). A recurring
    definition (``recurrence_period_ms`` > 0) repeats the arrival..deadline window every period."""

    arrival_ms: int
    deadline_ms: int
    requests: tuple[ReservationRequest, ...]
    interpreter: Interpreter = Interpreter.R_ALL
    name: str = ""
    priority: int = 0
    recurrence_period_ms: int = 0

    @property
    def is_recurring(self) -> bool:
        return self.recurrence_period_ms > 0


@dataclass(frozen=True, slots=True)
class _RequestsWire:
    """The ``reservation-requests`` object: interpreter + the (possibly collapsed) list."""

    interpreter: Interpreter
    requests: tuple[ReservationRequest, ...]


_REQUESTS: Struct[_RequestsWire] = Struct(_RequestsWire, [
    fcustom("interpreter", "reservation-request-interpreter", _dec_interpreter, _enc_interpreter),
    flist("requests", "reservation-request", RESERVATION_REQUEST, array=False, optional=False),
])


@dataclass(frozen=True, slots=True)
class _DefinitionWire:
    """``reservation-definition`` as the list writes it (recurrence is a string)."""

    arrival_ms: int
    deadline_ms: int
    requests: _RequestsWire
    name: str
    priority: int
    recurrence: str


_DEFINITION: Struct[_DefinitionWire] = Struct(_DefinitionWire, [
    fint("arrival_ms", "arrival"),
    fint("deadline_ms", "deadline"),
    fobj("requests", "reservation-requests", _REQUESTS),
    # The list always writes these three; a submit body may leave them out.
    fstr("name", "reservation-name", True, "", always=True),
    fint("priority", "priority", True, 0, always=True),
    fstr("recurrence", "recurrence-expression", True, "0", always=True),
])


def decode_reservation_definition(raw: Any, where: str) -> ReservationDefinition:
    w = _DEFINITION.decode(raw, where)
    try:
        period = int(w.recurrence.strip())
    except ValueError:
        raise fail(where, "recurrence-expression", f"{w.recurrence[:40]!r} is not a period in ms") from None
    return ReservationDefinition(
        arrival_ms=w.arrival_ms,
        deadline_ms=w.deadline_ms,
        requests=w.requests.requests,
        interpreter=w.requests.interpreter,
        name=w.name,
        priority=w.priority,
        recurrence_period_ms=period,
    )


def encode_reservation_definition(d: ReservationDefinition, strings: bool = True) -> dict[str, Any]:
    """The list form of a definition (see :func:`encode_definition_request` for requests)."""
    wire = _DefinitionWire(d.arrival_ms, d.deadline_ms, _RequestsWire(d.interpreter, d.requests), d.name,
                           d.priority, str(d.recurrence_period_ms))
    return _DEFINITION.encode(wire, strings)


@dataclass(frozen=True, slots=True)
class ResourceAllocation:
    """``resource`` granted from ``start_ms`` to ``end_ms``: epoch ms for one-off reservations,
    offsets within the period for recurring ones."""

    resource: Resource
    start_ms: int
    end_ms: int

    @property
    def holds(self) -> bool:
        """False for a zero-resource range: a gap between allocations, not an allocation."""
        return self.resource.memory_mb > 0 or self.resource.vcores > 0


RESOURCE_ALLOCATION: Struct[ResourceAllocation] = Struct(ResourceAllocation, [
    field_resource("resource", "resource", optional=False),
    fint("start_ms", "startTime"),
    fint("end_ms", "endTime"),
])


def _dec_definition(raw: Any, where: str, key: str) -> ReservationDefinition:
    return decode_reservation_definition(raw, join(where, key))


def _enc_definition(d: ReservationDefinition, strings: bool) -> dict[str, Any]:
    return encode_reservation_definition(d, strings)


@dataclass(frozen=True, slots=True)
class ReservationInfo:
    """One entry of the list. ``allocations`` is None when the list was asked without
    ``include-resource-allocations``."""

    reservation_id: str
    acceptance_time_ms: int
    user: str
    definition: ReservationDefinition
    allocations: tuple[ResourceAllocation, ...] | None = None

    def allocation_windows(self, now_ms: int) -> tuple[ResourceAllocation, ...]:
        """The allocations that hold resources (zero-resource gaps left out), in epoch ms. For a
        recurring reservation, those of the period that contains ``now_ms`` (period starts are
        multiples of the period since the epoch)."""
        allocs = tuple(a for a in self.allocations or () if a.holds)
        period = self.definition.recurrence_period_ms
        if period <= 0:
            return allocs
        base = now_ms - now_ms % period
        return tuple(ResourceAllocation(a.resource, base + a.start_ms, base + a.end_ms) for a in allocs)


RESERVATION_INFO: Struct[ReservationInfo] = Struct(ReservationInfo, [
    fint("acceptance_time_ms", "acceptance-time"),
    fstr("user", "user"),
    flist("allocations", "resource-allocations", RESOURCE_ALLOCATION, array=False, default=None),
    fstr("reservation_id", "reservation-id"),
    fcustom("definition", "reservation-definition", _dec_definition, _enc_definition),
])


def decode_reservation_list(doc: Any) -> tuple[ReservationInfo, ...]:
    """``{"reservations": [..] | {..}}``; ``{}`` = none (also for an unknown reservation id)."""
    return decode_list(doc, None, "reservations", RESERVATION_INFO)


def encode_reservation_list(reservations: tuple[ReservationInfo, ...] | list[ReservationInfo]) -> dict[str, Any]:
    """The RM's list form: numbers as strings, one element collapsed, ``{}`` when empty."""
    if not reservations:
        return {}
    out = [RESERVATION_INFO.encode(r, strings=True) for r in reservations]
    return {"reservations": out[0] if len(out) == 1 else out}


def decode_new_reservation(doc: Any) -> str:
    """``{"reservation-id":"reservation_<clusterTimestamp>_<seq>"}``."""
    d = obj(doc, "")
    raw = d.get("reservation-id")
    if type(raw) is not str:
        raise fail("", "reservation-id", "missing or not a string")
    return raw


def encode_new_reservation(reservation_id: str) -> dict[str, Any]:
    return {"reservation-id": reservation_id}


def encode_definition_request(d: ReservationDefinition) -> dict[str, Any]:
    """The ``reservation-definition`` of a submit/update body, in the form the live RM
    accepted (ENDPOINTS.txt): JSON numbers, interpreter ordinal, capability without
    ``resourceInformations``, recurrence as a string (left out when not recurring)."""
    body: dict[str, Any] = {
        "arrival": d.arrival_ms,
        "deadline": d.deadline_ms,
        "reservation-name": d.name,
        "priority": d.priority,
    }
    if d.recurrence_period_ms:
        body["recurrence-expression"] = str(d.recurrence_period_ms)
    body["reservation-requests"] = {
        "reservation-request-interpreter": int(d.interpreter),
        "reservation-request": [
            {
                "capability": encode_resource(r.capability, informations=False),
                "num-containers": r.num_containers,
                "min-concurrency": r.min_concurrency,
                "duration": r.duration_ms,
            }
            for r in d.requests
        ],
    }
    return body


@dataclass(frozen=True, slots=True)
class ReservationSubmission:
    """A decoded submit/update/delete request body (what an RM or the emulator receives);
    parts the body lacks are None, for the receiver to refuse like the RM does."""

    reservation_id: str | None
    queue: str | None
    definition: ReservationDefinition | None


def decode_reservation_submission(doc: Any) -> ReservationSubmission:
    """Read a submit/update/delete body with the RM's own leniency: a non-numeric interpreter
    string is taken as 0 (R_ANY) exactly as 3.3.6 silently does; an out-of-range ordinal
    raises :class:`RMDecodeError` (the RM answers 500 there)."""
    d = obj(doc, "")
    rid, queue, raw_def = d.get("reservation-id"), d.get("queue"), d.get("reservation-definition")
    definition = None
    if raw_def is not None:
        raw_def = obj(raw_def, "reservation-definition")
        block = obj(raw_def.get("reservation-requests"), "reservation-definition", "reservation-requests")
        interp = block.get("reservation-request-interpreter")
        if type(interp) is str and not interp.strip().lstrip("-").isdigit():
            block = dict(block, **{"reservation-request-interpreter": 0})
            raw_def = dict(raw_def, **{"reservation-requests": block})
        definition = decode_reservation_definition(raw_def, "reservation-definition")
    for key, value in (("reservation-id", rid), ("queue", queue)):
        if value is not None and type(value) is not str:
            raise fail("", key, "expected a string")
    return ReservationSubmission(rid, queue, definition)


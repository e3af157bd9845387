"""The reservation system of the emulated RM: ids, validation, the plan, activity over time.

REST forms and messages are the recorded ones (captures/reservation-*, err-reservation-*):

- `reservation-request-interpreter` is an ordinal; a string ("R_ORDER_NO_GAP") silently reads
  as 0 (R_ANY); a number outside 0..3 fails with 500 ArrayIndexOutOfBoundsException.
- a one-element `reservation-request` may come as a bare object;
- an id not starting with `reservation_` is "invalid", one that does but does not parse is
  "not parseable" (both 404 IOException);
- validation order: definition present, id present, no duplicate, reservable queue, at least
  one request, deadline in the future, recurrence a non-negative long, window <= period,
  86400000 divisible by the period; then planning and the quota (planner.py).

A reservation is current (its queue exists) from its arrival to its deadline
(scenarios/reservation-lifecycle: R3's queue appeared at its window start although its
allocation was placed 60 s later); a recurring one is matched modulo its period, so it is
current in that window of every period and PLANNED in between. What its queue is entitled to is
a different question: the allocation at that time, but only inside the FIRST occurrence
(InMemoryReservationAllocation.getResourcesAtTime is 0 from the first occurrence's end on), so
from the second period on its queue exists with 0 % (recurring-reservation, -second-period).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from harvester.domain import Resources
from harvester.emulator import errors
from harvester.emulator.bodies import as_int
from harvester.emulator.lifecycle import RESERVATION_TRANSITIONS, Lifecycle, ReservationState
from harvester.emulator.planner import Commitment, Interval, Stage

MAX_PERIODICITY_MS = 86_400_000
INTERPRETERS = ("R_ANY", "R_ALL", "R_ORDER", "R_ORDER_NO_GAP")
_ID = re.compile(r"reservation_(\d+)_(\d+)$")


@dataclass(frozen=True, slots=True)
class Definition:
    arrival: int
    deadline: int
    name: str
    priority: int
    recurrence: str          # as given; "0" when absent
    interpreter: int
    stages: tuple[Stage, ...]

    @property
    def period(self) -> int:
        return int(self.recurrence) if self.recurrence not in ("", "0") else 0


@dataclass(eq=False)
class Reservation:
    reservation_id: str
    queue: str               # the plan queue config name ("default")
    user: str
    definition: Definition
    accepted_at_ms: int
    intervals: tuple[Interval, ...]   # absolute times, or offsets in the period if recurring
    lifecycle: Lifecycle[ReservationState]
    start_ms: int = 0                 # the first occurrence's allocation, absolute
    end_ms: int = 0
    has_queue: bool = False           # the plan follower created its queue (and not yet removed it)
    apps: list[str] = field(default_factory=list)

    def commitment(self) -> Commitment:
        return Commitment(self.reservation_id, self.user, self.intervals, self.definition.period)

    def reserved_at(self, t_ms: int) -> Resources:
        """What the plan holds for it at `t_ms` (every period for a recurring one)."""
        mem = vc = 0
        for iv in self.commitment().concrete(t_ms, t_ms + 1):
            mem += iv.resources.memory_mb
            vc += iv.resources.vcores
        return Resources(mem, vc)

    def entitled_at(self, t_ms: int) -> Resources:
        """getResourcesAtTime: the allocation inside the first occurrence, 0 anywhere else."""
        d = self.definition
        if not d.arrival <= t_ms < max(d.deadline, self.end_ms):
            return Resources(0, 0)
        return self.reserved_at(t_ms)

    def ends_at(self) -> int | None:
        """When its allocation ends (None for recurring ones: they never end)."""
        if self.definition.period > 0:
            return None
        return self.end_ms

    def current(self, t_ms: int) -> bool:
        """Its queue exists: inside the arrival..deadline window (modulo the period)."""
        d = self.definition
        if d.period > 0:
            return t_ms >= d.arrival and (t_ms - d.arrival) % d.period < d.deadline - d.arrival
        return d.arrival <= t_ms < d.deadline


def parse_reservation_id(value: Any) -> str | None:
    """None for a missing id; the 404 IOException forms for a malformed one."""
    if value is None or value == "":
        return None
    rid = str(value)
    if not rid.startswith("reservation_"):
        raise errors.remote(404, "java.io.IOException", f"The specified reservation id is invalid: {rid}")
    if not _ID.match(rid):
        raise errors.remote(404, "java.io.IOException", f"The specified reservation id is not parseable: {rid}")
    return rid


def _interpreter(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
        n = int(value)
        if n < 0 or n >= len(INTERPRETERS):
            raise errors.remote(500, "java.lang.ArrayIndexOutOfBoundsException",
                                f"Index {n} out of bounds for length {len(INTERPRETERS)}")
        return n
    return 0  # JAXB reads an enum name into the int field as 0 (recorded quirk)


def _stages(requests: Any) -> tuple[Stage, ...]:
    items = requests if isinstance(requests, list) else ([requests] if isinstance(requests, dict) else [])
    out = []
    for r in items:
        cap = r.get("capability") or {}
        out.append(Stage(Resources(as_int(cap.get("memory")), as_int(cap.get("vCores"))),
                         as_int(r.get("num-containers")), as_int(r.get("min-concurrency"), 1),
                         as_int(r.get("duration"))))
    return tuple(out)


def parse_definition(doc: Any) -> Definition | None:
    if not isinstance(doc, dict):
        return None
    reqs = doc.get("reservation-requests") or {}
    recurrence = doc.get("recurrence-expression")
    return Definition(
        arrival=as_int(doc.get("arrival")),
        deadline=as_int(doc.get("deadline")),
        name=str(doc.get("reservation-name") or ""),
        priority=as_int(doc.get("priority")),
        recurrence="0" if recurrence in (None, "") else str(recurrence),
        interpreter=_interpreter(reqs.get("reservation-request-interpreter")),
        stages=_stages(reqs.get("reservation-request")),
    )


def validate_definition(d: Definition, now_ms: int, plan_capacity: Resources) -> None:
    """ReservationInputValidator's checks, in its order, with the recorded messages (the window
    and largest-gang checks are skipped for R_ANY, as in 3.3.6)."""
    if not d.stages:
        raise errors.bad_request_wrapped("The ReservationDefinition should contain at least one ReservationRequest")
    if d.deadline <= now_ms:
        raise errors.bad_request_wrapped(
            f"The specified deadline: {d.deadline} is the past. Please try again with deadline in the future.")
    window = d.deadline - d.arrival
    longest = max(s.duration_ms for s in d.stages)
    if d.interpreter in (2, 3):
        longest = sum(s.duration_ms for s in d.stages)
    if window < longest and d.interpreter != 0:
        raise errors.bad_request_wrapped(
            f"The time difference ({window}) between arrival ({d.arrival}) and deadline ({d.deadline}) must  be "
            f"greater or equal to the minimum resource duration ({longest})")
    gang = Resources(max(s.capability.memory_mb * s.concurrency for s in d.stages),
                     max(s.capability.vcores * s.concurrency for s in d.stages))
    if d.interpreter != 0 and not gang.fits_in(plan_capacity):
        raise errors.bad_request_wrapped(
            f"The size of the largest gang in the reservation definition (<memory:{gang.memory_mb}, "
            f"vCores:{gang.vcores}>) exceed the capacity available (<memory:{plan_capacity.memory_mb}, "
            f"vCores:{plan_capacity.vcores}> )")
    try:
        period = int(d.recurrence)
    except ValueError:
        period = -1
    if period < 0:
        raise errors.bad_request_wrapped(
            f"Invalid period {d.recurrence}. Please try again with a non-negative long value as period.")
    if period > 0:
        if window > period:
            raise errors.bad_request_wrapped(
                f"Duration of the requested reservation: {window} is greater than the recurrence: {period}. "
                "Please try again with a smaller duration.")
        if MAX_PERIODICITY_MS % period != 0:
            raise errors.bad_request_wrapped(
                f"The maximum periodicity: {MAX_PERIODICITY_MS} must be divisible by the recurrence expression "
                f"provided: {period}. Please try again with a recurrence expression that satisfies this requirement.")


def to_offsets(intervals: list[Interval], period: int) -> tuple[Interval, ...]:
    """Absolute intervals of a recurring reservation as offsets within its period."""
    if period <= 0:
        return tuple(intervals)
    return tuple(Interval(iv.start % period, iv.start % period + (iv.end - iv.start), iv.resources)
                 for iv in intervals)


def new_reservation_lifecycle(rid: str, at: float) -> Lifecycle[ReservationState]:
    return Lifecycle.start(rid, RESERVATION_TRANSITIONS, ReservationState.PLANNED, at, "accepted")


def state_at(res: Reservation, t_ms: int) -> ReservationState:
    """Where the reservation's allocation puts it at `t_ms` (before deletion)."""
    if res.current(t_ms):
        return ReservationState.ACTIVE
    end = res.ends_at()
    if end is not None and t_ms >= end:
        return ReservationState.ENDED
    return ReservationState.PLANNED

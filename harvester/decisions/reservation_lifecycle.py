"""The lifecycle of a reservation Morpheus manages (DESIGN.md principle 6) — pure values.

One `ManagedReservation` is one period's one-off reservation of one job (`key` job@period
start), or a job's recurring reservation (`key` job@recurring). Its states:

    PLANNED ──submit sent──▶ SUBMITTED ──listed──▶ SCHEDULED ──arrival──▶ ACTIVE ──deadline──▶ ENDED
       │                        │                      │  ▲                 │  (recurring: back   │
       │ refused                │ not listed           │  └─────────────────┘   to SCHEDULED)     │
       ▼                        ▼ after the grace      ▼ definition differs                      ▼
    REJECTED / WITHDRAWN       LOST                 DRIFTED ──updated back──▶ SCHEDULED/ACTIVE  DELETING ──▶ DELETED

- PLANNED: in the plan, its window is within the renewal lead; the submit is decided. It is
  WITHDRAWN when the plan no longer wants it before it was sent, REJECTED when the RM refused
  it (a 4xx: PlanningQuotaException, a bad definition ...). A refusal for lack of CAPACITY (a
  gang larger than the plan's capacity now, no room in the window) keeps it PLANNED and the
  submit is retried with a bounded backoff (`refusals`, `retry_at`); it is REJECTED only when
  its window can no longer be submitted.
- SUBMITTED: the RM answered 202; SCHEDULED once its list shows it, LOST if it never does.
- SCHEDULED / ACTIVE / ENDED follow the window (ACTIVE: its queue exists); any of them becomes
  DRIFTED when the RM lists another definition than the one we sent, LOST when the RM stops
  listing it before its window ended (deleted outside Harvester).
- DELETING: a delete was decided (no longer planned, an ended one-off cleaned up, an orphan
  of ours); DELETED once the RM accepted it or no longer lists it. An ENDED one the RM no
  longer lists (its plan archived it) is DELETED too.
REJECTED, WITHDRAWN, LOST and DELETED are terminal. Updates that keep the state (a re-plan,
a DRA grant, a drift correction) and problems are kept in `events`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Mapping

from harvester.decisions.reservation_actions import ReservationSpec
from harvester.lifecycle import Lifecycle


class ReservationState(str, Enum):
    PLANNED = "PLANNED"
    SUBMITTED = "SUBMITTED"
    SCHEDULED = "SCHEDULED"
    ACTIVE = "ACTIVE"
    DRIFTED = "DRIFTED"
    ENDED = "ENDED"
    DELETING = "DELETING"
    DELETED = "DELETED"
    REJECTED = "REJECTED"
    WITHDRAWN = "WITHDRAWN"
    LOST = "LOST"


S = ReservationState
TRANSITIONS: Mapping[ReservationState, frozenset[ReservationState]] = {
    S.PLANNED: frozenset({S.SUBMITTED, S.REJECTED, S.WITHDRAWN}),
    S.SUBMITTED: frozenset({S.SCHEDULED, S.ACTIVE, S.ENDED, S.DRIFTED, S.LOST, S.DELETING}),
    S.SCHEDULED: frozenset({S.ACTIVE, S.ENDED, S.DRIFTED, S.DELETING, S.LOST}),
    S.ACTIVE: frozenset({S.ENDED, S.SCHEDULED, S.DRIFTED, S.DELETING, S.LOST}),
    S.DRIFTED: frozenset({S.SCHEDULED, S.ACTIVE, S.ENDED, S.DELETING, S.LOST}),
    S.ENDED: frozenset({S.DELETING, S.DELETED}),
    S.DELETING: frozenset({S.DELETED}),
    S.DELETED: frozenset(),
    S.REJECTED: frozenset(),
    S.WITHDRAWN: frozenset(),
    S.LOST: frozenset(),
}
TERMINAL = frozenset({S.DELETED, S.REJECTED, S.WITHDRAWN, S.LOST})
#: The RM holds it (its plan has it): these get nudges, DRA and reconciliation.
HELD = frozenset({S.SUBMITTED, S.SCHEDULED, S.ACTIVE, S.DRIFTED})
HISTORY_KEPT = 20
EVENTS_KEPT = 20
RECURRING = "recurring"


@dataclass(frozen=True)
class ManagedReservation:
    key: str
    job: str
    period_start_ms: int          # of the window (one-off); of the first window (recurring)
    spec: ReservationSpec         # what the RM should hold: the last definition sent
    base: ReservationSpec         # as planned, without DRA grants (§7's R_recent comes from it)
    lifecycle: Lifecycle[ReservationState]
    reservation_id: str | None = None
    submitted_at: float | None = None
    grant_until: float | None = None
    events: tuple[tuple[float, str], ...] = ()
    last_error: str = ""
    refused: ReservationSpec | None = None  # the last update the RM refused (not sent again as is)
    refusals: int = 0                       # submits refused for lack of capacity (retried, reservation_reconcile)
    retry_at: float | None = None           # PLANNED after such a refusal: the next submit not before this

    @property
    def state(self) -> ReservationState:
        return self.lifecycle.state

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    def to(self, state: ReservationState, at: float, reason: str) -> ManagedReservation:
        """Moved to `state` (a no-op when already there); InvalidTransition off the table."""
        if state is self.state:
            return self
        return replace(self, lifecycle=self.lifecycle.to(state, at, reason, keep=HISTORY_KEPT))

    def note(self, at: float, event: str, *, error: str | None = None) -> ManagedReservation:
        events = (self.events + ((at, event),))[-EVENTS_KEPT:]
        return replace(self, events=events, last_error=self.last_error if error is None else error)


def record_key(job: str, period_start_ms: int | None) -> str:
    return f"{job}@{RECURRING if period_start_ms is None else period_start_ms}"


def reservation_name(prefix: str, job: str, period_start_ms: int | None) -> str:
    """`<prefix>|<job>|<period start ms or 'recurring'>`: how our reservations are found in the
    RM's list after a restart (the RM keeps the name, fixtures reservation-list-*)."""
    return f"{prefix}|{job}|{RECURRING if period_start_ms is None else period_start_ms}"


def parse_name(prefix: str, name: str) -> tuple[str, int | None] | None:
    """(job, period start ms or None for recurring) of one of our names, else None."""
    if not name.startswith(prefix + "|"):
        return None
    job, sep, tail = name[len(prefix) + 1:].rpartition("|")
    if not sep or not job:
        return None
    if tail == RECURRING:
        return job, None
    return (job, int(tail)) if tail.isdigit() else None


def new_record(key: str, job: str, period_start_ms: int, spec: ReservationSpec, state: ReservationState,
               at: float, reason: str, reservation_id: str | None = None) -> ManagedReservation:
    return ManagedReservation(key, job, period_start_ms, spec, spec,
                              Lifecycle.start(f"reservation {key}", TRANSITIONS, state, at, reason), reservation_id)


def by_time(spec: ReservationSpec, now_ms: int) -> ReservationState:
    """Where the window puts a reservation the RM holds: before, inside or after it."""
    if spec.recurrence_ms > 0:
        inside = now_ms >= spec.arrival_ms and (now_ms - spec.arrival_ms) % spec.recurrence_ms < spec.length_ms
        return S.ACTIVE if inside else S.SCHEDULED
    if now_ms < spec.arrival_ms:
        return S.SCHEDULED
    return S.ACTIVE if now_ms < spec.deadline_ms else S.ENDED

"""The live reservation actuator: Morpheus's reservation actions applied through the RM REST API
(rm_client; captures reservation-*, err-reservation-*; scenarios/recurring-reservation*).

- `SubmitReservation` → `POST /reservation/new-reservation` (an id) then `POST
  /reservation/submit` into the plan queue (full path): 202 with an empty body; what the RM
  planned is read back from its list by the next reconciliation.
- `UpdateReservation` → `POST /reservation/update` (3.3.6: internal delete + add, 200 `{}`;
  running apps keep their containers).
- `DeleteReservation` → `POST /reservation/delete` (200 `{}`; its apps move to
  `root.default-default` and keep running).
- `MoveApp` → `PUT /apps/{id}/queue` with the leaf's name (200, containers kept; a move to the
  plan queue or its default queue answers 500: scenarios/queue-move-and-priority).
The definition is `reservation-request-interpreter` as the ORDINAL, durations and times in ms,
recurrence as a period in ms (rm_client encodes it).

Contract (the loop's `ReservationActuator` port, loop/morpheus_reservations.py): actions are
applied in order and each gets a `ReservationResult` as data, nothing raises to the loop.
An action whose data (`as_of`) is older than `stale_after_s` on this clock when its turn comes
is DROPPED without a call (DESIGN.md principle 16). Nothing is retried: the client given here
must not retry writes (app.py builds it with `max_retries=0`); the next tick decides again
from the RM's list. A 4xx (or a body rm_client refuses before sending) is REFUSED: nothing
changed; a transport error, 5xx or undecodable answer is FAILED: the effect is unknown.
"""

from __future__ import annotations

import threading
from typing import Callable, Sequence

from rm_client import (
    Interpreter, ReservationDefinition, ReservationRequest, Resource, RMAuthError, RMBadRequestError, RMClient,
    RMError, RMNotFoundError, RMValidationError,
)

from harvester.decisions.reservation_actions import (
    DeleteReservation, MoveApp, Outcome, ReservationAction, ReservationResult, ReservationSpec, SubmitReservation,
    UpdateReservation,
)

REFUSED_ERRORS = (RMBadRequestError, RMNotFoundError, RMAuthError, RMValidationError)


def definition_of(spec: ReservationSpec) -> ReservationDefinition:
    """The rm_client definition of a spec (the RM's units: epoch ms, ordinals)."""
    return ReservationDefinition(
        arrival_ms=spec.arrival_ms, deadline_ms=spec.deadline_ms, name=spec.name,
        interpreter=Interpreter(spec.interpreter), recurrence_period_ms=spec.recurrence_ms,
        requests=tuple(ReservationRequest(Resource(s.container.memory_mb, s.container.vcores), s.containers, s.gang,
                                          s.duration_ms) for s in spec.stages),
    )


class RMReservationActuator:
    """Applies reservation actions to one RM (module docstring)."""

    def __init__(self, client: RMClient, clock_now: Callable[[], float], *, stale_after_s: float = 30.0) -> None:
        self._client = client
        self._now = clock_now
        self._stale_after_s = stale_after_s
        self._lock = threading.Lock()  # one batch at a time (the loop and the admin face may share it)

    def apply(self, actions: Sequence[ReservationAction], request_id: str) -> list[ReservationResult]:
        out: list[ReservationResult] = []
        with self._lock:
            for a in actions:
                age = self._now() - a.as_of
                if age > self._stale_after_s:
                    out.append(ReservationResult(a, Outcome.DROPPED, error=f"data {age:.1f}s old > {self._stale_after_s:g}s"))
                    continue
                out.append(self._send(a))
        return out

    def _send(self, a: ReservationAction) -> ReservationResult:
        rid: str | None = getattr(a, "reservation_id", None)
        try:
            if isinstance(a, SubmitReservation):
                rid = self._client.new_reservation()
                self._client.submit_reservation(rid, a.queue, definition_of(a.spec))
            elif isinstance(a, UpdateReservation):
                self._client.update_reservation(a.reservation_id, definition_of(a.spec))
            elif isinstance(a, DeleteReservation):
                self._client.delete_reservation(a.reservation_id)
            elif isinstance(a, MoveApp):
                self._client.move_app(a.app_id, a.queue)
            else:
                return ReservationResult(a, Outcome.REFUSED, rid, f"unknown action {type(a).__name__}")
        except REFUSED_ERRORS as err:
            return ReservationResult(a, Outcome.REFUSED, rid, err.remote_message or str(err), err.remote_exception or "")
        except RMError as err:
            return ReservationResult(a, Outcome.FAILED, rid, str(err), err.remote_exception or "")
        return ReservationResult(a, Outcome.SENT, rid)

"""The channel between Morpheus's reservation loop, which knows WHEN a reservation queue needs
a nudge, and the guard loop, which alone writes node resources and therefore decides HOW
(decisions/nudge.py says why; loop/guard.py sends it inside its tick).

`request(reasons, at)` adds reasons to the pending nudge (with `not_before`: only once the
guard's clock reaches that time — a change the plan follower applies later, such as the stage
Jockey's resize starts at a future second); the guard's tick `take()`s it, and
reports back `done(...)` (sent, or covered by its own update) or `deferred(...)` (kept
pending: stale telemetry, no settled node, a failed POST). Outcomes are kept in a bounded log
and handed to `on_outcome` (the reservation loop publishes them on the state board).
`actuator` is what sends the nudge when the guard itself does not actuate (harvesting dry
run, Morpheus actuating): then no guard update can conflict with it.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable, Sequence

from harvester.actuators.port import Actuator
from harvester.decisions.nudge import NudgeOutcome

LOG_SIZE = 100


class NudgeChannel:
    def __init__(self, actuator: Actuator | None = None,
                 on_outcome: Callable[[NudgeOutcome], None] | None = None) -> None:
        self.actuator = actuator
        self.on_outcome = on_outcome  # set by whoever publishes the outcomes (the reservation loop)
        self._lock = threading.Lock()
        self._reasons: list[str] = []
        self._since: float | None = None
        self._last_note: str | None = None
        self._later: list[tuple[float, str]] = []  # (not before, reason)
        self.log: deque[NudgeOutcome] = deque(maxlen=LOG_SIZE)

    def request(self, reasons: Sequence[str], at: float, not_before: float | None = None) -> None:
        if not reasons:
            return
        with self._lock:
            if not_before is not None and not_before > at:
                self._later.extend((not_before, r) for r in reasons)
                return
            self._reasons.extend(reasons)
            self._since = at if self._since is None else min(self._since, at)

    def pending(self, now: float | None = None) -> tuple[tuple[str, ...], float] | None:
        """The pending nudge's reasons and since when; `now` first adds the deferred requests due."""
        with self._lock:
            if now is not None and self._later:
                due = [r for t, r in self._later if t <= now]
                if due:
                    self._later = [(t, r) for t, r in self._later if t > now]
                    self._reasons.extend(due)
                    self._since = now if self._since is None else min(self._since, now)
            return None if self._since is None else (tuple(self._reasons), self._since)

    def done(self, at: float, node_id: str | None, note: str) -> None:
        with self._lock:
            if self._since is None:
                return
            out = NudgeOutcome(at, self._since, tuple(self._reasons), True, node_id, note)
            self._reasons, self._since, self._last_note = [], None, None
            self.log.append(out)
        self._emit(out)

    def deferred(self, at: float, note: str) -> None:
        with self._lock:
            if self._since is None or note == self._last_note:
                return  # one log entry per reason of waiting, not one per guard tick
            self._last_note = note
            out = NudgeOutcome(at, self._since, tuple(self._reasons), False, None, note)
            self.log.append(out)
        self._emit(out)

    def _emit(self, out: NudgeOutcome) -> None:
        if self.on_outcome is not None:
            self.on_outcome(out)

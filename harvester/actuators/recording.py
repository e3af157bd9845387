"""A fake `Actuator` that records what it is asked to do (tests, dry runs)."""

from __future__ import annotations

import threading
from typing import Callable, Sequence

from harvester.domain import Action, ActionError


class RecordingActuator:
    """Records every batch; `fail` decides per action whether it fails (with a message)."""

    def __init__(self, fail: Callable[[Action], str | None] | None = None, clock_now: Callable[[], float] = lambda: 0.0) -> None:
        self.batches: list[tuple[str, list[Action]]] = []
        self._fail = fail
        self._now = clock_now
        self._errors: list[ActionError] = []
        self._lock = threading.Lock()

    @property
    def actions(self) -> list[Action]:
        return [a for _, batch in self.batches for a in batch]

    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]:
        sent: list[Action] = []
        with self._lock:
            for a in actions:
                why = self._fail(a) if self._fail else None
                if why:
                    self._errors.append(ActionError(a, self._now(), why))
                else:
                    sent.append(a)
            self.batches.append((request_id, sent))
        return sent

    def poll_errors(self) -> list[ActionError]:
        with self._lock:
            errors, self._errors = self._errors, []
        return errors

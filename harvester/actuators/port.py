"""The `Actuator` port (DESIGN.md principles 2 and 5).

Contract:
- `apply(actions, request_id)` applies a batch of actions, in order, as well as it can. It
  never raises for one failed action: each failure becomes an `ActionError` that the next
  `poll_errors()` returns (and then forgets), so a loop sees failures as data on its next
  tick instead of dying.
- It returns the actions it actually sent (an actuator may drop one that is invalid).
- Live, the RM REST API implements it; the simulator applies actions to its cluster model.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from harvester.domain import Action, ActionError


class Actuator(Protocol):
    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]: ...

    def poll_errors(self) -> list[ActionError]: ...

"""Explicit lifecycles of what the emulated RM acts on over time (DESIGN.md principle 6).

Each lifecycle is a state enum, a table of valid transitions and a status history; a move the
table does not allow raises `InvalidTransition` (a bug in the emulator, never a client error).
The app and attempt states are Hadoop 3.3.6's `RMAppState` / `RMAppAttemptState` names as the
REST API prints them; the container states are `RMContainerState`. The reservation lifecycle
is the emulator's own view of a plan entry (the RM has no such enum): planned, active while
its allocation covers "now" (its queue exists), ended, deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, Mapping

from harvester.lifecycle import Change, InvalidTransition, S  # one exception, one history entry


class AppState(str, Enum):
    NEW = "NEW"
    NEW_SAVING = "NEW_SAVING"
    SUBMITTED = "SUBMITTED"
    ACCEPTED = "ACCEPTED"
    RUNNING = "RUNNING"
    FINAL_SAVING = "FINAL_SAVING"
    FINISHING = "FINISHING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    KILLING = "KILLING"
    KILLED = "KILLED"


APP_TERMINAL = frozenset({AppState.FINISHED, AppState.FAILED, AppState.KILLED})

APP_TRANSITIONS: Mapping[AppState, frozenset[AppState]] = {
    AppState.NEW: frozenset({AppState.NEW_SAVING, AppState.FINAL_SAVING, AppState.KILLED}),
    AppState.NEW_SAVING: frozenset({AppState.SUBMITTED, AppState.FINAL_SAVING, AppState.KILLED}),
    AppState.SUBMITTED: frozenset({AppState.ACCEPTED, AppState.FINAL_SAVING, AppState.KILLING}),
    AppState.ACCEPTED: frozenset({AppState.RUNNING, AppState.FINAL_SAVING, AppState.KILLING}),
    AppState.RUNNING: frozenset({AppState.FINAL_SAVING, AppState.FINISHING, AppState.KILLING}),
    AppState.FINAL_SAVING: frozenset({AppState.FINISHING, AppState.FINISHED, AppState.FAILED, AppState.KILLED}),
    AppState.FINISHING: frozenset({AppState.FINISHED}),
    AppState.KILLING: frozenset({AppState.FINAL_SAVING, AppState.KILLED}),
    AppState.FINISHED: frozenset(),
    AppState.FAILED: frozenset(),
    AppState.KILLED: frozenset(),
}


class AttemptState(str, Enum):
    NEW = "NEW"
    SUBMITTED = "SUBMITTED"
    SCHEDULED = "SCHEDULED"
    ALLOCATED = "ALLOCATED"
    LAUNCHED = "LAUNCHED"
    RUNNING = "RUNNING"
    FINAL_SAVING = "FINAL_SAVING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    KILLED = "KILLED"


ATTEMPT_TRANSITIONS: Mapping[AttemptState, frozenset[AttemptState]] = {
    AttemptState.NEW: frozenset({AttemptState.SUBMITTED, AttemptState.KILLED}),
    AttemptState.SUBMITTED: frozenset({AttemptState.SCHEDULED, AttemptState.FINAL_SAVING}),
    AttemptState.SCHEDULED: frozenset({AttemptState.ALLOCATED, AttemptState.FINAL_SAVING}),
    AttemptState.ALLOCATED: frozenset({AttemptState.LAUNCHED, AttemptState.FINAL_SAVING}),
    AttemptState.LAUNCHED: frozenset({AttemptState.RUNNING, AttemptState.FINAL_SAVING}),
    AttemptState.RUNNING: frozenset({AttemptState.FINAL_SAVING}),
    AttemptState.FINAL_SAVING: frozenset({AttemptState.FINISHED, AttemptState.FAILED, AttemptState.KILLED}),
    AttemptState.FINISHED: frozenset(),
    AttemptState.FAILED: frozenset(),
    AttemptState.KILLED: frozenset(),
}


class ContainerState(str, Enum):
    ALLOCATED = "ALLOCATED"
    ACQUIRED = "ACQUIRED"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    KILLED = "KILLED"
    RELEASED = "RELEASED"


CONTAINER_TRANSITIONS: Mapping[ContainerState, frozenset[ContainerState]] = {
    ContainerState.ALLOCATED: frozenset({ContainerState.ACQUIRED, ContainerState.KILLED, ContainerState.RELEASED}),
    ContainerState.ACQUIRED: frozenset({ContainerState.RUNNING, ContainerState.COMPLETED, ContainerState.KILLED,
                                        ContainerState.RELEASED}),
    ContainerState.RUNNING: frozenset({ContainerState.COMPLETED, ContainerState.KILLED, ContainerState.RELEASED}),
    ContainerState.COMPLETED: frozenset(),
    ContainerState.KILLED: frozenset(),
    ContainerState.RELEASED: frozenset(),
}


class ReservationState(str, Enum):
    PLANNED = "PLANNED"   # accepted into the plan, its allocation has not started (or is between periods)
    ACTIVE = "ACTIVE"     # its allocation covers now: the plan follower created its queue
    ENDED = "ENDED"       # past its last allocation; still listed until deleted
    DELETED = "DELETED"


RESERVATION_TRANSITIONS: Mapping[ReservationState, frozenset[ReservationState]] = {
    ReservationState.PLANNED: frozenset({ReservationState.ACTIVE, ReservationState.ENDED, ReservationState.DELETED}),
    ReservationState.ACTIVE: frozenset({ReservationState.PLANNED, ReservationState.ENDED, ReservationState.DELETED}),
    ReservationState.ENDED: frozenset({ReservationState.PLANNED, ReservationState.ACTIVE, ReservationState.DELETED}),
    ReservationState.DELETED: frozenset(),
}

@dataclass
class Lifecycle(Generic[S]):
    """The current state of one thing, its valid moves and its history (oldest first); mutable,
    unlike harvester.lifecycle.Lifecycle, because the emulator's objects change in place."""

    what: str
    table: Mapping[S, frozenset[S]]
    state: S
    history: list[Change[S]] = field(default_factory=list)

    @classmethod
    def start(cls, what: str, table: Mapping[S, frozenset[S]], initial: S, at: float, reason: str = "") -> Lifecycle[S]:
        lc = cls(what, table, initial)
        lc.history.append(Change(at, initial, reason))
        return lc

    def can(self, new: S) -> bool:
        return new in self.table[self.state]

    def to(self, new: S, at: float, reason: str = "") -> None:
        if new not in self.table[self.state]:
            raise InvalidTransition(f"{self.what}: {self.state.value} -> {new.value} is not allowed ({reason})")
        self.state = new
        self.history.append(Change(at, new, reason))

    def path(self, *states: S, at: float, reason: str = "") -> None:
        """Several moves at one instant (e.g. NEW -> NEW_SAVING -> SUBMITTED)."""
        for s in states:
            self.to(s, at, reason)

    def entered(self, state: S) -> float | None:
        """When the lifecycle last entered `state`, if ever."""
        for ch in reversed(self.history):
            if ch.state == state:
                return ch.at
        return None

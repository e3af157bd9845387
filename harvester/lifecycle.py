"""Explicit lifecycles (DESIGN.md principle 6): a state enum, a table of valid transitions, a
status history, and `InvalidTransition` for a move the table does not have.

`Lifecycle` here is an immutable value: `to()` returns the moved lifecycle and leaves the old
one as it was, so a lifecycle can sit inside a frozen record that a loop publishes on the state
board (Morpheus's reservations and SLO contracts). The emulator keeps its own mutable variant
for the RM's internal objects (emulator/lifecycle.py) and the guard's kills have theirs
(decisions/kills.py); all of them raise this one `InvalidTransition`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Generic, Mapping, TypeVar


class InvalidTransition(RuntimeError):
    """A state change the lifecycle table forbids (a bug in the caller, never a user error)."""


S = TypeVar("S", bound=Enum)


@dataclass(frozen=True, slots=True)
class Change(Generic[S]):
    """One entry of a status history: when, the state entered, and why."""

    at: float
    state: S
    reason: str


@dataclass(frozen=True, slots=True)
class Lifecycle(Generic[S]):
    """The current state of one thing, its transition table and its history (oldest first)."""

    what: str
    table: Mapping[S, frozenset[S]]
    history: tuple[Change[S], ...]

    @classmethod
    def start(cls, what: str, table: Mapping[S, frozenset[S]], initial: S, at: float,
              reason: str = "") -> Lifecycle[S]:
        if initial not in table:
            raise InvalidTransition(f"{what}: {initial} is not a state of its lifecycle")
        return cls(what, table, (Change(at, initial, reason),))

    @property
    def state(self) -> S:
        return self.history[-1].state

    @property
    def since(self) -> float:
        return self.history[-1].at

    def can(self, new: S) -> bool:
        return new in self.table[self.state]

    def to(self, new: S, at: float, reason: str = "", *, keep: int | None = None) -> Lifecycle[S]:
        """This lifecycle moved to `new`; `keep` bounds the history (the first entry is kept)."""
        if new not in self.table[self.state]:
            raise InvalidTransition(f"{self.what}: {self.state.value} -> {new.value} is not allowed ({reason})")
        history = self.history + (Change(at, new, reason),)
        if keep is not None and len(history) > keep:
            history = history[:1] + history[len(history) - keep + 1:]
        return Lifecycle(self.what, self.table, history)

    def entered(self, state: S) -> float | None:
        """When the lifecycle last entered `state`, if ever."""
        for ch in reversed(self.history):
            if ch.state == state:
                return ch.at
        return None


def check_table(table: Mapping[S, frozenset[S]]) -> None:
    """Every target of `table` is a state of it (tests call this on each lifecycle's table)."""
    for src, targets in table.items():
        unknown = [t for t in targets if t not in table]
        if unknown:
            raise InvalidTransition(f"{src} leads to states without a row: {unknown}")

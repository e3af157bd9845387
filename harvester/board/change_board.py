"""A published document readers can wait on: the base of the advice documents' board items.

One writer swaps in immutable documents (each with a `version`); readers take `current()` or
wait, up to a timeout, for a version different from the one they hold (`wait_for_change`,
what the HTTP long-polls and gRPC watch streams do). `close()` wakes every waiter for shutdown.
A `ChangeBoard` is a typed facade of ONE item of a state `Board` (board/__init__.py: waiting
is in wall-clock seconds, closing the board wakes every waiter); without a board it makes its
own (tests, tools). Subclasses decide what a publish means (hdfs.PlacementBoard:
caller-given increasing versions; versioned_board.VersionedBoard: a new version only when the
content changes).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from harvester.board import Board, Item


class _HasVersion(Protocol):
    @property
    def version(self) -> int: ...


D = TypeVar("D", bound=_HasVersion)
_private = itertools.count()


class ChangeBoard(Generic[D]):
    """The current document of `item` on `board` (module docstring)."""

    def __init__(self, board: Board | None = None, item: Item[D | None] | None = None) -> None:
        self.board = board if board is not None else Board()
        self.item: Item[D | None] = item if item is not None else Item(f"document-{next(_private)}", None)

    def _swap(self, make: Callable[[D | None], D]) -> D:
        """Atomically, `make(current)` gives the next document; a different object is published
        and wakes every waiter (returning `current` itself publishes nothing)."""
        return self.board.update(self.item, make)  # type: ignore[arg-type, return-value]

    def current(self) -> D | None:
        return self.board.get(self.item)

    @property
    def closed(self) -> bool:
        return self.board.closed

    def wait_for_change(self, version: int | None, timeout_s: float) -> D | None:
        """The current document as soon as its version differs from `version` (None: any),
        else after `timeout_s` (or on close) whatever is current, maybe still `version`."""
        return self.board.wait(self.item, lambda cur: cur is not None and cur.version != version, timeout_s)

    def close(self) -> None:
        self.board.close()

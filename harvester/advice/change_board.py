"""A published document that readers can wait on: the base of the advice boards.

One writer swaps in immutable documents (each with a `version`); readers take `current()` or
wait, up to a timeout, for a version different from the one they hold (`wait_for_change`,
what the HTTP long-polls and gRPC watch streams do). `close()` wakes every waiter for shutdown.
Waiting is in WALL-CLOCK seconds on purpose: it is a network protocol timeout, not
control-loop time, so it does not follow the injected `Clock`. Subclasses decide what a
publish means (hdfs_board.PlacementBoard: caller-given increasing versions;
versioned_board.VersionedBoard: a new version only when the content changes).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class _HasVersion(Protocol):
    @property
    def version(self) -> int: ...


D = TypeVar("D", bound=_HasVersion)


class ChangeBoard(Generic[D]):
    """Thread-safe holder of the current document (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: D | None = None
        self._changed = threading.Event()
        self._closed = False

    def _swap(self, make: Callable[[D | None], D]) -> D:
        """Under the lock, `make(current)` gives the next document; a different object is
        published and wakes every waiter (returning `current` itself publishes nothing)."""
        with self._lock:
            new = make(self._current)
            if new is self._current:
                return new
            self._current = new
            woken, self._changed = self._changed, threading.Event()
        woken.set()
        return new

    def current(self) -> D | None:
        with self._lock:
            return self._current

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    def wait_for_change(self, version: int | None, timeout_s: float) -> D | None:
        """The current document as soon as its version differs from `version` (None: any),
        else after `timeout_s` (or on close) whatever is current, maybe still `version`."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            with self._lock:
                cur, event, closed = self._current, self._changed, self._closed
            if (cur is not None and cur.version != version) or closed:
                return cur
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return cur
            event.wait(remaining)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            event = self._changed
        event.set()

"""The state board: where loops publish their latest results and the advice face reads them.

DESIGN.md principle 15: loops (harvester/loop) write here, the read side (harvester/advice)
reads here, and neither imports the other. The board is a small thread-safe map from `Item`s
to immutable values:

- an `Item[T]` names one published result and its value before the first publication; each
  feature declares its own items in its own module (board/harvesting.py: the class model, the
  classes' state, the guard's view and status; board/hdfs.py: the placement table), so a new
  loop (Morpheus plans, Jockey predictions, a node-ordering table) adds a module with its items
  and never touches the others;
- `publish` swaps a value, `update` does a read-modify-write under the board's lock (several
  fields that must change together live in ONE item, so a reader never sees half an update),
  `get` reads, `wait` blocks until a predicate holds (long-polls and watch streams);
- waiting is in WALL-CLOCK seconds on purpose: it is a network protocol timeout, not control
  time, so it does not follow the injected Clock. `close()` wakes every waiter for shutdown;
- `watch(item, callback)` calls `callback()` after every publication of the item and on close
  (from the publishing thread): how waiters that are not threads — the admin server's asyncio
  long-polls (advice/async_wait.py) — learn of a change without holding a thread each.

The composition root owns one `Board` and hands it to both sides; a feature's typed facade
(`HarvestingBoard`, `PlacementBoard`) is a stateless view over it, so the writer's and the
readers' facades see the same values.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Item(Generic[T]):
    """One kind of published result: a unique name and the value readers get before any publication."""

    name: str
    default: T


class Board:
    """Thread-safe holder of the latest value of every `Item` (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, Any] = {}
        self._items: dict[str, Item[Any]] = {}
        self._changed: dict[str, threading.Event] = {}
        self._watchers: dict[str, list[Callable[[], None]]] = {}
        self._closed = False

    def _check(self, item: Item[Any]) -> None:
        known = self._items.setdefault(item.name, item)
        if known is not item:
            raise ValueError(f"two board items are named {item.name!r}")

    def get(self, item: Item[T]) -> T:
        with self._lock:
            self._check(item)
            return self._values.get(item.name, item.default)  # type: ignore[no-any-return]

    def publish(self, item: Item[T], value: T) -> T:
        return self.update(item, lambda _: value)

    def update(self, item: Item[T], change: Callable[[T], T]) -> T:
        """Replace the item's value by `change(current)` atomically (`change` must be quick and
        must not touch the board); a `change` that raises leaves the value as it was, one that
        returns the current value itself publishes nothing (and wakes no waiter)."""
        with self._lock:
            self._check(item)
            current = self._values.get(item.name, item.default)
            value = change(current)
            if value is current:
                return value
            self._values[item.name] = value
            woken = self._changed.pop(item.name, None)
            watchers = list(self._watchers.get(item.name, ()))
        if woken is not None:
            woken.set()
        for callback in watchers:
            callback()
        return value

    def watch(self, item: Item[T], callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` (quick, thread-safe, must not touch the board) after every
        publication of `item` and on `close()`; returns the function that stops watching."""
        with self._lock:
            self._check(item)
            self._watchers.setdefault(item.name, []).append(callback)

        def unwatch() -> None:
            with self._lock:
                callbacks = self._watchers.get(item.name, [])
                if callback in callbacks:
                    callbacks.remove(callback)

        return unwatch

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    def wait(self, item: Item[T], until: Callable[[T], bool], timeout_s: float) -> T:
        """The item's value as soon as `until(value)` holds, else after `timeout_s` (wall time) or
        on `close()`, whatever is current then."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            with self._lock:
                self._check(item)
                value = self._values.get(item.name, item.default)
                closed = self._closed
                event = self._changed.setdefault(item.name, threading.Event())
            if closed or until(value):
                return value  # type: ignore[no-any-return]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return value  # type: ignore[no-any-return]
            event.wait(remaining)

    def close(self) -> None:
        """Wake every waiter (shutdown); values stay readable."""
        with self._lock:
            self._closed = True
            events, self._changed = list(self._changed.values()), {}
            watchers = [cb for cbs in self._watchers.values() for cb in cbs]
        for e in events:
            e.set()
        for callback in watchers:
            callback()


__all__ = ["Board", "Item"]

"""A published advice document with a version that changes only when its content does.

The node-ordering loop (writer) publishes every guard period; readers — the HTTP long-poll
(`long_poll`) and gRPC GetNodeOrdering — get an immutable `Versioned` snapshot. A publish
whose `content` equals the current one keeps the version (no long-poll is woken for
nothing; the plug-ins' copies stay confirmed by 304s). The first version is the publisher's
`first_version` (the time of the first publish in ms), so versions keep increasing across
sidecar restarts. Waiting is in wall-clock seconds (a protocol timeout, like hdfs_board).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Versioned(Generic[T]):
    version: int
    value: T
    body: bytes
    content: Any


class VersionedBoard(Generic[T]):
    """Thread-safe holder of the current document (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: Versioned[T] | None = None
        self._changed = threading.Event()
        self._closed = False

    def publish(self, value: T, render: Callable[[int], bytes], *, content: Any, first_version: int) -> Versioned[T]:
        """Swap in `value` (its body is `render(version)`) unless its `content` is unchanged;
        returns what is current after."""
        with self._lock:
            cur = self._current
            if cur is not None and cur.content == content:
                return cur
            version = max(first_version, 1) if cur is None else cur.version + 1
            self._current = Versioned(version, value, render(version), content)
            woken, self._changed = self._changed, threading.Event()
            new = self._current
        woken.set()
        return new

    def current(self) -> Versioned[T] | None:
        with self._lock:
            return self._current

    def wait_for_change(self, version: int | None, timeout_s: float) -> Versioned[T] | None:
        """The current document as soon as its version differs from `version` (None: any),
        else after `timeout_s` (or on close) whatever is current."""
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

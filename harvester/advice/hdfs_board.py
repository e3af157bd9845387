"""The published placement table, shared by the refresh loop (writer) and both advice faces.

`PlacementBoard.publish(table)` swaps in a new version together with everything the readers
need precomputed (the `PlacementIndex` for ChooseTargets/Verify/Delete, the canonical JSON
body for HTTP) and wakes every long-poll and watch stream waiting for a change. Readers get
an immutable `Published` snapshot, so a request never sees half of two versions.

Waiting (`wait_for_change`) is in WALL-CLOCK seconds on purpose: it is a network protocol
timeout (an HTTP long-poll's `wait`, a stream's liveness check), not control-loop time, so it
does not follow the injected `Clock` (a sped-up ScaledClock must not shorten a client's poll).
`close()` wakes every waiter for shutdown.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from hdfs_placement import PlacementIndex, PlacementTable


@dataclass(frozen=True)
class Published:
    table: PlacementTable
    index: PlacementIndex
    body: bytes  # PlacementTable.dumps(), UTF-8 (ASCII): what GET /v1/hdfs/placement-table serves

    @property
    def version(self) -> int:
        return self.table.version


class PlacementBoard:
    """Thread-safe holder of the current table version (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: Published | None = None
        self._changed = threading.Event()
        self._closed = False

    def publish(self, table: PlacementTable) -> Published:
        pub = Published(table, PlacementIndex(table), table.dumps().encode("ascii"))
        with self._lock:
            if self._current is not None and table.version <= self._current.version:
                raise ValueError(f"table version {table.version} is not above the published {self._current.version}")
            self._current = pub
            woken, self._changed = self._changed, threading.Event()
        woken.set()
        return pub

    def current(self) -> Published | None:
        with self._lock:
            return self._current

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    def wait_for_change(self, version: int | None, timeout_s: float) -> Published | None:
        """The current table as soon as its version differs from `version` (None: any table),
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

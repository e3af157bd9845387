"""The injected clock (DESIGN.md principle 3).

Every loop and every timestamp in Harvester comes from a `Clock` passed in by the composition
root: `RealClock` when serving, `SimClock` in the simulator and in tests. No module reads the
wall clock on its own, so a test or a simulation can move time forward deterministically.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Source of time. `now()` is epoch seconds (float); `monotonic()` only orders intervals."""

    def now(self) -> float: ...

    def monotonic(self) -> float: ...

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Block until `stop` is set or `seconds` of this clock's time pass; True if stopped."""
        ...


class RealClock:
    """Wall-clock time for live serving."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(max(0.0, seconds))


class SimClock:
    """A clock that only moves when told to; thread-safe.

    `wait` does not block on wall time: it advances nothing and returns immediately unless the
    stop event is set, so code driven by a SimClock is stepped explicitly (`advance`, `set`).
    """

    def __init__(self, start: float = 0.0) -> None:
        self._t = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._t

    def monotonic(self) -> float:
        return self.now()

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError(f"a clock cannot go backwards (advance by {seconds})")
        with self._lock:
            self._t += seconds
            return self._t

    def set(self, t: float) -> None:
        with self._lock:
            if t < self._t:
                raise ValueError(f"a clock cannot go backwards ({t} < {self._t})")
            self._t = float(t)

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.is_set()


class ScaledClock:
    """Real time sped up `speed` times from `start` (epoch s): the emulator's fast-forward.

    `wait` sleeps the real-time equivalent, so a loop with a 10 s interval on a 60x clock
    ticks every 1/6 s of wall time.
    """

    def __init__(self, speed: float, start: float | None = None) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self.speed = speed
        self._wall0 = time.monotonic()
        self._t0 = time.time() if start is None else start

    def now(self) -> float:
        return self._t0 + (time.monotonic() - self._wall0) * self.speed

    def monotonic(self) -> float:
        return self.now()

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(max(0.0, seconds) / self.speed)


def wall_seconds(clock: Clock, seconds: float) -> float:
    """How many real seconds `seconds` of `clock`'s time last (a network timeout is in real
    seconds): divided by a ScaledClock's speed; the same number for every other clock."""
    speed = getattr(clock, "speed", 1.0)
    return seconds / speed if isinstance(speed, (int, float)) and speed > 0 else seconds

"""`ControlLoop`: runs a tick function every `interval_s` of an injected `Clock`.

A tick is `tick(now) -> TickResult`: it does one reconcile step and says what it did. A
`LoopSpec` names a tick and its interval (harvester/control.py lists Harvester's); live, a
`ControlLoop` thread runs it, in the simulator the engine ticks the same object on simulated
time (harvester/sim/simulation.py). The live loop supervises a tick: an exception fails THAT tick (counted in metrics, kept in `status()` with
its message and the DEPENDENCY it names — `rm`, `namenode`, `store`, or none for a bug) and
the loop goes on — one bad RM answer must not stop harvesting. Tests call `run_once()` with a
`SimClock` instead of starting the thread.

Failures are quiet and patient (issue 15: 20 failed polls wrote 40 tracebacks):
- every failed tick is logged with its exception as an ARGUMENT (no traceback) when a
  dependency failed, with its traceback when it is a bug of ours; the log handler's
  `RepeatFilter` (observability/logs.py, the one place that folds repeats) shows one line per
  cause with a repeat count and tells a network failure plainly; recovery is one line;
- with `backoff_max_s` (loops that call a remote service: telemetry, jobs, hdfs-poll),
  consecutive failures stretch the wait to uniform(base, min(backoff_max_s, base × 2^failures))
  (exponential back-off with jitter, so many sidecars do not hammer a recovering RM at once),
  where base is the interval, or `retry_s` when shorter: a loop with a long interval that polls
  the RM (jobs, every 60 s) retries a failed poll at the RM poll rate the sidecar keeps anyway
  (issue 25: one failed /apps poll at start kept /readyz 503 for ~110 s, the nodes' 18 s);
- the time of the next tick is kept (`status()["next_tick_at"]`) and a failing loop's
  `healthy()` reason ends with "next try in N s".
"""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from rm_client.redact import redact_text

from harvester.clock import Clock
from harvester.observability.metrics import Metrics

log = logging.getLogger(__name__)


Tick = Callable[[float], "TickResult"]


@dataclass(frozen=True)
class LoopSpec:
    """One loop of the control plane: its name, how often it ticks, and its `tick(now)`."""

    name: str
    interval_s: float
    tick: Tick
    backoff_max_s: float | None = None  # back off while failing (remote dependencies only)
    retry_s: float | None = None        # the back-off's first wait when shorter than the interval


@dataclass(frozen=True)
class TickResult:
    """What one tick did, e.g. {"nodes": 12, "rows_written": 12}; shown in /status."""

    summary: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class _Status:
    state: str = "created"
    ticks: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    last_tick_at: float | None = None
    last_ok_at: float | None = None
    last_duration_s: float | None = None
    last_error: str | None = None
    last_dependency: str | None = None
    failing_since: float | None = None
    next_tick_at: float | None = None
    last_summary: Mapping[str, Any] = field(default_factory=dict)


def dependency_of(exc: BaseException) -> str | None:
    """What a failed tick depends on: an exception's `dependency` attribute (telemetry: `rm`,
    NameNode JMX: `namenode`), SQLite errors are the `store`; None = a bug of our own."""
    named = getattr(exc, "dependency", None)
    if isinstance(named, str):
        return named
    if isinstance(exc, sqlite3.Error) or type(exc).__name__ == "StoreError":
        return "store"
    return None


class ControlLoop:
    """One named loop; `start()`/`stop()` manage its thread, `run_once()` runs one tick."""

    def __init__(
        self,
        name: str,
        interval_s: float,
        tick: Callable[[float], TickResult],
        clock: Clock,
        metrics: Metrics,
        *,
        backoff_max_s: float | None = None,
        retry_s: float | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"loop {name}: interval must be positive, got {interval_s}")
        self.backoff_max_s = backoff_max_s
        self.retry_s = interval_s if retry_s is None else min(interval_s, retry_s)
        self._next_wait = interval_s
        self._rng = rng or random.Random()
        self._cause: str | None = None
        self._repeats = 0
        self.name = name
        self.interval_s = interval_s
        self._tick = tick
        self._clock = clock
        self._metrics = metrics
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._status = _Status()

    def run_once(self) -> TickResult | None:
        """Run one tick now; returns its result, or None when it failed (see `status()`)."""
        now = self._clock.now()
        started = self._clock.monotonic()
        dependency = None
        try:
            result = self._tick(now)
            ok, error = True, None
        except Exception as exc:  # supervised: the failure is recorded below, the loop lives on
            result, ok, error = None, False, redact_text(f"{type(exc).__name__}: {exc}")
            dependency = dependency_of(exc)
            self._log_failure(exc, error, dependency)
        if ok and self._cause is not None:
            log.info("loop %s recovered after %d failed tick(s)", self.name, self._repeats, extra={"loop": self.name})
            self._cause, self._repeats = None, 0
        duration = max(0.0, self._clock.monotonic() - started)
        self._metrics.record_tick(self.name, ok, duration, now)
        with self._lock:
            s = self._status
            s.ticks += 1
            s.last_tick_at = now
            s.last_duration_s = duration
            if ok:
                s.last_ok_at = now
                s.consecutive_failures = 0
                s.last_error = None
                s.last_dependency = None
                s.failing_since = None
                s.last_summary = dict(result.summary) if result else {}
            else:
                s.failures += 1
                s.consecutive_failures += 1
                s.last_error = error
                s.last_dependency = dependency
                if s.failing_since is None:
                    s.failing_since = now
            self._next_wait = self._draw_wait(s.consecutive_failures)
            s.next_tick_at = now + self._next_wait
        return result

    def _log_failure(self, exc: Exception, error: str, dependency: str | None) -> None:
        """One record per failed tick; repeats are folded by the handler (module docstring)."""
        extra = {"loop": self.name, "dependency": dependency or "internal"}
        self._cause, self._repeats = error, self._repeats + 1
        if dependency is None:  # a bug of our own: its traceback (once per cause, by the filter)
            log.error("loop %s: tick failed: %s", self.name, error, exc_info=exc, extra=extra)
        else:
            log.warning("loop %s: tick failed (%s): %s", self.name, dependency, exc, extra=extra)

    def next_wait_s(self) -> float:
        """The wait before the next tick, drawn when the last one ended: the interval, or while
        failing the back-off (module docstring)."""
        with self._lock:
            return self._next_wait

    def _draw_wait(self, failures: int) -> float:
        if not failures or self.backoff_max_s is None:
            return self.interval_s
        base = self.retry_s
        cap = max(base, min(self.backoff_max_s, base * 2.0 ** min(failures, 30)))
        return self._rng.uniform(base, cap)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = self._clock.monotonic()
            self.run_once()
            elapsed = self._clock.monotonic() - started
            if self._clock.wait(self._stop, self.next_wait_s() - elapsed):
                break
        with self._lock:
            self._status.state = "stopped"

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"loop {self.name} already started")
        with self._lock:
            self._status.state = "running"
        self._thread = threading.Thread(target=self._run, name=f"loop-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 2.0) -> bool:
        """Ask the loop to stop and wait up to `timeout_s`; True when its thread has ended."""
        self._stop.set()
        if self._thread is None:
            with self._lock:
                self._status.state = "stopped"
            return True
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def healthy(self, now: float) -> tuple[bool, str]:
        """Ready when the last tick succeeded and is not older than three intervals."""
        with self._lock:
            s = self._status
            if s.consecutive_failures:
                dep = f"{s.last_dependency}: " if s.last_dependency else ""
                nxt = "" if s.next_tick_at is None else f"; next try in {max(0.0, s.next_tick_at - now):.0f} s"
                return False, (f"{dep}loop {self.name}: last {s.consecutive_failures} tick(s) failed: {s.last_error}{nxt}")
            if s.last_ok_at is None:
                return False, f"loop {self.name}: no successful tick yet"
            if now - s.last_ok_at > 3 * self.interval_s:
                return False, f"loop {self.name}: last good tick {now - s.last_ok_at:.0f}s ago"
            return True, "ok"

    def status(self) -> dict[str, Any]:
        with self._lock:
            s = self._status
            return {
                "name": self.name,
                "interval_s": self.interval_s,
                "state": s.state,
                "ticks": s.ticks,
                "failures": s.failures,
                "last_tick_at": s.last_tick_at,
                "last_ok_at": s.last_ok_at,
                "last_duration_s": s.last_duration_s,
                "last_error": s.last_error,
                "last_dependency": s.last_dependency,
                "consecutive_failures": s.consecutive_failures,
                "failing_since": s.failing_since,
                "next_tick_at": s.next_tick_at,
                "last_summary": dict(s.last_summary),
            }

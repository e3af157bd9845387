"""A failing loop is quiet and patient (issue 15 finding 6: 20 failed polls wrote 40 tracebacks,
651 log lines, and polled at the same pace): one line per cause with a repeat counter, no
traceback for a dependency's failure, back-off with jitter, the dependency named."""

from __future__ import annotations

import logging
import random
import sqlite3

import pytest
from prometheus_client import CollectorRegistry

from harvester.clock import SimClock
from harvester.history.store import StoreError
from harvester.loop.runner import ControlLoop, TickResult, dependency_of
from harvester.observability.metrics import Metrics
from harvester.telemetry.namenode_jmx import NameNodeJmxError
from harvester.telemetry.source import TelemetryError


class Flaky:
    def __init__(self) -> None:
        self.fail: Exception | None = TelemetryError("RM poll failed: GET /ws/v1/cluster/nodes connection refused after 3.0s")

    def __call__(self, now: float) -> TickResult:
        if self.fail is not None:
            raise self.fail
        return TickResult({"ok": True})


def _loop(tick: Flaky, **kw: object) -> ControlLoop:
    return ControlLoop("telemetry", 10.0, tick, SimClock(1_800_000_000.0), Metrics(CollectorRegistry()), **kw)  # type: ignore[arg-type]


def test_twenty_failed_polls_log_two_lines_and_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    tick = Flaky()
    loop = _loop(tick)
    caplog.set_level(logging.DEBUG, logger="harvester.loop.runner")
    for i in range(20):
        tick.fail = TelemetryError(f"RM poll failed: connection refused after {i}.0s")  # numbers vary, the cause not
        assert loop.run_once() is None
    lines = [r for r in caplog.records if r.name == "harvester.loop.runner"]
    assert len(lines) == 2, [r.getMessage() for r in lines]
    assert "tick failed (rm)" in lines[0].getMessage() and "10 times in a row" in lines[1].getMessage()
    assert all(r.exc_info is None for r in lines)
    tick.fail = None
    assert loop.run_once() is not None
    assert "recovered after 20 failed tick(s)" in caplog.records[-1].getMessage()


def test_a_new_cause_is_logged_and_a_bug_gets_its_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    tick = Flaky()
    loop = _loop(tick)
    caplog.set_level(logging.DEBUG, logger="harvester.loop.runner")
    loop.run_once()
    tick.fail = KeyError("node")
    loop.run_once()
    loop.run_once()
    records = [r for r in caplog.records if r.name == "harvester.loop.runner"]
    assert len(records) == 2 and records[1].exc_info is not None and "internal" in str(records[1].__dict__)


@pytest.mark.parametrize("exc, dependency", [
    (TelemetryError("x"), "rm"),
    (NameNodeJmxError("x"), "namenode"),
    (StoreError("x"), "store"),
    (sqlite3.OperationalError("attempt to write a readonly database"), "store"),
    (ValueError("x"), None),
])
def test_dependency_of(exc: Exception, dependency: str | None) -> None:
    assert dependency_of(exc) == dependency


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    tick = Flaky()
    loop = _loop(tick, backoff_max_s=120.0, rng=random.Random(3))
    assert loop.next_wait_s() == 10.0
    waits = []
    for _ in range(8):
        loop.run_once()
        waits.append(loop.next_wait_s())
    caps = [min(120.0, 10.0 * 2**k) for k in range(1, 9)]
    assert all(10.0 <= w <= c for w, c in zip(waits, caps)), (waits, caps)
    assert max(waits) > 40.0 and len(set(waits)) == len(waits), "it grows, with jitter"
    tick.fail = None
    loop.run_once()
    assert loop.next_wait_s() == 10.0


def test_status_and_health_name_the_dependency_redacted() -> None:
    tick = Flaky()
    tick.fail = TelemetryError("GET http://yarn:hunter2@rm:8088/ws/v1/cluster/nodes refused")
    loop = _loop(tick)
    loop.run_once()
    ok, why = loop.healthy(1_800_000_000.0)
    st = loop.status()
    assert not ok and why.startswith("rm: loop telemetry: last 1 tick(s) failed")
    assert st["last_dependency"] == "rm" and st["consecutive_failures"] == 1
    assert "hunter2" not in why and "hunter2" not in str(st)

"""A failing loop is quiet and patient (issue 15 finding 6: 20 failed polls wrote 40 tracebacks,
651 log lines, and polled at the same pace): one line per cause with a repeat counter (the
handler's RepeatFilter), no traceback for a dependency's failure, back-off with jitter, the
dependency named."""

from __future__ import annotations

import io
import random
import sqlite3
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from harvester.clock import SimClock
from harvester.history.store import StoreError
from harvester.loop.runner import ControlLoop, TickResult, dependency_of
from harvester.observability.metrics import Metrics
from harvester.telemetry.namenode_jmx import NameNodeJmxError
from harvester.telemetry.source import TelemetryError
from shown_log import shown_log


class Flaky:
    def __init__(self) -> None:
        self.fail: Exception | None = TelemetryError("RM poll failed: GET /ws/v1/cluster/nodes connection refused after 3.0s")

    def __call__(self, now: float) -> TickResult:
        if self.fail is not None:
            raise self.fail
        return TickResult({"ok": True})


def _loop(tick: Flaky, **kw: object) -> ControlLoop:
    return ControlLoop("telemetry", 10.0, tick, SimClock(1_800_000_000.0), Metrics(CollectorRegistry()), **kw)  # type: ignore[arg-type]


@pytest.fixture()
def shown() -> Iterator[io.StringIO]:
    with shown_log() as out:
        yield out


def test_twenty_failed_polls_show_one_line_and_no_traceback(shown: io.StringIO) -> None:
    tick = Flaky()
    loop = _loop(tick)
    for _ in range(20):
        tick.fail = TelemetryError("RM poll failed: GET http://u:pw@rm:8088/ws/v1/cluster/nodes connection refused")
        assert loop.run_once() is None
    lines = [line for line in shown.getvalue().splitlines() if "harvester.loop.runner" in line]
    assert len(lines) == 1 and "tick failed (rm)" in lines[0] and "dependency=rm" in lines[0], lines
    assert "Traceback" not in shown.getvalue() and "pw@" not in shown.getvalue()
    tick.fail = None
    assert loop.run_once() is not None
    assert "recovered after 20 failed tick(s)" in shown.getvalue().splitlines()[-1]


def test_a_new_cause_is_shown_and_a_bug_gets_its_traceback_once(shown: io.StringIO) -> None:
    tick = Flaky()
    loop = _loop(tick)
    loop.run_once()
    tick.fail = KeyError("node")
    loop.run_once()
    loop.run_once()
    text = shown.getvalue()
    assert text.count("tick failed") == 2 and text.count("Traceback") == 1 and "dependency=internal" in text, text


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

"""With the RM down, the log shows one line per failure cause with a repeat count — not a
chained traceback per tick (issue 19: 111 lines in 23 s before)."""

from __future__ import annotations

import io
import logging
from typing import Iterator

import pytest
from prometheus_client import CollectorRegistry
from rm_fakes import closed_port_url

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.observability.logs import RepeatFilter, configure_logging

T0 = 1_795_430_000.0


class Ticker:
    """A monotonic clock the test moves (the filter's notion of "how long since the last line")."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def log() -> Iterator[tuple[io.StringIO, Ticker]]:
    out, clock = io.StringIO(), Ticker()
    configure_logging("INFO", "text", out, repeats=RepeatFilter(every_s=60, clock=clock))
    yield out, clock
    root = logging.getLogger()
    for h in [h for h in root.handlers if h.get_name() == "harvester"]:
        root.removeHandler(h)


def test_rm_down_is_one_line_per_cause_with_a_repeat_count(log: tuple[io.StringIO, Ticker]) -> None:
    out, clock = log
    url = closed_port_url()
    settings = parse_settings({
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
        "store": {"backend": "memory"}, "cluster": {"source": "rm"},
        # one retry per call, so rm_client's "retry round" lines are folded too
        "rm": {"urls": [url], "max_retries": 1, "backoff_base_s": 0.001, "backoff_max_s": 0.001},
    }, environ={})
    app = Harvester(settings, clock=SimClock(T0), registry=CollectorRegistry())
    try:
        for _ in range(20):
            assert app.loop("telemetry").run_once() is None
            assert app.loop("jobs").run_once() is None
        first = out.getvalue().splitlines()
        assert "Traceback" not in out.getvalue()
        ticks = [line for line in first if "tick failed" in line]
        assert len(ticks) == 2, first  # telemetry and jobs: one line each for 20 failures each
        assert all(url in line and "connection refused" in line for line in ticks), ticks
        assert len(first) <= 4, first  # + at most one rm_client retry line per call
        assert not any("HTTPConnectionPool" in line or "Max retries" in line for line in first), first
        clock.t += 61  # still down a minute later: one more line each, with the count
        app.loop("telemetry").run_once()
        later = out.getvalue().splitlines()[len(first):]
        [again] = [line for line in later if "tick failed" in line]
        assert "loop=telemetry" in again and "repeats=19" in again, again
    finally:
        app.stop()


def test_other_errors_keep_their_traceback_once() -> None:
    out, clock = io.StringIO(), Ticker()
    handler = logging.StreamHandler(out)
    handler.addFilter(RepeatFilter(every_s=60, clock=clock))
    logger = logging.getLogger("test.repeats")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for _ in range(3):
            try:
                {}["missing"]
            except KeyError:
                logger.exception("tick failed", extra={"loop": "refit"})
        assert out.getvalue().count("Traceback") == 1, "a bug shows its traceback, once per cause"
        logger.info("fine")
        assert out.getvalue().rstrip().endswith("fine"), "records without an exception always pass"
    finally:
        logger.removeHandler(handler)

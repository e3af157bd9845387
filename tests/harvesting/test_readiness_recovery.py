"""Issue 25: /readyz stayed 503 for ~110 s after ONE failed /apps poll at start, while the node
polls had recovered in 18 s — the jobs loop (interval 60 s) waited its interval stretched by the
failure back-off (uniform(60, 120) s) before trying again, and readiness waits for its next
success. A failed tick of a loop that polls the RM is now retried from the RM poll interval
(telemetry.poll_interval_s) on, and /readyz says when the next try is."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.emulator.demo import build_demo
from harvester.emulator.server import EmulatorServer

from embedded_sidecar import T0, loopback_settings, run_loops
from rm_fakes import FlakyFront

APPS = "/ws/v1/cluster/apps"


@pytest.fixture()
def flaky(tmp_path: Path) -> Iterator[tuple[Harvester, FlakyFront]]:
    clock = SimClock(T0)
    emu = EmulatorServer(build_demo(clock), "127.0.0.1", 0).start()
    front = FlakyFront(emu.url)
    settings = loopback_settings({"backend": "memory"}, {"cluster": {"source": "rm"},
                                                         "rm": {"urls": [front.url], "max_retries": 0}})
    app = Harvester(settings, clock=clock, registry=CollectorRegistry())
    app.start(run_loops=False)
    try:
        yield app, front
    finally:
        app.stop()
        front.close()
        emu.stop()


def test_one_failed_apps_poll_at_start_is_retried_soon_and_readiness_follows(flaky: tuple[Harvester, FlakyFront]) -> None:
    app, front = flaky
    front.fail(APPS, 1)
    seen: list[tuple[float, bool, list[str]]] = []

    def after(name: str) -> None:
        ready, problems = app.ready()
        seen.append((app.clock.now(), ready, problems))

    ticks = run_loops(app, 150.0, after=after)
    assert front.failed == [APPS], "exactly one /apps poll failed"
    failing = [(t, p) for t, ready, p in seen if not ready and any("loop jobs: last" in x for x in p)]
    assert failing, seen[:5]
    failed_at, problems = failing[0]
    line = next(x for x in problems if "loop jobs: last" in x)
    assert line.startswith("rm: loop jobs: last 1 tick(s) failed: ") and "WebApplicationException" in line
    assert "; next try in " in line, line
    ready_at = next(t for t, ready, _ in seen if t > failed_at and ready)
    poll = app.settings.telemetry.poll_interval_s
    assert ready_at - failed_at <= 2 * poll, f"ready again {ready_at - failed_at:.0f} s after the failed poll"
    assert ticks["jobs"] >= 3, "back on its own interval after the retry"


def test_readyz_names_the_next_try_in_its_document(flaky: tuple[Harvester, FlakyFront]) -> None:
    app, front = flaky
    front.fail(APPS, 1)
    assert app.loop("jobs").run_once() is None
    doc: dict[str, Any] = app.status()
    [jobs] = [lp for lp in doc["loops"] if lp["name"] == "jobs"]
    assert jobs["next_tick_at"] is not None
    wait = jobs["next_tick_at"] - app.clock.now()
    poll = app.settings.telemetry.poll_interval_s
    assert poll <= wait <= 2 * poll, wait

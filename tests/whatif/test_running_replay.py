"""The apps still running at the end of the history are replayed (whatif/running.py, issue 28):
from their submission (or the replay's start) holding their last allocation past the replay's
end; an app also stored finished, or submitted after the end, is not."""

from __future__ import annotations

import pytest

from harvester.models.job_history import RunningApp
from harvester.whatif.inputs import build_inputs
from harvester.whatif.recorded import read_recorded

from .builders import DAY, START, build


def _app(app: str, started: float, containers: int = 7, vcores: int = 13) -> RunningApp:
    return RunningApp("svc", app, app, "default", "RUNNING", started, containers, 2048 * containers, vcores, 0)


def test_still_running_apps_are_replayed_past_the_end_holding_their_last_allocation() -> None:
    b = build(days=2.0)
    end = b.end
    b.store.replace_running_apps([
        _app("app_service", START + 0.1 * DAY),                  # began before the replay
        _app("app_recent", end - 3 * 3600.0, 0, 0),               # accepted, no container yet
        _app(b.jobs[-1].app_id, b.jobs[-1].started_at),           # also stored finished
        _app("app_future", end + 600.0),                          # after the replayed span
    ], end - 60.0)
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    given, cov = build_inputs(rec)
    running = {j.job_id: j for j in given.jobs if j.meta.get("running_at_end")}
    assert set(running) == {"app_service", "app_recent"} and cov.jobs_running_at_end == 2
    assert cov.jobs + 2 == len(given.jobs) == len([r for r in b.jobs if r.started_at >= rec.replay_start]) + 2
    past = rec.end - rec.replay_start + cov.drain_s
    svc, recent = running["app_service"], running["app_recent"]
    assert svc.submit_s == 0.0 and recent.submit_s == pytest.approx(end - 3 * 3600.0 - rec.replay_start)
    (stage,) = svc.stages
    assert stage.tasks == 7 and stage.vcores == 2 and stage.memory_mb == 2048   # the last poll's, 13 vCores / 7
    assert all(svc.submit_s + d > past for d in stage.durations_s)                # never finishes in the replay
    assert recent.stages[0].tasks == 1 and recent.stages[0].vcores == 1         # none yet: one minimal
    without = build_inputs(read_recorded(build(days=2.0).store, b.harvesting, days=1.0))[1]
    assert cov.drain_s == without.drain_s, "the drain is the finished jobs' (a service would stretch it to a day)"

"""The jobs loop keeps the apps still running in the store (issue 28: whatif replays them), read
from the emulated RM over HTTP; an app leaves the running table when it finishes."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.config_harvesting import HarvestingSettings
from harvester.domain import Resources
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.job_runs import RecordJobRuns
from harvester.observability.metrics import Metrics
from harvester.telemetry.rm_jobs import RMJobRuns

from emu_cluster import EmuCluster


def test_running_apps_are_stored_as_last_polled_and_pruned_when_they_finish() -> None:
    with EmuCluster() as c:
        store = SqliteHistoryStore(":memory:")
        tick = RecordJobRuns(RMJobRuns(c.client), store, HarvestingBoard(Board()), Metrics(CollectorRegistry()),
                             HarvestingSettings(), nodes=dict)
        app = c.work.distributed_shell(3, Resources(1024, 1), duration_s=400.0, name="long-etl")
        c.advance(60)
        tick.tick(c.clock.now())
        c.advance(120)
        tick.tick(c.clock.now())
        ((alive, seen),) = store.running_apps()
        assert alive.app_id == app.app_id and alive.job_name == "long-etl" and alive.state == "RUNNING"
        assert alive.containers == 4 and alive.allocated_vcores == 4 and alive.allocated_mb >= 4 * 1024  # 3 + the AM
        assert alive.started_at <= seen == c.clock.now()
        assert store.job_runs(since=0) == []
        c.advance(400)
        tick.tick(c.clock.now())
        assert store.running_apps() == [], "finished: no longer a running app"
        assert [r.app_id for r in store.job_runs(since=0)] == [app.app_id]


def test_the_republished_window_is_the_stores_own() -> None:
    """The jobs loop keeps its window in memory (merging runs as the store does): after each tick
    it holds exactly what re-reading the store would give, a run seen again included."""
    from harvester.models.job_history import JobRun

    class Runs:
        def __init__(self) -> None:
            self.runs: list[JobRun] = []

        def poll(self, since: float) -> list[JobRun]:
            return [r for r in self.runs if r.finished_at >= since]

        def running(self) -> list:  # type: ignore[type-arg]
            return []

    h = HarvestingSettings.model_validate({"job_length": {"history_days": 1}})
    source, store = Runs(), SqliteHistoryStore(":memory:")
    store.append_job_runs([JobRun("old", "app_0", 0.0, 50.0, 2), JobRun("etl", "app_1", 100.0, 200.0, 3)])
    tick = RecordJobRuns(source, store, HarvestingBoard(Board()), Metrics(CollectorRegistry()), h, nodes=dict)
    now = 80_000.0
    for k in range(2, 12):
        # the same app seen again without what its first sighting knew (peak 0, no work, no launch)
        again = JobRun("etl", f"app_{k - 1}", 100.0 * k, now - 30.0, 0)
        source.runs = [JobRun("etl", f"app_{k}", 100.0 * k, now - 10.0, k, container_seconds=5.0 * k,
                              launched_at=100.0 * k + 1), again]
        tick.tick(now)
        assert sorted(tick._window.values(), key=lambda r: (r.finished_at, r.app_id)) == store.job_runs(since=now - 86400.0)
        now += 5000.0
    assert all(r.app_id != "app_0" for r in sorted(tick._window.values(), key=lambda r: (r.finished_at, r.app_id))), "left the window"

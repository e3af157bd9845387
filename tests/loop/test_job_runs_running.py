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

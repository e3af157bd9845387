"""Finished apps become job runs (Algorithm 1 lines 3-4), read from the emulated RM over HTTP."""

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


def test_finished_apps_are_recorded_with_duration_and_peak_and_published() -> None:
    h = HarvestingSettings.model_validate({"job_length": {"min_runs": 2}})
    with EmuCluster() as c:
        store, state = SqliteHistoryStore(":memory:"), HarvestingBoard(Board())
        tick = RecordJobRuns(RMJobRuns(c.client), store, state, Metrics(CollectorRegistry()), h, nodes=dict)
        first = c.work.distributed_shell(3, Resources(1024, 1), duration_s=30.0, name="nightly-etl")
        c.advance(20)
        assert tick.tick(c.clock.now()).summary["new_runs"] == 0     # running: its peak is seen
        c.advance(40)
        second = c.work.distributed_shell(2, Resources(1024, 1), duration_s=100.0, name="nightly-etl")
        c.advance(150)
        summary = tick.tick(c.clock.now()).summary
        assert summary["new_runs"] == 2 and summary["runs_in_window"] == 2
        runs = {r.app_id: r for r in store.job_runs(since=0)}
        assert runs[first.app_id].job_name == "nightly-etl" and runs[first.app_id].peak_containers == 4
        assert runs[second.app_id].peak_containers == 0, "never polled while running: unknown"
        assert 30 <= runs[first.app_id].duration_s < 60 and runs[second.app_id].duration_s >= 100
        jobs = state.view().jobs
        assert jobs.last_run("nightly-etl").app_id == second.app_id and jobs.peak_containers("nightly-etl") == 4
        assert jobs.thresholds is not None and jobs.thresholds.runs == 2
        c.advance(10)
        tick.tick(c.clock.now())                                     # re-reads the overlap ...
        assert len(store.job_runs(since=0)) == 2, "... but a run is one row (keyed by app id)"


class ScriptedRuns:
    """A job-run source that returns the runs a test appended (finished since `since`)."""

    def __init__(self) -> None:
        from harvester.models.job_history import JobRun

        self.runs: list[JobRun] = []

    def poll(self, since: float) -> list:  # type: ignore[type-arg]
        return [r for r in self.runs if r.finished_at >= since]

    def running(self) -> list:  # type: ignore[type-arg]
        return []


def test_the_history_is_republished_only_when_a_new_run_arrives() -> None:
    from harvester.models.job_history import JobRun

    source, store, state = ScriptedRuns(), SqliteHistoryStore(":memory:"), HarvestingBoard(Board())
    tick = RecordJobRuns(source, store, state, Metrics(CollectorRegistry()), HarvestingSettings(), nodes=dict)
    assert tick.tick(1000.0).summary["republished"] is True, "the first tick publishes (maybe an empty history)"
    source.runs.append(JobRun("etl", "app_1", 900.0, 1030.0))
    assert tick.tick(1060.0).summary["republished"] is True and state.view().jobs.last_run("etl").app_id == "app_1"
    before = state.view().jobs
    summary = tick.tick(1120.0).summary  # app_1 again, in the overlap: nothing new
    assert summary == {"new_runs": 1, "republished": False} and state.view().jobs is before


def test_the_republished_history_is_what_the_store_holds_for_the_window(monkeypatch) -> None:
    """The loop keeps the window in memory (issue 29) yet republishes exactly what
    `store.job_runs(since=now - window)` returns: runs merged by the store when seen again, runs
    that fell out of the window, runs from before the sidecar started."""
    import harvester.loop.job_runs as loop_mod
    from harvester.models.job_history import JobRun

    published: list[list[JobRun]] = []
    real = loop_mod.job_history
    monkeypatch.setattr(loop_mod, "job_history", lambda runs, *a: (published.append(list(runs)), real(runs, *a))[1])
    day = 86400.0
    settings = HarvestingSettings.model_validate({"job_length": {"history_days": 1}})
    source, store, board = ScriptedRuns(), SqliteHistoryStore(":memory:"), HarvestingBoard(Board())
    store.append_job_runs([JobRun("old", "app_0", 100.0, 500.0, 3, 90.0)])  # before the sidecar started
    tick = RecordJobRuns(source, store, board, Metrics(CollectorRegistry()), settings, nodes=dict)
    now, k = 1000.0, 0
    for step in range(40):
        now += 3600.0 * (0.25 + (step % 3))
        if step % 2 == 0:
            k += 1
            source.runs.append(JobRun(f"job{k % 3}", f"app_{k}", now - 300.0, now - 30.0 - step, 4 + k, 10.0 * k))
        if step % 5 == 0 and source.runs:  # the RM reports a run again, without its peak: the store keeps the first
            r = source.runs[-1]
            source.runs[-1] = JobRun(r.job_name, r.app_id, r.started_at, r.finished_at)
        before = len(published)
        tick.tick(now)
        if len(published) > before:
            assert published[-1] == store.job_runs(since=now - day), f"step {step}"
    assert len(published) > 10 and any(r.app_id == "app_0" for r in published[0])

"""Tick that records finished applications as job runs and republishes the job history.

Algorithm 1 (OSDI'16 §4.1) types a job by its last run and sizes it by its past peak; the
SelectClasses advice therefore needs job runs. Each tick asks the source for the apps that
finished since the last tick (a minute of overlap: a run seen twice is one row, job runs are
keyed by app id) — on the first tick since `job_length.history_days` ago — stores them, and
republishes the fitted job history (thresholds by `job_length.mode`, loop/refit.job_history)
when a run it had not seen arrived (or on the first tick); the refit loop republishes it with
every class model too. The window's runs are read from the store once (the first tick) and then
kept by merging each tick's runs the way the store does (`merged`: history/harvesting_sqlite.py
keeps the larger peak and the known container-seconds and launch) and dropping the runs that left
the window — the same runs as re-reading the store each tick (retention never prunes inside the
window: control.py), without reading the whole window at every poll.
"""

from __future__ import annotations

from typing import Callable, Protocol

from harvester.board.harvesting import HarvestingBoard
from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.strategy import NodeStrategy
from harvester.history.store import HistoryStore
from harvester.loop.refit import DAY_S, job_history
from harvester.loop.runner import TickResult
from harvester.models.job_history import JobRun, RunningApp
from harvester.observability.metrics import Metrics

OVERLAP_S = 60.0


class JobRunSource(Protocol):
    def poll(self, since: float) -> list[JobRun]:
        """Runs that finished since `since` (epoch s)."""
        ...

    def running(self) -> list[RunningApp]:
        """The apps alive at the last poll (published for `harvester explain job`)."""
        ...


class RecordJobRuns:
    def __init__(self, source: JobRunSource, store: HistoryStore, board: HarvestingBoard, metrics: Metrics,
                 harvesting: HarvestingSettings, nodes: Callable[[], dict[str, NodeStrategy]]) -> None:
        self._source = source
        self._store = store
        self._board = board
        self._metrics = metrics
        self._h = harvesting
        self._nodes = nodes
        self._since: float | None = None
        self._seen: frozenset[str] = frozenset()  # app ids of the last poll (the overlap returns them again)
        self._window: dict[str, JobRun] = {}  # the store's runs of the window, by app id (_update_window)

    def tick(self, now: float) -> TickResult:
        window = self._h.job_length.history_days * DAY_S
        since = now - window if self._since is None else self._since - OVERLAP_S
        runs = self._source.poll(since)
        running = tuple(self._source.running())
        self._board.publish_running(running)
        written = self._store.append_job_runs(runs)
        self._store.replace_running_apps(running, now)  # the apps not finished, for whatif (issue 28)
        self._metrics.record_rows_written("job_runs", written)
        fresh = self._since is None or any(r.app_id not in self._seen for r in runs)
        self._update_window(now - window, runs)  # on every tick: a run written again may have changed
        self._since, self._seen = now, frozenset(r.app_id for r in runs)
        if not fresh:
            return TickResult({"new_runs": written, "republished": False})
        history = sorted(self._window.values(), key=lambda r: (r.finished_at, r.app_id))  # the store's order
        self._board.publish_jobs(job_history(history, self._h, self._board.view().model, self._nodes()))
        return TickResult({"new_runs": written, "runs_in_window": len(history), "republished": True})

    def _update_window(self, since: float, runs: list[JobRun]) -> None:
        """Keep `_window` = the store's runs that finished since `since`, as `store.job_runs` has them.
        Read whole once, then only from the earliest run just written (the store merges a run seen
        twice, so the stored row is read back); this loop is the only writer of job runs, and their
        retention keeps at least the window. Reading 30 days of runs every minute was a quarter of
        a 1,000-node replay's time (issue 29)."""
        if self._since is None:
            self._window = {r.app_id: r for r in self._store.job_runs(since=since)}
        elif runs:
            for r in runs:
                self._window.pop(r.app_id, None)
            for r in self._store.job_runs(since=max(since, min(r.finished_at for r in runs))):
                self._window[r.app_id] = r
        for app_id in [a for a, r in self._window.items() if r.finished_at < since]:
            del self._window[app_id]

"""Tick that records finished applications as job runs and republishes the job history.

Algorithm 1 (OSDI'16 §4.1) types a job by its last run and sizes it by its past peak; the
SelectClasses advice therefore needs job runs. Each tick asks the source for the apps that
finished since the last tick (a minute of overlap: a run seen twice is one row, job runs are
keyed by app id) — on the first tick since `job_length.history_days` ago — stores them, and
republishes the fitted job history (thresholds by `job_length.mode`, loop/refit.job_history)
when a run it had not seen arrived (or on the first tick); the refit loop republishes it with
every class model too.
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

    def tick(self, now: float) -> TickResult:
        window = self._h.job_length.history_days * DAY_S
        since = now - window if self._since is None else self._since - OVERLAP_S
        runs = self._source.poll(since)
        self._board.publish_running(tuple(self._source.running()))
        written = self._store.append_job_runs(runs)
        so_far = getattr(self._source, "running_runs", None)  # sources that know the alive apps' skylines
        if so_far is not None:
            self._store.replace_running_apps(so_far())  # the apps not finished, for whatif (issue 28)
        self._metrics.record_rows_written("job_runs", written)
        fresh = self._since is None or any(r.app_id not in self._seen for r in runs)
        self._since, self._seen = now, frozenset(r.app_id for r in runs)
        if not fresh:
            return TickResult({"new_runs": written, "republished": False})
        history = self._store.job_runs(since=now - window)
        self._board.publish_jobs(job_history(history, self._h, self._board.view().model, self._nodes()))
        return TickResult({"new_runs": written, "runs_in_window": len(history), "republished": True})

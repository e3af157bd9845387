"""Finished YARN applications as job runs, for Algorithm 1 lines 3-4 (OSDI'16 §4.1).

Line 3 types a job by "the duration of its last execution"; line 4 needs its "maximum amount
of concurrent resources". From the RM REST API:
- a job's recurring identity is the application NAME (`/apps` `name`; recurring pipelines
  submit the same name each run);
- duration = finishedTime − startedTime of an app that reached FINISHED, FAILED or KILLED;
- peak containers = the largest `runningContainers` seen while it was RUNNING, over the polls
  of this source (an app that started and ended between two polls has peak 0: unknown, and
  Algorithm 1 then needs the caller's demand).
One poll = `GET /apps?states=RUNNING` + `GET /apps?states=FINISHED,FAILED,KILLED&finishedTimeBegin=…`.
Any RM failure fails the poll with `TelemetryError` (nothing half-read is returned).
"""

from __future__ import annotations

import threading

from rm_client import AppQuery, RMClient, RMError

from harvester.models.job_history import JobRun
from harvester.telemetry.source import TelemetryError

FINAL_STATES = ("FINISHED", "FAILED", "KILLED")


class RMJobRuns:
    """`poll(since)`: job runs of apps finished since `since` (epoch s); see the module doc."""

    def __init__(self, client: RMClient) -> None:
        self._client = client
        self._peaks: dict[str, int] = {}
        self._lock = threading.Lock()

    def poll(self, since: float) -> list[JobRun]:
        try:
            running = self._client.list_apps(AppQuery(states=("RUNNING",)))
            done = self._client.list_apps(AppQuery(states=FINAL_STATES, finished_time_begin_ms=int(since * 1000)))
        except RMError as exc:
            raise TelemetryError(f"RM apps poll failed: {exc}") from exc
        runs: list[JobRun] = []
        with self._lock:
            for app in running:
                self._peaks[app.id] = max(self._peaks.get(app.id, 0), max(0, app.running_containers))
            for app in done:
                if app.finished_time_ms <= 0 or app.started_time_ms <= 0:
                    continue
                runs.append(JobRun(app.name or app.id, app.id, app.started_time_ms / 1000.0,
                                   app.finished_time_ms / 1000.0, self._peaks.pop(app.id, 0)))
        return runs

"""Finished YARN applications as job runs, for Algorithm 1 lines 3-4 (OSDI'16 §4.1) and for
Morpheus's job history (paper 002 §3, §5: "time-series of resource utilization ... typically
one minute", polled from the RM while the job runs).

From the RM REST API:
- a job's recurring identity is the application NAME through the recurring-name rule
  (`normalize`, models/job_names.py: dates and ids stripped);
- duration = finishedTime − startedTime of an app that reached FINISHED, FAILED or KILLED
  (startedTime is the submit time in 3.3.6; launchTime, the AM's start, is kept too);
- peak containers = the largest `runningContainers` seen while it was alive, over the polls
  of this source (an app that started and ended between two polls has peak 0: unknown, and
  Algorithm 1 then needs the caller's demand);
- its skyline (`RunUsage`): per `step_s` from its launch, the largest `allocatedMB` /
  `allocatedVCores` seen at a poll in that step; a step between two polls holds what the
  earlier poll saw (the allocation in between is not observable). The time of a poll is the
  RM's own: startedTime + elapsedTime of the answer, so no local clock is involved.
One poll = `GET /apps?states=RUNNING,ACCEPTED` + `GET /apps?states=FINISHED,FAILED,KILLED&finishedTimeBegin=…`.
Any RM failure fails the poll with `TelemetryError` (nothing half-read is returned).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from rm_client import App, AppQuery, RMClient, RMError

from harvester.models.job_history import JobRun, RunningApp, RunUsage
from harvester.telemetry.source import TelemetryError

FINAL_STATES = ("FINISHED", "FAILED", "KILLED")
ALIVE_STATES = ("RUNNING", "ACCEPTED")
FORGET_S = 6 * 3600.0  # an app neither alive nor finished for this long (RM time) is forgotten


@dataclass
class _Usage:
    """A run's skyline while it is being polled."""

    origin: float
    memory_mb: list[int] = field(default_factory=list)
    vcores: list[int] = field(default_factory=list)
    first: float | None = None
    last: float | None = None

    def add(self, t: float, memory_mb: int, vcores: int, step_s: float) -> None:
        k = int((t - self.origin) // step_s)
        if k < 0 or (self.last is not None and t <= self.last):
            return
        held = (self.memory_mb[-1], self.vcores[-1]) if self.memory_mb else (0, 0)
        while len(self.memory_mb) <= k:  # steps since the last poll held what it saw
            self.memory_mb.append(held[0])
            self.vcores.append(held[1])
        if self.last is not None and int((self.last - self.origin) // step_s) < k:
            self.memory_mb[k], self.vcores[k] = memory_mb, vcores  # first poll of this step
        else:
            self.memory_mb[k] = max(self.memory_mb[k], memory_mb)
            self.vcores[k] = max(self.vcores[k], vcores)
        self.first = t if self.first is None else self.first
        self.last = t

    def freeze(self, step_s: float) -> RunUsage | None:
        if self.first is None or self.last is None:
            return None
        return RunUsage(step_s, self.origin, tuple(self.memory_mb), tuple(self.vcores),
                        self.first - self.origin, self.last - self.origin)


class RMJobRuns:
    """`poll(since)`: job runs of apps finished since `since` (epoch s); see the module doc."""

    def __init__(self, client: RMClient, normalize: Callable[[str], str] = lambda name: name, *,
                 step_s: float = 60.0) -> None:
        if step_s <= 0:
            raise ValueError("step_s must be > 0")
        self._client = client
        self._normalize = normalize
        self._step_s = step_s
        self._peaks: dict[str, int] = {}
        self._usage: dict[str, _Usage] = {}
        self._running: list[RunningApp] = []
        self._lock = threading.Lock()

    def running(self) -> list[RunningApp]:
        """The apps alive at the last poll (RUNNING, ACCEPTED)."""
        with self._lock:
            return list(self._running)

    def poll(self, since: float) -> list[JobRun]:
        try:
            alive = self._client.list_apps(AppQuery(states=ALIVE_STATES))
            done = self._client.list_apps(AppQuery(states=FINAL_STATES, finished_time_begin_ms=int(since * 1000)))
        except RMError as exc:
            raise TelemetryError(f"RM apps poll failed: {exc}") from exc
        runs: list[JobRun] = []
        with self._lock:
            for app in alive:
                self._observe(app)
            self._running = [RunningApp(self._normalize(a.name or a.id), a.id, a.name, a.queue, a.state,
                                        a.started_time_ms / 1000.0, max(0, a.running_containers), max(0, a.allocated_mb),
                                        max(0, a.allocated_vcores), a.num_non_am_container_preempted) for a in alive]
            for app in done:
                if app.finished_time_ms <= 0 or app.started_time_ms <= 0:
                    continue
                usage = self._usage.pop(app.id, None)
                launched = app.launch_time_ms / 1000.0 if app.launch_time_ms and app.launch_time_ms > 0 else None
                runs.append(JobRun(self._normalize(app.name or app.id), app.id, app.started_time_ms / 1000.0,
                                   app.finished_time_ms / 1000.0, self._peaks.pop(app.id, 0),
                                   launched_at=launched, final_status=app.final_status, queue=app.queue,
                                   usage=None if usage is None else usage.freeze(self._step_s)))
            rm_now = max(((a.started_time_ms + a.elapsed_time_ms) / 1000.0 for a in alive), default=None)
            if rm_now is not None:  # apps the RM forgot (its restart) are dropped after FORGET_S
                for gone in [k for k, u in self._usage.items() if u.last is not None and u.last < rm_now - FORGET_S]:
                    self._usage.pop(gone)
                    self._peaks.pop(gone, None)
        return runs

    def _observe(self, app: App) -> None:
        self._peaks[app.id] = max(self._peaks.get(app.id, 0), max(0, app.running_containers))
        if not app.launch_time_ms or app.launch_time_ms <= 0:
            return  # not launched: the skyline starts at the launch
        usage = self._usage.setdefault(app.id, _Usage(app.launch_time_ms / 1000.0))
        at = (app.started_time_ms + app.elapsed_time_ms) / 1000.0
        usage.add(at, max(0, app.allocated_mb), max(0, app.allocated_vcores), self._step_s)

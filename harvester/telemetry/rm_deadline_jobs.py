"""What Jockey's control loop reads of its deadline jobs from the RM (the live `DeadlineJobSource`,
loop/jockey.py; models/stage_counts.py turns it into tasks per stage).

One poll: `GET /apps?states=RUNNING,ACCEPTED`; an app whose name the recurring-name rule maps to
a deadline job is that job's run (the newest submission when several are alive; the REST
`queue` of an app in a reservation stays the plan queue, scenarios/recurring-reservation, so
apps are matched by name, as Morpheus does). For a RUNNING app (its AM registered):
- running containers per priority: `GET /apps/{id}/appattempts` (the current attempt: the
  highest number; its `containerId` is the AM's) and `GET /apps/{id}/appattempts/{attempt}/containers`
  (captures apps-id-appattempts-id-containers-16-running: every live container with the
  `priority` it was asked at), the AM's container left out, COMPLETE ones too;
- pending asks per priority: the app's `resourceRequests` entries for any host (`*`), whose
  `numContainers` is what the AM still asks for at that priority (per-host and per-rack entries
  repeat the same containers and are not counted).
An ACCEPTED app has only its AM's ask: no worker is running or pending yet. Times are the RM's
(startedTime = the submission, in ms). Any RM failure raises `TelemetryError`; an app that ends
between the list and its containers call is skipped (it is no longer running).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Collection, Mapping

from rm_client import App, AppQuery, RMClient, RMError, RMNotFoundError

from harvester.telemetry.source import TelemetryError


@dataclass(frozen=True)
class RunningApp:
    """A deadline job's running app as the RM shows it (module docstring)."""

    job: str
    app_id: str
    state: str
    started_at: float                                   # submission, epoch s (RM's startedTime)
    running: Mapping[int, int] = field(default_factory=dict)   # priority → live worker containers
    pending: Mapping[int, int] = field(default_factory=dict)   # priority → outstanding asks


def pending_by_priority(app: App) -> dict[int, int]:
    out: Counter[int] = Counter()
    for r in app.resource_requests:
        if r.resource_name == "*" and r.num_containers > 0:
            out[r.priority] += r.num_containers
    return dict(out)


class RMDeadlineJobs:
    """`running(jobs)`: each named job's running app (module docstring)."""

    def __init__(self, client: RMClient, normalize: Callable[[str], str] = lambda name: name) -> None:
        self._client = client
        self._normalize = normalize

    def running(self, jobs: Collection[str]) -> dict[str, RunningApp]:
        wanted = set(jobs)
        if not wanted:
            return {}
        try:
            apps = self._client.list_apps(AppQuery(states=("RUNNING", "ACCEPTED")))
        except RMError as exc:
            raise TelemetryError(f"RM apps poll failed: {exc}") from exc
        newest: dict[str, App] = {}
        for app in apps:
            job = self._normalize(app.name or app.id)
            if job in wanted and (job not in newest or app.started_time_ms > newest[job].started_time_ms):
                newest[job] = app
        out: dict[str, RunningApp] = {}
        for job, app in newest.items():
            got = self._observe(job, app)
            if got is not None:
                out[job] = got
        return out

    def _observe(self, job: str, app: App) -> RunningApp | None:
        base = RunningApp(job, app.id, app.state, app.started_time_ms / 1000.0)
        if app.state != "RUNNING":
            return base
        try:
            attempts = self._client.list_app_attempts(app.id)
            if not attempts:
                return base
            current = max(attempts, key=lambda a: a.attempt_number)
            containers = self._client.list_containers(app.id, current.attempt_id)
        except RMNotFoundError:
            return None  # it ended meanwhile
        except RMError as exc:
            raise TelemetryError(f"containers of {app.id} failed: {exc}") from exc
        running = Counter(c.priority for c in containers
                          if c.container_id != current.container_id and c.state != "COMPLETE")
        return RunningApp(job, app.id, app.state, app.started_time_ms / 1000.0, dict(running), pending_by_priority(app))

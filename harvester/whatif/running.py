"""The apps still running at the end of the history, as replay jobs (issue 28).

The store keeps the apps alive at the jobs loop's last poll as it saw them
(`HistoryStore.running_apps`: submission, running containers and allocation). A long-lived
service never finishes, so it has no finished run; without it the replayed cluster would have the
room the service held (docs/whatif.md, "validated against what happened"). Each is replayed as one
job submitted at its recorded submission (the replay's start if earlier) holding the containers of
its last poll — that many containers of its mean allocation per container (at least one of
1 vCore / 1 GB when none ran) — past the replay and its drain: the app had not finished when the
history ends, and when it will is unknown, so it holds its capacity for the whole replay and never
adds completed work.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from harvester.models.job_history import RunningApp
from harvester.sim.workload import JobSpec, StageSpec

DEFAULT_CONTAINER_MB = 1024


def still_running(running: Sequence[tuple[RunningApp, float]], finished_ids: set[str], *, replay_start: float,
                  end: float) -> list[RunningApp]:
    """The running apps that belong to the replay: seen alive in it, submitted before its end,
    and not also stored finished."""
    return [a for a, seen in running
            if a.app_id not in finished_ids and a.started_at < end and seen >= replay_start]


def running_job(app: RunningApp, *, origin: float, until_s: float) -> JobSpec:
    """One still-running app as a job whose containers last until `until_s` (replay time, past
    the drain: module docstring)."""
    submit = max(0.0, app.started_at - origin)
    held = max(1, app.containers)
    per_vc = max(1, int(round(app.allocated_vcores / held))) if app.containers > 0 else 1
    per_mem = max(1, int(round(app.allocated_mb / held))) if app.containers > 0 and app.allocated_mb > 0 \
        else DEFAULT_CONTAINER_MB
    stage = StageSpec("running", np.full(held, max(1.0, until_s - submit)), per_vc, per_mem)
    return JobSpec(app.app_id, submit, (stage,), app.job_name, None, "recorded",
                   {"final_status": "RUNNING", "running_at_end": True})

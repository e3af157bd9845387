"""The apps still running at the end of the history, as replay jobs (issue 28).

The store keeps the apps alive at the jobs loop's last poll (`HistoryStore.running_apps`: their
submission, peak and skyline so far). A long-lived service never finishes, so it has no finished
run; without it the replayed cluster would have the room the service held (docs/whatif.md,
"validated against what happened"). Each is replayed as one job submitted at its recorded
submission (the replay's start if earlier) whose containers are the ones it held at its last
poll (the skyline's last step; without a skyline, its peak of 1-vCore containers) and last past
the replay and its drain: the app had not finished when the history ends, and when it will is
unknown, so it holds its capacity for the whole replay and never adds completed work.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from harvester.models.job_history import JobRun
from harvester.sim.workload import JobSpec, StageSpec

DEFAULT_CONTAINER_MB = 1024


def still_running(running: Sequence[JobRun], finished_ids: set[str], *, replay_start: float,
                  end: float) -> list[JobRun]:
    """The running apps that belong to the replay: submitted before its end, seen alive in it,
    and not also stored finished."""
    return [r for r in running
            if r.app_id not in finished_ids and r.started_at < end and r.finished_at >= replay_start]


def running_job(run: JobRun, *, origin: float, until_s: float) -> JobSpec:
    """One still-running app as a job whose containers last until `until_s` (replay time, past
    the drain: module docstring)."""
    submit = max(0.0, run.started_at - origin)
    u = run.usage
    peak = max(1, run.peak_containers)
    if u is not None and u.vcores and max(u.vcores) > 0:
        per_vc = max(1, int(round(max(u.vcores) / peak)))
        per_mem = max(1, int(round(max(u.memory_mb) / peak))) if u.memory_mb and max(u.memory_mb) > 0 \
            else DEFAULT_CONTAINER_MB
        held = max(1, int(np.ceil(u.vcores[-1] / per_vc)))
    else:
        per_vc, per_mem, held = 1, DEFAULT_CONTAINER_MB, peak
    stage = StageSpec("running", np.full(held, max(1.0, until_s - submit)), per_vc, per_mem)
    return JobSpec(run.app_id, submit, (stage,), run.job_name, None, "recorded",
                   {"final_status": "RUNNING", "origin": run.origin, "running_at_end": True})

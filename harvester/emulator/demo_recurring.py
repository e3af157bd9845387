"""The embedded demo's recurring batch jobs (Morpheus, paper 002), live and in SYNTHESIZED history.

Three recurring pipelines run on the demo cluster, each an MR-like app submitted every period
at the same phase (± a few seconds) with a stable name plus the run's date
(`demo-hourly-sales-20261124T0710`: the default recurring-name rule strips the date):

| job | period | submitted | maps × duration | input written | output read (the deadline) |
|---|---|---|---|---|---|
| demo-hourly-sales | 10 min | +60 s | 4 × 240 s | +30 s | +480 s |
| demo-clickstream-rollup | 15 min | +120 s | 6 × 300 s | +90 s | +720 s |
| demo-fraud-scores | 20 min | +300 s | 3 × 420 s | +240 s | +1080 s |

`schedule_recurring` submits them live on the emulator (they run in the plan queue's default
part; a user's scheduler would submit them with the reservation id Harvester publishes —
`harvester slo show JOB` — and the e2e tests do). `recurring_history` evaluates the SAME
schedule over the `periods` before a time as SYNTHESIZED DEMO HISTORY: job runs with their
polled skylines (origin `synthesized-demo`) and the provenance a NameNode audit log would show
(the upstream ingest writing the input, the run reading it and committing its output, the
downstream reader), so the SLO inference (§4) and the skyline LP (§5) have something to fit
the moment `make run` starts. The composition root writes it into the store only for the
embedded emulator, never for `cluster.source: rm`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Sequence

import numpy as np

from harvester.domain import Resources
from harvester.emulator.records import MR_TASK_STARTUP_S, AmKind, AppSpec
from harvester.emulator.workloads import Workload
from harvester.models.job_history import JobRun, RunUsage
from harvester.models.provenance import Access, FileAccess

MAP = Resources(1024, 1)
AM = Resources(1024, 1)
AM_START_S = 3.0                  # submit → AM launch (MR AM start-up, records.py)
HISTORY_APP_TS = 1_700_000_000_000  # "cluster timestamp" of the synthesized app ids (no real RM's)
STEP_S = 60.0


@dataclass(frozen=True)
class RecurringJob:
    name: str
    period_s: float
    submit_s: float
    maps: int
    map_s: float
    input_s: float
    read_s: float


DEMO_JOBS = (
    RecurringJob("demo-hourly-sales", 600.0, 60.0, 4, 240.0, 30.0, 480.0),
    RecurringJob("demo-clickstream-rollup", 900.0, 120.0, 6, 300.0, 90.0, 720.0),
    RecurringJob("demo-fraud-scores", 1200.0, 300.0, 3, 420.0, 240.0, 1080.0),
)


def run_name(job: RecurringJob, t: float) -> str:
    return f"{job.name}-{datetime.fromtimestamp(t, timezone.utc):%Y%m%dT%H%M}"


def _spec(job: RecurringJob, t: float) -> AppSpec:
    return AppSpec(name=run_name(job, t), app_type="MAPREDUCE", kind=AmKind.MAPREDUCE, am=AM, workers=job.maps,
                   worker=MAP, worker_duration_s=job.map_s, worker_cpu_cores=0.2, worker_mem_used_mb=400.0,
                   worker_startup_s=MR_TASK_STARTUP_S)


def schedule_recurring(w: Workload, start: float, *, seed: int = 0) -> None:
    """Submit every job once per period from `start` on (module docstring); seeded jitter."""
    rng = np.random.default_rng(seed + 3)
    for job in DEMO_JOBS:
        first = math.floor(start / job.period_s) * job.period_s
        at = first + job.submit_s
        while at < start:
            at += job.period_s

        def submit(t: float, job: RecurringJob = job) -> None:
            w.emu.apps_mgr.submit(_spec(job, t))
            nxt = (math.floor(t / job.period_s) + 1) * job.period_s + job.submit_s + float(rng.normal(0.0, 3.0))
            w.emu.events.at(nxt, lambda t2: submit(t2, job))

        w.at(at, submit)


def recurring_history(end: float, *, periods: int = 12, seed: int = 0, jobs: Sequence[RecurringJob] = DEMO_JOBS,
                      origin: str = "synthesized-demo") -> tuple[list[JobRun], list[FileAccess]]:
    """SYNTHESIZED DEMO HISTORY: the runs and provenance of the `periods` whole periods of every
    job (the demo's by default) that ended before `end` (module docstring)."""
    rng = np.random.default_rng(seed + 13)
    runs: list[JobRun] = []
    events: list[FileAccess] = []
    seq = 0
    for job in jobs:
        last = math.floor(end / job.period_s) * job.period_s - job.period_s
        for k in range(periods, 0, -1):
            ps = last - (k - 1) * job.period_s
            submit = ps + job.submit_s + float(rng.normal(0.0, 3.0))
            launch = submit + AM_START_S
            work = job.map_s * float(rng.uniform(0.95, 1.1))
            finish = launch + MR_TASK_STARTUP_S + work + 2.0
            read = ps + job.read_s + float(rng.normal(0.0, 4.0))
            if read >= end:
                continue
            seq += 1
            app = f"application_{HISTORY_APP_TS}_{seq:04d}"
            steps = int(math.ceil((finish - launch) / STEP_S))
            mem = tuple((job.maps + 1) * MAP.memory_mb for _ in range(steps))
            vc = tuple((job.maps + 1) * MAP.vcores for _ in range(steps))
            usage = RunUsage(STEP_S, launch, mem, vc, 0.0, finish - launch)
            runs.append(JobRun(job.name, app, submit, finish, job.maps + 1, launched_at=launch,
                               final_status="SUCCEEDED", queue="root.default", origin=origin, usage=usage))
            stamp = f"{datetime.fromtimestamp(ps, timezone.utc):%Y%m%dT%H%M}"
            src, out = f"/demo/{job.name}/in/{stamp}", f"/demo/{job.name}/out/{stamp}"
            attempt = f"mr_attempt_{HISTORY_APP_TS}_{seq:04d}_m_000000_0"
            events += [
                FileAccess(ps + job.input_s + float(rng.uniform(-3.0, 0.0)), Access.WRITE, src, None, "CLI", "create"),
                FileAccess(launch + 5.0, Access.READ, src, app, attempt, "open"),
                FileAccess(finish - 1.0, Access.WRITE, f"{out}/part-00000", app, attempt, "rename"),
                FileAccess(read, Access.READ, f"{out}/part-00000", None, "CLI", "open"),
            ]
    return runs, sorted(events, key=lambda e: e.time)

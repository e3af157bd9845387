"""The embedded demo's deadline job (Jockey, paper 001), live and in SYNTHESIZED history.

`demo-nightly-sort` runs every 15 minutes. Its user's workflow reserves what the user guesses
it needs — 2 containers of 1024 MB / 1 vcore for 10 minutes from +30 s into the period (users
size such requests badly, Jockey §3.2) — as the reservation `demo-nightly-sort-window`
(R_ORDER_NO_GAP, a gang of both), and at +35 s submits the job into it: a MapReduce job of 8
maps × 90 s. Its deadline is 300 s after the submission: 2 containers (4 waves) would miss it,
so Jockey (`jockey.jobs.demo-nightly-sort`, set by the composition root for the embedded
default only) raises the reservation at once and releases containers as maps finish.

`prior_runs` is the job's SYNTHESIZED DEMO HISTORY in the prior-runs JSON (docs/jockey.md): past
runs at the user's 2 containers, maps of 90 s ± 5 % after the MR task start-up
(records.MR_TASK_STARTUP_S). The composition root writes it to a file for the embedded
emulator only, never for `cluster.source: rm`.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rm_client import Interpreter, ReservationDefinition, ReservationRequest, Resource
from rm_client.wire.reservations import encode_definition_request

from harvester.config_jockey import JockeyJob, JockeySettings
from harvester.domain import Resources
from harvester.emulator.records import MR_TASK_STARTUP_S, AmKind, AppSpec
from harvester.emulator.workloads import Workload

JOB = "demo-nightly-sort"
RESERVATION = f"{JOB}-window"
PERIOD_S = 900.0
WINDOW_AT_S, WINDOW_S, RESERVED = 30.0, 600.0, 2
SUBMIT_AT_S = 35.0
MAPS, MAP_S = 8, 90.0
DEADLINE_S = 300.0
QUEUE = "root.default"


def prior_runs(job: str = JOB, *, runs: int = 6, maps: int = MAPS, map_s: float = MAP_S,
               width: int = RESERVED) -> dict[str, Any]:
    """SYNTHESIZED DEMO HISTORY: `runs` past runs at `width` containers (waves of maps), as the
    prior-runs JSON document (module docstring)."""
    out = []
    for r in range(runs):
        attempts = []
        for i in range(maps):
            work = map_s * (0.95 + 0.1 * ((7 * i + 3 * r) % 11) / 10.0)
            start = (i // width) * (map_s * 1.1 + MR_TASK_STARTUP_S)
            attempts.append({"stage": "map", "task": i, "attempt": 0, "ready_s": 0.0, "start_s": start,
                             "end_s": start + MR_TASK_STARTUP_S + work, "init_s": MR_TASK_STARTUP_S})
        out.append({"run_id": f"synthesized-{r}", "stages": [{"name": "map", "tasks": maps, "parents": []}],
                    "attempts": attempts})
    return {"job": job, "runs": out}


def schedule_deadline_job(w: Workload, start: float) -> None:
    """Every period from `start` on: the reservation (20 s before its window), then the job."""
    emu = w.emu
    first = math.floor(start / PERIOD_S) * PERIOD_S
    if first + WINDOW_AT_S - 20.0 < start:
        first += PERIOD_S

    def reserve(t: float) -> None:
        ps = math.floor(t / PERIOD_S) * PERIOD_S
        arrival = int((ps + WINDOW_AT_S) * 1000)
        rid = emu.plan.new_reservation_id()
        definition = ReservationDefinition(
            arrival_ms=arrival, deadline_ms=arrival + int(WINDOW_S * 1000), name=RESERVATION,
            interpreter=Interpreter(3), recurrence_period_ms=0,
            requests=(ReservationRequest(Resource(1024, 1), RESERVED, RESERVED, int(WINDOW_S * 1000)),))
        emu.plan.submit({"queue": QUEUE, "reservation-id": rid,
                         "reservation-definition": encode_definition_request(definition)}, "root")
        emu.events.at(ps + SUBMIT_AT_S, lambda t2: submit(t2, rid))
        emu.events.at(ps + PERIOD_S + WINDOW_AT_S - 20.0, reserve)

    def submit(t: float, rid: str) -> None:
        emu.apps_mgr.submit(AppSpec(
            name=f"{JOB}-{datetime.fromtimestamp(t, timezone.utc):%Y%m%dT%H%M}", app_type="MAPREDUCE",
            kind=AmKind.MAPREDUCE, am=Resources(1024, 1), workers=MAPS, worker=Resources(1024, 1),
            worker_duration_s=MAP_S, worker_cpu_cores=0.2, worker_mem_used_mb=400.0,
            worker_startup_s=MR_TASK_STARTUP_S, reservation_id=rid))

    w.at(first + WINDOW_AT_S - 20.0, reserve)


def with_demo_job(j: JockeySettings, directory: Path) -> JockeySettings:
    """`j` with the demo job (when it names none): its SYNTHESIZED prior runs written as a file
    in `directory` (the composition root's: app.demo_files_dir)."""
    if j.jobs:
        return j
    runs = directory / f"{JOB}-runs.json"
    runs.write_text(json.dumps(prior_runs()), encoding="utf-8")
    job = JockeyJob(runs=runs, deadline_s=DEADLINE_S, reservation_name=RESERVATION)
    return j.model_copy(update={"jobs": {JOB: job}})

"""A running Harvester with Jockey on, against the emulated 3.3.6 RM over real HTTP (a SimClock the
test steps): the rig of the Jockey e2e and advice tests.

The deadline job is a MapReduce sleep job (`sleep -m MAPS -r 0 -mt MAP_S·1000`, the recorded
client) named `nightly-sort-<date>`: its recurring name is `nightly-sort`. Its prior runs are
written as the documented prior-runs JSON by the embedded demo's generator
(emulator/demo_deadline.prior_runs): MAPS maps of MAP_S seconds of work after the MR task's
start-up (emulator/records.MR_TASK_STARTUP_S, read off the recordings), with ±5 % spread.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.domain import Resources
from harvester.emulator.demo_deadline import prior_runs
from harvester.emulator.demo_recurring import RecurringJob, recurring_history
from harvester.emulator.records import MR_TASK_STARTUP_S, AmKind, App, AppSpec
from rm_client import Interpreter, ReservationDefinition, ReservationRequest, Resource

from emu_cluster import EmuCluster
from morpheus_rig import ADMIN_TOKEN, Rig, emulator_settings

JOB = "nightly-sort"
MAPS = 12
MAP_S = 60.0


def write_prior_runs(path: Path, runs: int = 6, maps: int = MAPS, map_s: float = MAP_S, width: int = 4,
                     job: str = JOB) -> Path:
    """`runs` past runs at `width` containers (waves of maps), as the prior-runs JSON (the demo's generator)."""
    path.write_text(json.dumps(prior_runs(job, runs=runs, maps=maps, map_s=map_s, width=width)), encoding="utf-8")
    return path


class JockeyRig(Rig):
    """Morpheus's rig (its `step`, `until`, `close`) with Jockey on and the deadline job's history."""

    def __init__(self, tmp: Path, *, deadline_s: float = 150.0, morpheus: dict[str, Any] | None = None,
                 jockey: dict[str, Any] | None = None, reservation_name: str | None = "nightly-sort-window",
                 name: str = JOB, maps: int = MAPS, map_s: float = MAP_S,
                 history: RecurringJob | None = None) -> None:  # not Rig's: that one builds a Morpheus-only Harvester
        self.cluster = EmuCluster(start=1_795_430_000.0 + 20.0)
        self.name, self.maps, self.map_s = name, maps, map_s
        runs = write_prior_runs(tmp / f"{name}-runs.json", maps=maps, map_s=map_s, job=name)
        job: dict[str, Any] = {"runs": str(runs), "table": str(tmp / f"{name}.npz"), "deadline_s": deadline_s}
        if reservation_name:
            job["reservation_name"] = reservation_name
        self.token_file = tmp / "admin.token"  # deadline changes are admin writes (docs/security.md)
        self.token_file.write_text(ADMIN_TOKEN + "\n")
        self.token_file.chmod(0o600)  # a token file open to others is refused
        server = {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2,
                  "auth": {"token_file": str(self.token_file)}}
        settings = emulator_settings(self.cluster.url, server=server, morpheus=morpheus or {"enabled": False}, jockey={
            "enabled": True, "control_period_s": 5, "runs_per_level": 50, "jobs": {name: job}, **(jockey or {})})
        self.app = Harvester(settings, clock=self.cluster.clock, registry=CollectorRegistry())
        if history is not None:  # Morpheus's recurring job: its past runs and provenance (tests/support/morpheus_rig.py)
            past, accesses = recurring_history(self.cluster.clock.now(), jobs=(history,), origin="rm")
            self.app.store.append_job_runs(past)
            self.app.store.append_provenance("it", accesses, [], None, self.cluster.clock.now())
        self.app.start(run_loops=False)
        self.every = {"telemetry": 2, "guard": 1, "jockey": 5}
        if (morpheus or {}).get("enabled"):
            self.every.update({"morpheus-refit": 60, "morpheus-reservations": 5})
        self.elapsed = 0

    def reserve(self, containers: int, arrival_in_s: float, length_s: float, name: str = "nightly-sort-window") -> str:
        """Submit a one-stage reservation as a user's workflow would (R_ORDER_NO_GAP, a gang)."""
        c = self.cluster.client
        arrival = int((self.cluster.clock.now() + arrival_in_s) * 1000)
        rid = c.new_reservation()
        c.submit_reservation(rid, "root.default", ReservationDefinition(
            arrival_ms=arrival, deadline_ms=arrival + int(length_s * 1000), name=name,
            interpreter=Interpreter(3), recurrence_period_ms=0,
            requests=(ReservationRequest(Resource(1024, 1), containers, containers, int(length_s * 1000)),)))
        return rid

    def submit_job(self, reservation_id: str) -> App:
        """The deadline job: the MR sleep job into the reservation (AppSpec as Workload.mapreduce_sleep)."""
        return self.cluster.work.submit(AppSpec(
            name=f"{self.name}-2026-11-25", app_type="MAPREDUCE", kind=AmKind.MAPREDUCE, am=Resources(1024, 1),
            workers=self.maps, worker=Resources(1024, 1), worker_duration_s=self.map_s, worker_cpu_cores=0.05,
            worker_mem_used_mb=300.0, worker_startup_s=MR_TASK_STARTUP_S, reservation_id=reservation_id))

    def admin(self, path: str, body: dict[str, Any] | None = None) -> Any:
        url = f"http://{self.app.admin.address}{path}"
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                     headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as err:
            return {"status": err.code, **json.loads(err.read())}

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://{self.app.admin.address}/metrics", timeout=5) as r:
            return r.read().decode()

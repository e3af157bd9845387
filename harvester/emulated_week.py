"""The sidecar on the embedded emulator for a simulated span (a week), and what really happened:
the ground truth `harvester whatif` is validated against (issue 28, "validated against what
happened").

How both run on one accelerated clock. `harvester serve` with `cluster.source: embedded` builds
the demo emulator on the sidecar's own clock (app.start_embedded_cluster) and polls and actuates
it over real HTTP; `embedded.speed` makes that clock a `ScaledClock`, whose progress under a
loaded machine depends on how fast the threads happen to run. Here the same composition root
(`Harvester`) gets a STEPPED clock instead (`SimClock`, DESIGN.md principle 3): its loops do not
run on their threads; `run_emulated` moves the clock to the next loop due and runs the loops due
at that instant in their data-flow order (`ControlLoop.run_once`, the same supervision as live,
including the back-off waits), each loop's next turn after `ControlLoop.next_wait_s()`. The
emulator has no ticker on a SimClock: each HTTP request of the sidecar catches it up to the
shared clock (emulator/server.py), so the sidecar sees exactly the cluster of that instant and
its actions (capacity cuts with an over-commit timeout, signals) land at that instant. The run
is deterministic for a seed and independent of the machine's load.

Speed: the emulator's NM resource monitor integrates on a 1-second grid by default; a week is
604,800 grid points (~160 s on its own). `WEEK_TIMING` takes a 10-second grid and 30-second
monitor samples (the NodeManagers' heartbeats stay at 1 s). The configuration `week_settings`
writes uses 300-second poll and guard periods — coarser than serving's 10 s / 5 s; every HTTP
call costs a few ms of CPU on both sides, and a week at 300 s is ~6,000 of them — and the jobs
loop reads finished apps at the poll period too (instead of every minute). The SAME file is what
`harvester whatif --config` reads, so the simulator replays the week with the periods the sidecar
really ran (whatif pins the reserve's reaction horizon to poll + RM lag + guard period).

The truth (`recorded_truth`) is read from the emulator's own container records (the RM's view,
emulator/state.py), never from the sidecar's store:

- harvested core-hours: over the batch containers on harvested nodes that ended COMPLETED in
  [start, end) — tasks and ApplicationMasters —, the capacity the RM granted them in physical
  cores (vCores × the node's physical cores per vCore) × how long they held it (allocation →
  exit). This is what `harvester whatif` reports and the same way it counts: whatif/runs.py
  takes the simulator's `harvested_cpu_hours`, a completed task's duration × its cores
  (sim/substrate.py), a task's cores being its vCores × cores per vCore (sim/jobrun.py), and a
  replayed job holds its recorded skyline, the RM's allocatedVCores, AM included
  (whatif/inputs.py). The store knows allocations, not what each process burned;
- burned core-hours (for information): what those containers' processes used (their CPU demand ×
  run time; the demo's tasks use 0.1-0.9 of a core, less than their allocation);
- task kills: the task containers that ended by the RM's over-commit kill (the guard cut the
  node's capacity below its allocation), by a signal the guard sent, or for the primary tenant
  (the simulator's kill causes `rm_overcommit`, `controller`, `primary`); AM kills apart;
- wasted core-hours: the granted capacity the killed task containers held before they died.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from harvester.clock import SimClock
from harvester.emulator.dynamics import Timing
from harvester.emulator.state import Emulator

log = logging.getLogger(__name__)

DAY_S = 86400.0
#: The emulator's intervals for a week-long run (module docstring): 10-s monitor grid, 30-s samples.
WEEK_TIMING = Timing(monitor_interval_s=30.0, monitor_grid_s=10.0, plan_step_s=10.0)
#: A fixed start (2026-11-01 00:00 UTC) so a seed gives the same week on any day it runs.
WEEK_START = 1_793_491_200.0
TASK_KILL_CAUSES = ("RM_OVERCOMMIT", "SIGNAL_GRACEFUL", "SIGNAL_FORCEFUL", "PRIMARY")


def week_settings(out_dir: Path, *, seed: int = 0, poll_s: float = 300.0, control_s: float = 300.0,
                  nodes_per_tenant: int = 3, extra: dict[str, Any] | None = None) -> Path:
    """Write the serving configuration of an emulated week into `out_dir` (config.yaml, its
    SQLite store and admin token beside it) and return its path; `extra` is merged on top."""
    out_dir.mkdir(parents=True, exist_ok=True)
    token = out_dir / "admin.token"
    if not token.exists():
        import secrets

        token.write_text(secrets.token_urlsafe(32) + "\n")
        token.chmod(0o600)
    doc: dict[str, Any] = {
        "cluster": {"source": "embedded"},
        "embedded": {"listen": "127.0.0.1:0", "seed": seed, "nodes_per_tenant": nodes_per_tenant},
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0",
                   "auth": {"token_file": str(token)}},
        "store": {"backend": "sqlite", "path": str(out_dir / "harvester.db")},
        "telemetry": {"poll_interval_s": poll_s, "stale_after_s": 2.5 * poll_s},
        "harvesting": {"control_period_s": control_s},
        "morpheus": {"enabled": False},
        "jockey": {"enabled": False},
    }
    for section, values in (extra or {}).items():
        doc.setdefault(section, {}).update(values)
    path = out_dir / "config.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@dataclass
class Truth:
    """What the emulator recorded over [start, end) (module docstring for the definitions)."""

    start: float
    end: float
    harvested_core_hours: float = 0.0
    am_core_hours: float = 0.0           # the AMs' part of harvested_core_hours
    burned_core_hours: float = 0.0
    granted_vcore_hours: float = 0.0
    task_kills: int = 0
    am_kills: int = 0
    wasted_core_hours: float = 0.0
    tasks_completed: int = 0
    kills_by_cause: dict[str, int] = field(default_factory=dict)
    apps_submitted: int = 0
    apps_finished: int = 0
    capacity_vcores_mean: float = 0.0    # the harvested nodes' schedulable vCores (the guard's), at each poll
    allocated_vcores_mean: float = 0.0   # and what the RM had allocated on them then

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def end_cause(rec: Any) -> str:
    """Why a finished container ended: the reason of its last lifecycle move (emulator/state.py
    `_finish_record` writes the `EndCause` value there)."""
    return rec.lifecycle.history[-1].reason


@dataclass(frozen=True)
class Row:
    """One finished container as the truth needs it (a CONTAINER_COLUMNS row)."""

    app_id: str
    app_name: str
    hostname: str
    is_am: bool
    vcores: int
    cores_per_vcore: float
    cpu_cores: float
    allocated_at: float
    running_at: float | None
    finished_at: float
    end_cause: str


CONTAINER_COLUMNS = ("container_id", "app_id", "app_name", "hostname", "is_am", "vcores", "cores_per_vcore",
                     "cpu_cores", "allocated_at", "running_at", "finished_at", "end_cause")


def emulator_rows(emu: Emulator) -> list[tuple[str, Row]]:
    """(container id, row) of every finished container of the emulator."""
    hosts = emu.model.hostnames
    per_vcore = emu.model.physical_cores / emu.model.total_vcores
    with emu.lock:
        return [(rec.container_id, Row(rec.app_id, emu.apps[rec.app_id].spec.name, hosts[rec.node], rec.is_am,
                                       rec.resources.vcores, float(per_vcore[rec.node]), rec.cpu_cores, rec.started_at,
                                       rec.running_at, rec.finished_at, end_cause(rec)))
                for rec in emu.containers.values() if rec.finished_at is not None]


def truth_of(rows: list[Row], start: float, end: float, harvested: Callable[[str], bool] = lambda h: True) -> Truth:
    """The truth over [start, end) (module docstring): containers that ended in it on harvested
    nodes. Harvested core-hours count every batch container that COMPLETED, its AM too (whatif's
    jobs hold their recorded skyline, the AM's allocation included: the RM's allocatedVCores)."""
    t = Truth(start, end)
    for r in rows:
        if not (start <= r.finished_at < end) or not harvested(r.hostname):
            continue
        held_h = (r.finished_at - r.allocated_at) / 3600.0
        granted = r.vcores * r.cores_per_vcore * held_h
        ran_h = 0.0 if r.running_at is None else max(0.0, r.finished_at - r.running_at) / 3600.0
        t.granted_vcore_hours += r.vcores * held_h
        if r.end_cause == "COMPLETED":
            t.harvested_core_hours += granted
            t.burned_core_hours += r.cpu_cores * ran_h
            if r.is_am:
                t.am_core_hours += granted
            else:
                t.tasks_completed += 1
        elif r.end_cause in TASK_KILL_CAUSES:
            if r.is_am:
                t.am_kills += 1
                continue
            t.task_kills += 1
            t.kills_by_cause[r.end_cause] = t.kills_by_cause.get(r.end_cause, 0) + 1
            t.wasted_core_hours += granted
    return t


def recorded_truth(emu: Emulator, start: float, end: float,
                   harvested: Callable[[str], bool] = lambda hostname: True) -> Truth:
    """The truth over [start, end) from the emulator's container records; `harvested(hostname)`
    says which nodes are harvested (those of a primary tenant)."""
    t = truth_of([r for _, r in emulator_rows(emu)], start, end, harvested)
    with emu.lock:
        for app in emu.apps.values():
            t.apps_submitted += start <= app.submitted_at < end
            t.apps_finished += bool(app.finished_at) and start <= app.finished_at < end
    return t


def write_containers(emu: Emulator, path: Path) -> int:
    """Every finished container, one CSV row each (CONTAINER_COLUMNS): the raw record the truth
    is summed from, for an audit or another definition (`read_containers`)."""
    import csv

    rows = emulator_rows(emu)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CONTAINER_COLUMNS)
        for cid, r in rows:
            w.writerow((cid, *dataclasses.astuple(r)))
    return len(rows)


def read_containers(path: Path) -> list[Row]:
    import csv

    with path.open(newline="") as f:
        return [Row(d["app_id"], d["app_name"], d["hostname"], d["is_am"] == "True", int(d["vcores"]),
                    float(d["cores_per_vcore"]), float(d["cpu_cores"]), float(d["allocated_at"]),
                    float(d["running_at"]) if d["running_at"] else None, float(d["finished_at"]), d["end_cause"])
                for d in csv.DictReader(f)]


def tenant_matcher(patterns: list[str]) -> Callable[[str], bool]:
    """A hostname is harvested when a tenant rule's pattern matches it."""
    compiled = [re.compile(p) for p in patterns]
    return lambda hostname: any(p.search(hostname) for p in compiled)


@dataclass
class WeekResult:
    config: Path
    store: Path
    start: float
    end: float
    truth: Truth
    loop_ticks: dict[str, int]
    loop_failures: dict[str, int]


def run_emulated(config: Path, days: float, *, start: float = WEEK_START, timing: Timing = WEEK_TIMING,
                 on_day: Callable[[float], None] | None = None) -> WeekResult:
    """Serve `config` (cluster.source embedded) on a stepped clock for `days` simulated days
    (module docstring); returns the store's path and the emulator's truth over the span.
    `on_day(fraction)` after each simulated day (progress)."""
    from prometheus_client import CollectorRegistry

    from harvester.app import Harvester
    from harvester.config import load_settings

    settings = load_settings(config)
    if settings.cluster.source != "embedded":
        raise ValueError("run_emulated serves the embedded emulator (cluster.source: embedded)")
    clock = SimClock(start)
    harv = Harvester(settings, clock=clock, registry=CollectorRegistry(), emulator_timing=timing)
    assert harv.embedded is not None
    if any(loop.name == "jobs" for loop in harv.loops):  # finished apps every poll, not every minute
        harv.loop("jobs").interval_s = max(harv.loop("jobs").interval_s, settings.telemetry.poll_interval_s)
    end = start + days * DAY_S
    ticks = {loop.name: 0 for loop in harv.loops}
    fails = {loop.name: 0 for loop in harv.loops}
    harv.start(run_loops=False)
    try:
        due = {loop.name: start for loop in harv.loops}
        next_day = start + DAY_S
        emu = harv.embedded.emu
        harvested = tenant_matcher([r.hostname_pattern for r in harv.harvesting.tenants])
        mask = np.array([harvested(h) for h in emu.model.hostnames], dtype=bool)
        cap_sum = alloc_sum = 0.0
        samples = 0
        while True:
            t = min(due.values())
            if t >= end:
                break
            clock.set(t)
            for loop in harv.loops:  # data-flow order, as the simulator ticks them
                if due[loop.name] <= t:
                    if loop.run_once() is None:
                        fails[loop.name] += 1
                    ticks[loop.name] += 1
                    due[loop.name] = t + max(loop.next_wait_s(), 1e-3)
            with emu.lock:  # what the cluster offered batch work at this instant (after the guard)
                cap_sum += float(emu.model.cap_vcores[mask].sum())
                alloc_sum += float(emu.model.alloc_vcores[mask].sum())
                samples += 1
            if on_day is not None and t >= next_day:
                on_day(min(1.0, (t - start) / (end - start)))
                next_day += DAY_S
        clock.set(end)
        emu.sync()
        truth = recorded_truth(emu, start, end, harvested)
        truth.capacity_vcores_mean = cap_sum / max(1, samples)
        truth.allocated_vcores_mean = alloc_sum / max(1, samples)
        write_containers(emu, config.parent / "containers.csv")
        (config.parent / "truth.json").write_text(json.dumps(truth.as_dict(), indent=1) + "\n")
    finally:
        harv.stop()
    return WeekResult(config, Path(settings.store.path), start, end, truth, ticks, fails)

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
monitor samples (the NodeManagers' heartbeats stay at 1 s), and the configuration
`week_settings` writes uses 60-second poll and guard periods — coarser than serving's 10 s / 5 s,
and the SAME file is what `harvester whatif --config` reads, so the simulator replays the week
with the periods the sidecar really ran.

The truth (`recorded_truth`) is read from the emulator's own container records (the RM's view,
emulator/state.py), never from the sidecar's store:

- harvested core-hours: over the batch task containers (not AMs) on harvested nodes that ended
  COMPLETED in [start, end), the capacity the RM granted them in physical cores — vCores × the
  node's physical cores per vCore — × how long they held it (allocation → exit). This is what
  `harvester whatif` reports (whatif/runs.py: the simulator's `harvested_cpu_hours`, a completed
  task's duration × its cores, sim/substrate.py, where a task's cores are its vCores × cores per
  vCore, sim/jobrun.py) and what the store can know: the RM shows allocations, not what each
  container's process burned;
- burned core-hours (for information): what those containers' processes used (their CPU demand ×
  run time; the demo's tasks use 0.1-0.9 of a core, less than their allocation);
- task kills: the task containers that ended by the RM's over-commit kill (the guard cut the
  node's capacity below its allocation), by a signal the guard sent, or for the primary tenant
  (the simulator's kill causes `rm_overcommit`, `controller`, `primary`); AM kills apart;
- wasted core-hours: the granted capacity the killed task containers held before they died.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

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
    burned_core_hours: float = 0.0
    granted_vcore_hours: float = 0.0
    task_kills: int = 0
    am_kills: int = 0
    wasted_core_hours: float = 0.0
    tasks_completed: int = 0
    kills_by_cause: dict[str, int] = field(default_factory=dict)
    apps_submitted: int = 0
    apps_finished: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def end_cause(rec: Any) -> str:
    """Why a finished container ended: the reason of its last lifecycle move (emulator/state.py
    `_finish_record` writes the `EndCause` value there)."""
    return rec.lifecycle.history[-1].reason


def recorded_truth(emu: Emulator, start: float, end: float,
                   harvested: Callable[[str], bool] = lambda hostname: True) -> Truth:
    """The truth over [start, end) from the emulator's container records; `harvested(hostname)`
    says which nodes are harvested (those of a primary tenant)."""
    t = Truth(start, end)
    hosts = emu.model.hostnames
    per_vcore = emu.model.physical_cores / emu.model.total_vcores
    with emu.lock:
        for rec in emu.containers.values():
            if rec.finished_at is None or not (start <= rec.finished_at < end) or not harvested(hosts[rec.node]):
                continue
            cause = end_cause(rec)
            ran_s = 0.0 if rec.running_at is None else max(0.0, rec.finished_at - rec.running_at)
            if rec.is_am:
                t.am_kills += cause in TASK_KILL_CAUSES
                continue
            held_h = (rec.finished_at - rec.started_at) / 3600.0
            granted = rec.resources.vcores * float(per_vcore[rec.node]) * held_h
            t.granted_vcore_hours += rec.resources.vcores * held_h
            if cause == "COMPLETED":
                t.tasks_completed += 1
                t.harvested_core_hours += granted
                t.burned_core_hours += rec.cpu_cores * ran_s / 3600.0
            elif cause in TASK_KILL_CAUSES:
                t.task_kills += 1
                t.kills_by_cause[cause] = t.kills_by_cause.get(cause, 0) + 1
                t.wasted_core_hours += granted
        for app in emu.apps.values():
            t.apps_submitted += start <= app.submitted_at < end
            t.apps_finished += bool(app.finished_at) and start <= app.finished_at < end
    return t


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
            if on_day is not None and t >= next_day:
                on_day(min(1.0, (t - start) / (end - start)))
                next_day += DAY_S
        clock.set(end)
        emu = harv.embedded.emu
        emu.sync()
        truth = recorded_truth(emu, start, end, tenant_matcher([r.hostname_pattern for r in harv.harvesting.tenants]))
    finally:
        harv.stop()
    return WeekResult(config, Path(settings.store.path), start, end, truth, ticks, fails)

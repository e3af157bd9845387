"""The Yahoo short-job traces (Hawk/Eagle `.tr`) as jobs for the Phoenix simulator.

Loaded with the simulator's Hawk/Eagle loader (harvester/sim/traces/jobs.py): arrival, one
stage of tasks with their durations. Here:
- schedulers estimate a job's task duration by its mean truncated to whole seconds (the Eagle
  simulator's `int(float(mean))` with MEAN estimation), and a job is *long* when that estimate
  exceeds `cutoff_s` (the Eagle simulator's Yahoo cutoff 90.5811 s: ~90% of the sub-trace jobs
  are short, carrying only 1.0-1.5% of the task-seconds);
- the offered load is set by compressing inter-arrival times: with `load` L, arrivals are
  scaled so that task-seconds / (span x workers) = L (Sparrow and Eagle vary load the same way,
  by the arrival rate). `load=None` keeps the trace's own times.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harvester.sim.traces.jobs import load_hawk_eagle

DEFAULT_CUTOFF_S = 90.5811  # Eagle simulator README, YH


@dataclass(frozen=True, slots=True, eq=False)
class TraceJob:
    job_id: str
    arrival_s: float
    durations_s: np.ndarray
    long: bool

    @property
    def tasks(self) -> int:
        return int(self.durations_s.size)

    @property
    def estimate_s(self) -> float:
        return float(int(self.durations_s.mean()))


@dataclass(frozen=True, slots=True, eq=False)
class Trace:
    name: str
    jobs: tuple[TraceJob, ...]
    time_scale: float  # arrivals were divided by this

    @property
    def task_seconds(self) -> float:
        return float(sum(j.durations_s.sum() for j in self.jobs))

    @property
    def short_share(self) -> float:
        """Share of task-seconds in short jobs (Hawk's rule for sizing the short partition)."""
        short = sum(j.durations_s.sum() for j in self.jobs if not j.long)
        return float(short / max(self.task_seconds, 1e-9))

    def load(self, workers: int) -> float:
        span = max(j.arrival_s for j in self.jobs) - min(j.arrival_s for j in self.jobs)
        return self.task_seconds / max(span, 1e-9) / workers


def load_trace(path: str | Path, *, workers: int, load: float | None, cutoff_s: float = DEFAULT_CUTOFF_S,
               limit: int | None = None) -> Trace:
    specs = load_hawk_eagle(path, limit)
    jobs = [TraceJob(s.job_id, s.submit_s, np.asarray(s.stages[0].durations_s, dtype=float),
                     int(np.mean(s.stages[0].durations_s)) > cutoff_s) for s in specs]
    raw = Trace(Path(path).name.split(".")[0], tuple(jobs), 1.0)
    if load is None:
        return raw
    if not load > 0:
        raise ValueError("load must be > 0")
    scale = load / raw.load(workers)
    scaled = tuple(TraceJob(j.job_id, j.arrival_s / scale, j.durations_s, j.long) for j in jobs)
    return Trace(raw.name, scaled, scale)

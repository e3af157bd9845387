"""Job history for Algorithm 1 lines 3–4 (OSDI'16 §4.1) — pure.

Line 3, "J.type ← Length (short, medium, or long) from its last run": a job's type comes from
the duration of its LAST run compared with two thresholds. §4.1: "We set the thresholds based
on the historical distribution of job lengths and the current computational capacity of each
preferred tenant class (e.g., the total computation required by long jobs should be
proportional to the computational capacity of constant primary tenants) ... We assume that a
job that has not executed before is a medium job." Two fits are offered:
- `fit_job_history(..., short_quantile, long_quantile)`: thresholds are quantiles of the
  duration of every run in the window (default tertiles 1/3, 2/3: equal thirds of runs).
- `capacity_thresholds(runs, short_share, long_share)`: the paper's capacity rule. Runs are
  sorted by duration; the longest runs that together need `long_share` of all container-seconds
  are long, the shortest runs needing `short_share` are short. The caller passes the capacity
  shares of the preferred classes (constant for long, unpredictable for short jobs).
Too few runs (< `min_runs`) yields no thresholds: the cold-start thresholds are policy and
come from configuration (decisions/class_selection.py).

Line 4, "J.req ← Max amount of concurrent resources from DAG": "using a breadth-first traversal
of the job's directed acyclic graph". Stages are grouped into breadth-first levels (level = 1 +
the deepest parent's level, roots at 0) and the requirement is the maximum over levels of the
summed task counts: stages at the same depth can run at once. Without a DAG, the peak number
of concurrent containers of the job's past runs is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from graphlib import CycleError, TopologicalSorter
from typing import Iterable, Sequence

import numpy as np

from harvester.echo import shown


class JobType(str, Enum):
    SHORT = "short"
    MEDIUM = "medium"
    LONG = "long"


class DemandError(ValueError):
    """The job's concurrent demand cannot be known (bad DAG, no history and no override)."""


@dataclass(frozen=True, slots=True)
class RunUsage:
    """A run's skyline as polled from the RM (Morpheus §5's telemetry history): per step of
    `step_s` from `origin` (its launch, epoch s), the largest memory (MB) and vcores it held at
    a poll in that step. `first_s` / `last_s` are the first and last poll (seconds after
    `origin`), so how much of the run the polls saw is known (`coverage`)."""

    step_s: float
    origin: float
    memory_mb: tuple[int, ...]
    vcores: tuple[int, ...]
    first_s: float
    last_s: float

    def coverage(self, finished_at: float) -> float:
        """Share of [origin, finished_at] between the first poll and one step after the last."""
        span = finished_at - self.origin
        if span <= 0:
            return 1.0 if self.memory_mb else 0.0
        seen = min(span, self.last_s + self.step_s) - max(0.0, self.first_s - self.step_s)
        return max(0.0, min(1.0, seen / span))


@dataclass(frozen=True, slots=True)
class JobRun:
    """One finished run of a recurring job (`job_name` is its recurring identity).

    `started_at` is the RM's `startedTime`, which in 3.3.6 is the SUBMIT time; `launched_at`
    its `launchTime` (the AM's start), None when unknown. `origin` says where the row came from:
    `rm` (polled), `sim` (the simulator) or `synthesized-demo` (the embedded demo's made-up
    past, never for a real RM). `usage` is its skyline when it was polled while running.
    """

    job_name: str
    app_id: str
    started_at: float
    finished_at: float
    peak_containers: int = 0
    container_seconds: float | None = None
    launched_at: float | None = None
    final_status: str = ""
    queue: str = ""
    origin: str = "rm"
    usage: RunUsage | None = None

    @property
    def duration_s(self) -> float:
        return max(0.0, self.finished_at - self.started_at)

    @property
    def work(self) -> float:
        """Container-seconds used; duration × peak when not measured."""
        if self.container_seconds is not None:
            return self.container_seconds
        return self.duration_s * max(1, self.peak_containers)

    @property
    def succeeded(self) -> bool:
        """Finished successfully (an unknown status counts: older rows did not record it)."""
        return self.final_status in ("", "SUCCEEDED")


@dataclass(frozen=True, slots=True)
class RunningApp:
    """One application the RM runs now, as the jobs loop's last /apps poll saw it (`job_name`:
    its recurring identity, `name` the RM's). `preempted` counts the non-AM containers the RM
    itself took from it (numNonAMContainerPreempted: its kills on a node cut with
    overCommitTimeout, kill_mechanism rm_overcommit); None when the RM does not say."""

    job_name: str
    app_id: str
    name: str
    queue: str
    state: str
    started_at: float
    containers: int
    allocated_mb: int
    allocated_vcores: int
    preempted: int | None = None


@dataclass(frozen=True, slots=True)
class Stage:
    """One DAG stage: `tasks` containers, run after every stage named in `parents`."""

    name: str
    tasks: int
    parents: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LengthThresholds:
    """short: duration < short_below_s; long: duration ≥ long_from_s; else medium."""

    short_below_s: float
    long_from_s: float
    method: str
    runs: int = 0

    def classify(self, duration_s: float) -> JobType:
        if duration_s < self.short_below_s:
            return JobType.SHORT
        if duration_s >= self.long_from_s:
            return JobType.LONG
        return JobType.MEDIUM


@dataclass(frozen=True)
class JobHistoryModel:
    """Thresholds (None: too little history) and each job's last run and peak demand."""

    thresholds: LengthThresholds | None
    last_runs: tuple[JobRun, ...] = ()
    peaks: tuple[tuple[str, int], ...] = ()
    _last: dict[str, JobRun] = field(init=False, repr=False, compare=False)
    _peak: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_last", {r.job_name: r for r in self.last_runs})
        object.__setattr__(self, "_peak", dict(self.peaks))

    def last_run(self, job_name: str) -> JobRun | None:
        return self._last.get(job_name)

    def peak_containers(self, job_name: str) -> int | None:
        return self._peak.get(job_name)


def fit_job_history(
    runs: Iterable[JobRun],
    *,
    short_quantile: float = 1 / 3,
    long_quantile: float = 2 / 3,
    min_runs: int = 3,
    thresholds: LengthThresholds | None = None,
) -> JobHistoryModel:
    """Quantile thresholds over all runs' durations, plus last run and peak per job.

    Pass `thresholds` (e.g. from `capacity_thresholds`) to use them instead of quantiles.
    """
    if not 0 < short_quantile < long_quantile < 1:
        raise ValueError(f"need 0 < short_quantile < long_quantile < 1, got {short_quantile}, {long_quantile}")
    runs = list(runs)
    last: dict[str, JobRun] = {}
    peak: dict[str, int] = {}
    for r in runs:
        prev = last.get(r.job_name)
        if prev is None or (r.finished_at, r.app_id) > (prev.finished_at, prev.app_id):
            last[r.job_name] = r
        peak[r.job_name] = max(peak.get(r.job_name, 0), r.peak_containers)
    if thresholds is None and len(runs) >= min_runs:
        d = np.array([r.duration_s for r in runs])
        lo, hi = np.quantile(d, [short_quantile, long_quantile])
        thresholds = LengthThresholds(float(lo), float(max(lo, hi)), f"quantiles {short_quantile:.3g}/{long_quantile:.3g}", len(runs))
    return JobHistoryModel(
        thresholds,
        tuple(sorted(last.values(), key=lambda r: r.job_name)),
        tuple(sorted((j, p) for j, p in peak.items() if p > 0)),
    )


def capacity_thresholds(runs: Sequence[JobRun], *, short_share: float, long_share: float) -> LengthThresholds | None:
    """The paper's capacity rule: long runs need `long_share` of the work, short `short_share`.

    Returns None without runs or work. `long_from_s` is +inf when even the longest run alone
    needs more than `long_share` (then no job is long).
    """
    if not (0 <= short_share <= 1 and 0 <= long_share <= 1 and short_share + long_share <= 1):
        raise ValueError(f"shares must be in [0, 1] and sum to at most 1, got {short_share}, {long_share}")
    if not runs:
        return None
    order = sorted(runs, key=lambda r: r.duration_s)
    d = np.array([r.duration_s for r in order])
    w = np.array([r.work for r in order])
    total = float(w.sum())
    if total <= 0:
        return None
    cum = np.cumsum(w)
    i_short = int(np.searchsorted(cum, short_share * total, side="right"))
    short_below = float(d[i_short]) if i_short < d.size else math.inf
    suffix = total - np.concatenate(([0.0], cum[:-1]))  # work of runs i.. n-1
    fits = np.flatnonzero(suffix <= long_share * total + 1e-9)
    long_from = float(d[fits[0]]) if fits.size else math.inf
    short_below = min(short_below, long_from)
    return LengthThresholds(short_below, long_from, f"capacity shares short {short_share:.2f} / long {long_share:.2f}", len(runs))


def classify_job(
    model: JobHistoryModel, job_name: str, *, fallback: LengthThresholds, last_run_s: float | None = None
) -> tuple[JobType, str]:
    """Algorithm 1 line 3: the job's type from its last run (unknown → medium) and why."""
    th = model.thresholds or fallback
    if last_run_s is None:
        run = model.last_run(job_name)
        if run is None:
            return JobType.MEDIUM, f"job {shown(job_name)} has no past run: medium (§4.1)"
        last_run_s, source = run.duration_s, f"last run {run.app_id}"
    else:
        source = "last run given"
    t = th.classify(last_run_s)
    cmp = {JobType.SHORT: f"< short {th.short_below_s:.0f}s", JobType.LONG: f">= long {th.long_from_s:.0f}s",
           JobType.MEDIUM: f"in [{th.short_below_s:.0f}s, {th.long_from_s:.0f}s)"}[t]
    return t, f"{t.value} job ({source} {last_run_s:.0f}s {cmp}; thresholds by {th.method})"


def max_concurrent_from_dag(stages: Sequence[Stage]) -> tuple[int, str]:
    """Algorithm 1 line 4: max over breadth-first levels of the summed tasks, and why."""
    by_name: dict[str, Stage] = {}
    for s in stages:
        if not s.name:
            raise DemandError("every DAG stage needs a name")
        if s.name in by_name:
            raise DemandError(f"DAG stage {s.name!r} appears twice")
        if s.tasks < 0:
            raise DemandError(f"DAG stage {s.name!r} has negative tasks ({s.tasks})")
        by_name[s.name] = s
    for s in stages:
        missing = [p for p in s.parents if p not in by_name]
        if missing:
            raise DemandError(f"DAG stage {s.name!r} names unknown parents {missing}")
    try:
        order = list(TopologicalSorter({s.name: s.parents for s in stages}).static_order())
    except CycleError as exc:
        raise DemandError(f"DAG has a cycle through {shown(exc.args[1])}") from None
    level: dict[str, int] = {}
    for name in order:
        level[name] = 1 + max((level[p] for p in by_name[name].parents), default=-1)
    per_level: dict[int, int] = {}
    for name, lv in level.items():
        per_level[lv] = per_level.get(lv, 0) + by_name[name].tasks
    if not per_level:
        raise DemandError("empty DAG")
    best = max(per_level, key=lambda lv: (per_level[lv], -lv))
    return per_level[best], f"DAG breadth-first level {best} of {len(per_level)} needs {per_level[best]} containers"


def required_containers(
    model: JobHistoryModel, job_name: str, *, override: int = 0, dag: Sequence[Stage] = ()
) -> tuple[int, str]:
    """J.req: the override, else the DAG's widest level, else the peak of past runs."""
    if override < 0:
        raise DemandError(f"max_concurrent_containers must be >= 0, got {override}")
    if override > 0:
        return override, f"{override} containers given"
    if dag:
        n, why = max_concurrent_from_dag(dag)
        if n <= 0:
            raise DemandError("the DAG has no tasks")
        return n, why
    peak = model.peak_containers(job_name)
    if peak:
        return peak, f"peak of past runs of {job_name!r}: {peak} containers"
    raise DemandError(f"job {shown(job_name)} has no past run with a known peak: give max_concurrent_containers or dag")

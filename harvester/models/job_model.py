"""A recurring job's model from its prior runs (Jockey, EuroSys'12 §4.1) — pure.

§4.1: "These estimates are based on one or more previous runs of the job, from which we extract
performance statistics such as the per-stage distributions of task runtimes and initialization
latencies, and the probabilities of single and multiple task failures. The job simulator takes
as input these statistics, along with the job's algebra (list of stages, tasks and their
dependencies)". This module is that extraction: `fit_job_model(runs) -> JobModel`.

Input: a list of `RunRecord`s, one per prior run — the run's stages (task counts, parents and the
kind of each edge) and every task ATTEMPT (ready, start, end, initialization time, failed or
not). The simulator's traces (harvester/sim/jockey/truth.py turns a `JobSpec` into one run),
the JSON format of docs/jockey.md (`load_runs_json`) and, in the second wave, YARN history all
produce this same list.

The fit:
- structure (the "algebra"): the LATEST run's stages; a later run is the best guess for the next;
- task runtime per stage: `end − start − init` of every successful attempt in every run that has
  the stage, kept as an empirical quantile function (`Quantiles`, 101 points by default) so
  outliers stay in the tail;
- initialization latency per stage: `init` of every attempt, same representation;
- failure probabilities per stage: (P(first attempt fails), P(a re-run fails)) — the "single and
  multiple task failures" of §4.1;
- queueing per task (`start − ready`, mean) for the progress indicator (models/progress.py).
A stage with fewer than `min_stage_samples` observations (a one-task stage seen in 5 runs has 5)
cannot show its tail: its runtime is its own median × the JOB's shape (every successful
runtime divided by its stage's median, pooled over stages), and its failure probabilities are
the job's. Outliers and failures then reach the small stages on the critical path, where they
hurt most (partial pooling; our choice, the paper does not say how it treats small stages).
Edges are `barrier` (all-to-all: a child task needs EVERY parent task, §2.1 "A barrier occurs
when tasks in a dependent stage cannot begin until every task in the input stage finishes") or
`one_to_one` (child task i needs only parent task i; equal task counts required).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np


class FitError(ValueError):
    """Prior runs that cannot produce a job model (the message names the run, stage or field)."""


class Edge(str, Enum):
    BARRIER = "barrier"
    ONE_TO_ONE = "one_to_one"


@dataclass(frozen=True, slots=True, eq=False)
class Quantiles:
    """An empirical distribution as its inverse CDF on evenly spaced levels 0, 1/(k-1), …, 1.

    Sampling interpolates linearly between levels, so `sample(u)` for u ~ U(0,1) reproduces the
    observed range, including its maximum (the outliers of §4.1).
    """

    values: np.ndarray

    def __post_init__(self) -> None:
        v = np.asarray(self.values, dtype=np.float64)
        if v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v)) or np.any(np.diff(v) < 0) or v[0] < 0:
            raise FitError("quantiles must be >= 2 finite, non-negative, non-decreasing values")
        object.__setattr__(self, "values", v)

    @classmethod
    def from_samples(cls, samples: Iterable[float], points: int = 101) -> "Quantiles":
        s = np.asarray(list(samples) if not isinstance(samples, np.ndarray) else samples, dtype=np.float64)
        if s.size == 0:
            raise FitError("no samples")
        if not np.all(np.isfinite(s)) or np.any(s < 0):
            raise FitError("samples must be finite and non-negative")
        return cls(np.quantile(s, np.linspace(0.0, 1.0, max(2, points))))

    @classmethod
    def constant(cls, value: float) -> "Quantiles":
        return cls(np.array([float(value), float(value)]))

    def sample(self, u: np.ndarray) -> np.ndarray:
        return np.interp(u, np.linspace(0.0, 1.0, self.values.size), self.values)

    @property
    def mean(self) -> float:
        """Mean of the piecewise-linear inverse CDF (trapezoid rule over the levels)."""
        v = self.values
        return float(((v[:-1] + v[1:]) * 0.5).mean())

    @property
    def max(self) -> float:
        return float(self.values[-1])


@dataclass(frozen=True, slots=True, eq=False)
class StageModel:
    """One stage: `tasks` tasks, run after its `parents` (earlier stage indexes) per `edges`."""

    name: str
    tasks: int
    runtime: Quantiles
    init: Quantiles
    parents: tuple[int, ...] = ()
    edges: tuple[Edge, ...] = ()
    failure_probs: tuple[float, ...] = (0.0,)
    queue_s: float = 0.0

    def failure_prob(self, attempt: int) -> float:
        """P(attempt `attempt` (0-based) fails); attempts past the list use its last value."""
        return self.failure_probs[min(attempt, len(self.failure_probs) - 1)]

    @property
    def expected_attempts(self) -> float:
        """E[attempts per task] with unlimited re-runs: 1 + p0 + p0·p1 + p0·p1² + … (p1 < 1)."""
        p0, p1 = self.failure_prob(0), self.failure_prob(1)
        if p0 == 0:
            return 1.0
        return 1.0 + p0 / (1.0 - p1) if p1 < 1 else math.inf


@dataclass(frozen=True, slots=True, eq=False)
class JobModel:
    """A job's algebra and statistics; stages are in topological order (parents come first)."""

    name: str
    stages: tuple[StageModel, ...]

    def __post_init__(self) -> None:
        if not self.stages:
            raise FitError(f"job {self.name!r} has no stages")
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise FitError(f"job {self.name!r} repeats a stage name")
        for i, st in enumerate(self.stages):
            if st.tasks < 1:
                raise FitError(f"job {self.name!r} stage {st.name!r}: tasks must be >= 1")
            if len(st.edges) != len(st.parents):
                raise FitError(f"job {self.name!r} stage {st.name!r}: one edge kind per parent")
            if any(not 0 <= p < i for p in st.parents) or len(set(st.parents)) != len(st.parents):
                raise FitError(f"job {self.name!r} stage {st.name!r}: parents must be distinct earlier stages")
            for p, e in zip(st.parents, st.edges):
                if e is Edge.ONE_TO_ONE and self.stages[p].tasks != st.tasks:
                    raise FitError(f"job {self.name!r} stage {st.name!r}: one_to_one edge from "
                                   f"{self.stages[p].name!r} needs equal task counts")
            if not st.failure_probs or any(not 0.0 <= f <= 1.0 for f in st.failure_probs):
                raise FitError(f"job {self.name!r} stage {st.name!r}: failure probabilities must be in [0, 1]")

    @property
    def tasks(self) -> int:
        return sum(s.tasks for s in self.stages)

    def to_dict(self) -> dict[str, Any]:
        """The fitted-model JSON of docs/jockey.md (parents by name)."""
        return {"name": self.name, "stages": [{
            "name": s.name, "tasks": s.tasks, "parents": [self.stages[p].name for p in s.parents],
            "edges": [e.value for e in s.edges], "runtime_quantiles_s": s.runtime.values.tolist(),
            "init_quantiles_s": s.init.values.tolist(), "failure_probs": list(s.failure_probs),
            "queue_s": s.queue_s} for s in self.stages]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "JobModel":
        try:
            raw = list(data["stages"])
            index = {str(s["name"]): i for i, s in enumerate(raw)}
            stages = []
            for s in raw:
                parents = tuple(index[str(p)] for p in s.get("parents", []))
                edges = tuple(Edge(e) for e in s.get("edges", [Edge.BARRIER.value] * len(parents)))
                stages.append(StageModel(str(s["name"]), int(s["tasks"]), Quantiles(np.asarray(s["runtime_quantiles_s"])),
                                         Quantiles(np.asarray(s.get("init_quantiles_s", [0.0, 0.0]))), parents, edges,
                                         tuple(float(f) for f in s.get("failure_probs", [0.0])),
                                         float(s.get("queue_s", 0.0))))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, FitError):
                raise
            raise FitError(f"job model JSON: {type(exc).__name__}: {exc}") from None
        return cls(str(data.get("name", "")), tuple(stages))


# --- prior runs: the fit's input -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StageRecord:
    """A stage as it ran: `edges[i]` is the kind of the edge from `parents[i]` (default barrier)."""

    name: str
    tasks: int
    parents: tuple[str, ...] = ()
    edges: tuple[Edge, ...] = ()


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One task attempt: it held a container from `start_s` to `end_s`; the first `init_s` of
    that was initialization. `ready_s` is when its inputs were available (None: unknown)."""

    stage: str
    task: int
    attempt: int
    start_s: float
    end_s: float
    init_s: float = 0.0
    failed: bool = False
    ready_s: float | None = None


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    stages: tuple[StageRecord, ...]
    attempts: tuple[AttemptRecord, ...]


def fit_job_model(runs: Sequence[RunRecord], *, name: str = "", points: int = 101,
                  min_stage_samples: int = 30) -> JobModel:
    """The job model from prior runs (module docstring: what is taken from where)."""
    if not runs:
        raise FitError("no prior runs")
    latest = runs[-1]
    order = _topological(latest)
    index = {latest.stages[o].name: i for i, o in enumerate(order)}
    runtime: dict[str, list[float]] = {n: [] for n in index}
    init: dict[str, list[float]] = {n: [] for n in index}
    queue: dict[str, list[float]] = {n: [] for n in index}
    first, retry = ({n: [0, 0] for n in index} for _ in range(2))  # [attempts, failures]
    for run in runs:
        known = {s.name for s in run.stages}
        for a in run.attempts:
            if a.stage not in known:
                raise FitError(f"run {run.run_id}: attempt of unknown stage {a.stage!r}")
            held = a.end_s - a.start_s
            if not (math.isfinite(held) and held >= 0 and 0 <= a.init_s <= held + 1e-9 and a.attempt >= 0):
                raise FitError(f"run {run.run_id} stage {a.stage!r} task {a.task} attempt {a.attempt}: "
                               f"need start <= end, 0 <= init <= end - start")
            if a.stage not in index:
                continue  # a stage the latest run no longer has
            init[a.stage].append(a.init_s)
            if a.ready_s is not None:
                queue[a.stage].append(max(0.0, a.start_s - a.ready_s))
            count = first[a.stage] if a.attempt == 0 else retry[a.stage]
            count[0] += 1
            count[1] += int(a.failed)
            if not a.failed:
                runtime[a.stage].append(held - a.init_s)
    # small stages borrow the job's shape: runtime / stage median pooled over every stage
    ratios = np.concatenate([np.asarray(v) / np.median(v) for v in runtime.values() if v and np.median(v) > 0] or [np.ones(1)])
    job_shape = Quantiles.from_samples(ratios, points).values
    job_first = sum(c[1] for c in first.values()) / max(1, sum(c[0] for c in first.values()))
    n_retry = sum(c[0] for c in retry.values())
    job_retry = sum(c[1] for c in retry.values()) / n_retry if n_retry else job_first
    stages = []
    for o in order:
        rec = latest.stages[o]
        samples = runtime[rec.name]
        if not samples:
            raise FitError(f"stage {rec.name!r}: no successful attempt in any prior run")
        if len(samples) >= min_stage_samples:
            rt = Quantiles.from_samples(samples, points)
        else:
            rt = Quantiles(float(np.median(samples)) * job_shape)
        f_att, f_fail = first[rec.name]
        r_att, r_fail = retry[rec.name]
        p_first = f_fail / f_att if f_att >= min_stage_samples else job_first
        p_retry = r_fail / r_att if r_att >= min_stage_samples else job_retry
        edges = rec.edges or tuple(Edge.BARRIER for _ in rec.parents)
        stages.append(StageModel(rec.name, rec.tasks, rt, Quantiles.from_samples(init[rec.name], points),
                                 tuple(index[p] for p in rec.parents), tuple(Edge(e) for e in edges),
                                 (p_first, p_retry), float(np.mean(queue[rec.name])) if queue[rec.name] else 0.0))
    return JobModel(name or latest.run_id, tuple(stages))


def _topological(run: RunRecord) -> list[int]:
    """Stage indexes of `run` with parents first."""
    names = {s.name: i for i, s in enumerate(run.stages)}
    if len(names) != len(run.stages):
        raise FitError(f"run {run.run_id}: a stage name repeats")
    for s in run.stages:
        if s.tasks < 1:
            raise FitError(f"run {run.run_id} stage {s.name!r}: tasks must be >= 1")
        missing = [p for p in s.parents if p not in names]
        if missing:
            raise FitError(f"run {run.run_id} stage {s.name!r}: unknown parents {missing}")
        if s.edges and len(s.edges) != len(s.parents):
            raise FitError(f"run {run.run_id} stage {s.name!r}: one edge kind per parent")
    order = TopologicalSorter({i: [names[p] for p in s.parents] for i, s in enumerate(run.stages)})
    try:
        return list(order.static_order())
    except CycleError:
        raise FitError(f"run {run.run_id}: the stage graph has a cycle") from None


# --- the JSON format of prior runs (docs/jockey.md) -----------------------------------------


def runs_from_dict(data: Mapping[str, Any]) -> list[RunRecord]:
    """`{"job": name, "runs": [{"run_id", "stages": [...], "attempts": [...]}]}` -> records."""
    try:
        runs = []
        for r in data["runs"]:
            stages = tuple(StageRecord(str(s["name"]), int(s["tasks"]), tuple(str(p) for p in s.get("parents", [])),
                                       tuple(Edge(e) for e in s.get("edges", []))) for s in r["stages"])
            attempts = tuple(AttemptRecord(str(a["stage"]), int(a["task"]), int(a.get("attempt", 0)),
                                           float(a["start_s"]), float(a["end_s"]), float(a.get("init_s", 0.0)),
                                           bool(a.get("failed", False)),
                                           None if a.get("ready_s") is None else float(a["ready_s"]))
                             for a in r["attempts"])
            runs.append(RunRecord(str(r["run_id"]), stages, attempts))
    except (KeyError, TypeError, ValueError) as exc:
        raise FitError(f"runs JSON: {type(exc).__name__}: {exc}") from None
    return runs


def runs_to_dict(job: str, runs: Sequence[RunRecord]) -> dict[str, Any]:
    return {"job": job, "runs": [{
        "run_id": r.run_id,
        "stages": [{"name": s.name, "tasks": s.tasks, "parents": list(s.parents), "edges": [e.value for e in s.edges]}
                   for s in r.stages],
        "attempts": [{"stage": a.stage, "task": a.task, "attempt": a.attempt, "ready_s": a.ready_s,
                      "start_s": a.start_s, "end_s": a.end_s, "init_s": a.init_s, "failed": a.failed}
                     for a in r.attempts]} for r in runs]}


def load_runs_json(path: str | Path) -> tuple[str, list[RunRecord]]:
    """Read a prior-runs JSON file; returns (job name, runs). Bad input raises `FitError`."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise FitError(f"{p}: {exc}") from None
    if not isinstance(data, dict):
        raise FitError(f"{p}: expected a JSON object with 'runs'")
    try:
        return str(data.get("job", p.stem)), runs_from_dict(data)
    except FitError as exc:
        raise FitError(f"{p}: {exc}") from None

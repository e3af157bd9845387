"""Batch jobs as DAGs of stages: the value types every job loader and generator produces.

A job is a DAG of stages (Tez/Spark vertices, MapReduce map and reduce phases, Alibaba DAG
tasks); a stage is a set of tasks that each run in one container of the stage's size for a
known duration. A stage becomes runnable when all its parent stages have finished (a
barrier, as in Tez's default edge scheduling). `name` identifies a recurring job: every run
of the same recurring job shares it, so a history-based policy can look up "its last run"
(OSDI'16 Algorithm 1, line 3); ad-hoc jobs have a unique name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class StageSpec:
    """One stage: `durations_s[i]` is task i's run time (s) when it is not killed."""

    name: str
    durations_s: np.ndarray
    vcores: int = 1
    memory_mb: int = 1024
    parents: tuple[int, ...] = ()

    @property
    def tasks(self) -> int:
        return int(self.durations_s.shape[0])


@dataclass(frozen=True, slots=True, eq=False)
class JobSpec:
    """A job submitted at `submit_s` (simulated seconds from the start)."""

    job_id: str
    submit_s: float
    stages: tuple[StageSpec, ...]
    name: str = ""
    period_s: float | None = None
    source: str = ""
    meta: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.stages:
            raise ValueError(f"job {self.job_id} has no stages")
        for i, st in enumerate(self.stages):  # plain loops: a 7-day 10k-server run checks ~1 M stages
            if st.durations_s.shape[0] < 1:
                raise ValueError(f"job {self.job_id} stage {st.name} has no tasks")
            ps = st.parents
            if ps and (max(ps) >= i or min(ps) < 0):
                raise ValueError(f"job {self.job_id} stage {st.name}: parents must be earlier stages (topological order)")
            if st.vcores < 1 or st.memory_mb < 1:
                raise ValueError(f"job {self.job_id} stage {st.name}: containers need >= 1 vcore and >= 1 MB")

    @property
    def tasks(self) -> int:
        return sum(st.tasks for st in self.stages)

    @property
    def recurring(self) -> bool:
        return self.period_s is not None

    def task_seconds(self, cores_per_vcore: float = 1.0) -> float:
        """CPU core-seconds the job needs if nothing is killed."""
        return float(sum(float(st.durations_s.sum()) * st.vcores * cores_per_vcore for st in self.stages))

    def critical_path_s(self) -> float:
        """Longest chain of stages, each taking its longest task (the job's run time with unlimited containers)."""
        longest = [0.0] * len(self.stages)
        for i, st in enumerate(self.stages):
            longest[i] = float(st.durations_s.max()) + max((longest[p] for p in st.parents), default=0.0)
        return max(longest)

    def max_concurrent_tasks(self) -> int:
        """Largest number of tasks at one DAG depth (a breadth-first traversal, OSDI'16 Alg. 1 line 4)."""
        depth = [0] * len(self.stages)
        for i, st in enumerate(self.stages):
            depth[i] = 1 + max((depth[p] for p in st.parents), default=-1)
        per_level: dict[int, int] = {}
        for d, st in zip(depth, self.stages):
            per_level[d] = per_level.get(d, 0) + st.tasks
        return max(per_level.values())


def topological_order(parents: Sequence[Iterable[int]]) -> list[int]:
    """Kahn's algorithm over stage indexes; raises on a cycle. Ties keep the input order."""
    n = len(parents)
    pars = [set(p) for p in parents]
    children: list[list[int]] = [[] for _ in range(n)]
    for i, ps in enumerate(pars):
        for p in ps:
            if not 0 <= p < n:
                raise ValueError(f"stage {i} has unknown parent {p}")
            children[p].append(i)
    indeg = [len(ps) for ps in pars]
    ready = [i for i in range(n) if indeg[i] == 0]
    out: list[int] = []
    while ready:
        ready.sort()
        i = ready.pop(0)
        out.append(i)
        for c in children[i]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if len(out) != n:
        raise ValueError("the stage graph has a cycle")
    return out


def build_job(job_id: str, submit_s: float, stages: Sequence[tuple[str, np.ndarray, int, int, Sequence[int]]],
              *, name: str = "", period_s: float | None = None, source: str = "",
              meta: dict[str, str] | None = None) -> JobSpec:
    """Make a `JobSpec` from stages in any order: `(name, durations, vcores, memory_mb, parent indexes)`.

    Stages are re-ordered topologically and parent indexes remapped, so loaders can pass the
    trace's own order.
    """
    order = topological_order([s[4] for s in stages])
    new_index = {old: new for new, old in enumerate(order)}
    specs = []
    for old in order:
        sname, durations, vcores, mem, parents = stages[old]
        specs.append(StageSpec(sname, np.asarray(durations, dtype=np.float64), int(vcores), int(mem),
                               tuple(sorted(new_index[p] for p in parents))))
    return JobSpec(job_id, float(submit_s), tuple(specs), name=name or job_id, period_s=period_s, source=source,
                   meta=dict(meta or {}))


def coarsen(durations: np.ndarray, max_tasks: int | None) -> np.ndarray:
    """Merge a stage's tasks into at most `max_tasks` containers, conserving the total work.

    Each resulting container runs ceil(n / max_tasks) consecutive tasks one after another,
    so its duration is their sum (the last one may hold fewer). Used only when a trace's
    instance counts exceed what a run can afford; loaders say when it happened.
    """
    n = durations.shape[0]
    if max_tasks is None or n <= max_tasks:
        return durations
    fold = math.ceil(n / max_tasks)
    pad = fold * max_tasks - n
    padded = np.concatenate([durations, np.zeros(pad)]) if pad else durations
    merged = padded.reshape(max_tasks, fold).sum(axis=1)
    return merged[merged > 0]


def scale_durations(jobs: Sequence[JobSpec], factor: float) -> list[JobSpec]:
    """The same jobs with every task duration multiplied by `factor` (> 0)."""
    if factor <= 0:
        raise ValueError(f"duration factor must be positive, got {factor}")
    out = []
    for j in jobs:  # the same structure as the checked input: not checked again
        stages = tuple(StageSpec(s.name, s.durations_s * factor, s.vcores, s.memory_mb, s.parents) for s in j.stages)
        job = object.__new__(JobSpec)
        for name, value in (("job_id", j.job_id), ("submit_s", j.submit_s), ("stages", stages), ("name", j.name),
                            ("period_s", j.period_s), ("source", j.source), ("meta", j.meta)):
            object.__setattr__(job, name, value)
        out.append(job)
    return out

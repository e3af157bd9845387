"""Algorithm 1, class selection (OSDI'16 §4.1) — pure.

```
 1: Given: Classes C, Headroom(type,c), Ranking Weights W
 2: function SCHEDULE(Batch job J)
 3:   J.type ← Length (short, medium, or long) from its last run
 4:   J.req ← Max amount of concurrent resources from DAG
 5:   for each c ∈ C do
 6:     c.weightedroom ← Headroom(J.type,c) × W[J.type,c.class]
 7:   end for
 8:   F ← {∀c ∈ C | Headroom(J.type,c) ≥ J.req}
 9:   if F ≠ ∅ then
10:     Pick 1 class c ∈ F probabilistically ∝ c.weightedroom
11:     return {c}
12:   else if Job J can fit in multiple classes combined then
13:     Pick {c0, ..., ck} ⊆ C probabilistically ∝ c.weightedroom
14:     return {c0, ..., ck}
15:   else
16:     Do not pick classes
17:     return ∅
```

Headroom (§4.1): short: 1 − current average CPU utilization of the class's servers; medium:
1 − max(average, current); long: 1 − max(peak, current). Line 8 compares headroom with J.req,
so headroom must be in the job's units: here it is measured in CONTAINERS of the job's size —
headroom fraction × the class's capacity in vcores, minus the class's reserve (the guard will
not offer it) and what batch containers already hold there, divided by the container's vcores
(and bounded by free memory when the caller knows it). `weightedroom` (line 6) is that
container count × W[type][pattern]; a class whose weighted room is 0 is never picked.

Ranking weights (higher = preferred), §4.1: long: constant > periodic > unpredictable;
medium: periodic > constant > unpredictable; short: unpredictable > periodic > constant.
Defaults 3 / 2 / 1; the table is configuration (harvesting.weights).

Lines 12–13, "several classes": classes are drawn without replacement, each draw ∝ weighted
room among those left, until their rooms add up to J.req; each gets min(room, still needed)
containers. The randomness is a `numpy.random.Generator` passed in (seeded → deterministic).
Classes are considered in class-id order so the input order never changes a seeded answer.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

import numpy as np

from harvester.domain import Resources
from harvester.models.job_history import JobHistoryModel, JobType, LengthThresholds, Stage, classify_job, required_containers
from harvester.models.patterns import Pattern

Weights = Mapping[JobType, Mapping[Pattern, float]]

DEFAULT_WEIGHTS: Weights = MappingProxyType({
    JobType.LONG: MappingProxyType({Pattern.CONSTANT: 3.0, Pattern.PERIODIC: 2.0, Pattern.UNPREDICTABLE: 1.0}),
    JobType.MEDIUM: MappingProxyType({Pattern.PERIODIC: 3.0, Pattern.CONSTANT: 2.0, Pattern.UNPREDICTABLE: 1.0}),
    JobType.SHORT: MappingProxyType({Pattern.UNPREDICTABLE: 3.0, Pattern.PERIODIC: 2.0, Pattern.CONSTANT: 1.0}),
})


@dataclass(frozen=True, slots=True)
class ClassState:
    """A class as Algorithm 1 sees it now: model tags + current utilization and capacity.

    `current` is the class's current average primary CPU utilization (fraction); `capacity`
    the NodeManagers' configured resources summed over the class's nodes; `allocated` what
    YARN containers hold there now; `reserve_fraction` the guard's reserve for the class;
    `memory_free_mb` the free harvestable memory when known (None: memory not limiting).
    """

    class_id: str
    pattern: Pattern
    average: float
    peak: float
    current: float
    capacity: Resources
    allocated: Resources = Resources(0, 0)
    reserve_fraction: float = 0.0
    memory_free_mb: float | None = None
    nodes: int = 0


@dataclass(frozen=True, slots=True)
class JobDemand:
    """Lines 3–4: the job's type and maximum concurrent containers, with the reasons."""

    job_name: str
    job_type: JobType
    required_containers: int
    container: Resources
    reason: str


@dataclass(frozen=True, slots=True)
class ClassChoice:
    class_id: str
    pattern: Pattern
    average: float
    peak: float
    current: float
    headroom: float               # fraction of the class's capacity (§4.1 definition)
    headroom_containers: int      # Headroom(type, c) in containers of the job's size
    weighted_headroom: float      # line 6
    containers: int               # how many of the job's containers go to this class


@dataclass(frozen=True, slots=True)
class Selection:
    job_type: JobType
    required_containers: int
    choices: tuple[ClassChoice, ...]
    reason: str
    model_version: int = 0


def headroom_fraction(job_type: JobType, c: ClassState) -> float:
    """§4.1 headroom as a fraction of the class's capacity, clamped to [0, 1]."""
    if job_type is JobType.SHORT:
        used = c.current
    elif job_type is JobType.MEDIUM:
        used = max(c.average, c.current)
    else:
        used = max(c.peak, c.current)
    return min(1.0, max(0.0, 1.0 - used))


def headroom_containers(job_type: JobType, c: ClassState, container: Resources) -> int:
    """Headroom(type, c) in containers: (h − reserve) × capacity − allocated, per container."""
    if container.vcores <= 0 or container.memory_mb <= 0:
        raise ValueError(f"container size must be positive, got {container.memory_mb} MB / {container.vcores} vcores")
    h = headroom_fraction(job_type, c)
    free_vcores = (h - c.reserve_fraction) * c.capacity.vcores - c.allocated.vcores
    n = math.floor(free_vcores / container.vcores + 1e-9)
    if c.memory_free_mb is not None:
        n = min(n, math.floor(c.memory_free_mb / container.memory_mb + 1e-9))
    return max(0, n)


def characterize(
    job_name: str,
    *,
    history: JobHistoryModel,
    fallback_thresholds: LengthThresholds,
    container: Resources,
    last_run_s: float | None = None,
    max_concurrent: int = 0,
    dag: Sequence[Stage] = (),
) -> JobDemand:
    """Lines 3–4 (models/job_history.py). Raises `DemandError` when J.req cannot be known."""
    if container.vcores <= 0 or container.memory_mb <= 0:
        raise ValueError(f"container size must be positive, got {container.memory_mb} MB / {container.vcores} vcores")
    if last_run_s is not None and (last_run_s < 0 or not math.isfinite(last_run_s)):
        raise ValueError(f"last_run_seconds must be a finite number >= 0, got {last_run_s}")
    job_type, type_why = classify_job(history, job_name, fallback=fallback_thresholds, last_run_s=last_run_s)
    req, req_why = required_containers(history, job_name, override=max_concurrent, dag=dag)
    return JobDemand(job_name, job_type, req, container, f"{type_why}; {req_why}")


@dataclass(frozen=True, eq=False)
class ClassTable:
    """Classes sorted by id with their numbers in flat tuples: built once when the classes'
    current state is published (each guard period), read by every SelectClasses, so a request
    does no sorting and no attribute lookups (~35 µs for 100 classes, bench/harvesting.py)."""

    classes: tuple[ClassState, ...]
    pattern: tuple[Pattern, ...]
    average: tuple[float, ...]
    peak: tuple[float, ...]
    current: tuple[float, ...]
    capacity_vcores: tuple[float, ...]
    allocated_vcores: tuple[float, ...]
    reserve: tuple[float, ...]
    memory_free_mb: tuple[float | None, ...]

    @staticmethod
    def of(classes: Sequence[ClassState]) -> ClassTable:
        o = tuple(sorted(classes, key=lambda c: c.class_id))
        return ClassTable(
            o, tuple(c.pattern for c in o), tuple(c.average for c in o), tuple(c.peak for c in o),
            tuple(c.current for c in o), tuple(float(c.capacity.vcores) for c in o),
            tuple(float(c.allocated.vcores) for c in o), tuple(c.reserve_fraction for c in o),
            tuple(c.memory_free_mb for c in o),
        )


def _rooms(job: JobDemand, t: ClassTable) -> tuple[list[float], list[int]]:
    """`headroom_fraction` and `headroom_containers` over a whole table (same formulas)."""
    if job.job_type is JobType.SHORT:
        used = t.current
    elif job.job_type is JobType.MEDIUM:
        used = [a if a > c else c for a, c in zip(t.average, t.current)]
    else:
        used = [p if p > c else c for p, c in zip(t.peak, t.current)]
    fracs = [0.0 if u >= 1.0 else (1.0 if u <= 0.0 else 1.0 - u) for u in used]
    vc, mb = job.container.vcores, job.container.memory_mb
    rooms = []
    for h, r, cap, alloc, mem in zip(fracs, t.reserve, t.capacity_vcores, t.allocated_vcores, t.memory_free_mb):
        n = math.floor(((h - r) * cap - alloc) / vc + 1e-9)
        if mem is not None:
            n = min(n, math.floor(mem / mb + 1e-9))
        rooms.append(n if n > 0 else 0)
    return fracs, rooms


def select_classes(
    job: JobDemand,
    classes: Sequence[ClassState] | ClassTable,
    rng: np.random.Generator,
    *,
    weights: Weights = DEFAULT_WEIGHTS,
    model_version: int = 0,
) -> Selection:
    """Lines 5–18 of Algorithm 1 for one job; returns the choice and its reason."""
    if job.required_containers <= 0:
        raise ValueError(f"a job needs at least one container, got {job.required_containers}")
    if job.container.vcores <= 0 or job.container.memory_mb <= 0:
        raise ValueError(f"container size must be positive, got {job.container}")
    table = classes if isinstance(classes, ClassTable) else ClassTable.of(classes)
    ordered = table.classes
    w_type = weights[job.job_type]
    fracs, rooms = _rooms(job, table)
    weighted = [room * float(w_type.get(p, 0.0)) for room, p in zip(rooms, table.pattern)]  # line 6
    req = job.required_containers
    head = f"{job.reason}; need {req} × <{job.container.memory_mb} MB, {job.container.vcores} vc>"

    def choice(i: int, n: int) -> ClassChoice:
        c = ordered[i]
        return ClassChoice(c.class_id, c.pattern, c.average, c.peak, c.current, fracs[i], rooms[i], weighted[i], n)

    fits = [i for i, (room, w) in enumerate(zip(rooms, weighted)) if room >= req and w > 0]  # line 8
    if fits:  # lines 9–11
        i, p = _draw(fits, weighted, rng)
        why = (f"{head}; {len(fits)}/{len(ordered)} classes fit alone (line 8); picked {ordered[i].class_id} "
               f"with p={p:.2f} (room {rooms[i]} × weight {w_type.get(ordered[i].pattern, 0.0):g}) (line 10)")
        return Selection(job.job_type, req, (choice(i, req),), why, model_version)
    pool = [i for i, w in enumerate(weighted) if w > 0]
    combined = sum(rooms[i] for i in pool)
    if combined >= req:  # lines 12–14
        picked: list[ClassChoice] = []
        remaining = req
        while remaining > 0:
            i, _ = _draw(pool, weighted, rng)
            pool.remove(i)
            n = min(rooms[i], remaining)
            picked.append(choice(i, n))
            remaining -= n
        why = (f"{head}; no class fits alone, {combined} containers of room in {len(pool) + len(picked)} classes "
               f"combined (line 12); picked {', '.join(f'{c.class_id}×{c.containers}' for c in picked)} (line 13)")
        return Selection(job.job_type, req, tuple(picked), why, model_version)
    why = f"{head}; only {combined} containers of room in all {len(ordered)} classes: none picked (line 16)"
    return Selection(job.job_type, req, (), why, model_version)


def _draw(candidates: list[int], weighted: list[float], rng: np.random.Generator) -> tuple[int, float]:
    """One index from `candidates` with probability ∝ weighted[i]; returns it and its p."""
    cum = list(itertools.accumulate(weighted[i] for i in candidates))
    total = cum[-1]
    k = min(bisect.bisect_right(cum, rng.random() * total), len(candidates) - 1)
    i = candidates[k]
    return i, weighted[i] / total

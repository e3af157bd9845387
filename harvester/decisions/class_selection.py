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

import math
from dataclasses import dataclass, fields
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


#: Pattern → column of the weight table (`ClassTable.pattern_code`).
PATTERN_CODE = {p: k for k, p in enumerate(Pattern)}


@dataclass(frozen=True, eq=False)
class ClassTable:
    """Classes sorted by id with their numbers in arrays: built once when the classes' current
    state is published (each guard period), read by every SelectClasses, so a request does no
    sorting, no attribute lookup and no Python loop over the classes (issue 29: 1,000 classes).
    What depends on the job's type alone — the headroom fraction and the vcores left once the
    reserve and the batch allocation are taken — is computed here too, once per type."""

    classes: tuple[ClassState, ...]
    pattern_code: np.ndarray     # PATTERN_CODE of each class's pattern
    average: np.ndarray
    peak: np.ndarray
    current: np.ndarray
    capacity_vcores: np.ndarray
    allocated_vcores: np.ndarray
    reserve: np.ndarray
    memory_free_mb: np.ndarray   # NaN: memory not limiting (None)
    memory_limits: bool          # some class knows its free memory
    fraction: Mapping[JobType, np.ndarray]      # headroom_fraction per class, by job type
    free_vcores: Mapping[JobType, np.ndarray]   # (fraction − reserve) × capacity − allocated

    @staticmethod
    def of(classes: Sequence[ClassState]) -> ClassTable:
        o = tuple(sorted(classes, key=lambda c: c.class_id))

        def col(values: Sequence[object], dtype: type = np.float64) -> np.ndarray:
            out = np.array(values, dtype).reshape(len(o))
            out.flags.writeable = False
            return out

        average, peak, current = col([c.average for c in o]), col([c.peak for c in o]), col([c.current for c in o])
        capacity, allocated = col([c.capacity.vcores for c in o]), col([c.allocated.vcores for c in o])
        reserve = col([c.reserve_fraction for c in o])
        memory = col([np.nan if c.memory_free_mb is None else c.memory_free_mb for c in o])
        used = {JobType.SHORT: current, JobType.MEDIUM: np.where(average > current, average, current),
                JobType.LONG: np.where(peak > current, peak, current)}
        fraction = {t: np.where(u >= 1.0, 0.0, np.where(u <= 0.0, 1.0, 1.0 - u)) for t, u in used.items()}
        free = {t: (f - reserve) * capacity - allocated for t, f in fraction.items()}
        for a in (*fraction.values(), *free.values()):
            a.flags.writeable = False
        return ClassTable(o, col([PATTERN_CODE[c.pattern] for c in o], np.int64), average, peak, current, capacity,
                          allocated, reserve, memory, bool(np.any(~np.isnan(memory))),
                          MappingProxyType(fraction), MappingProxyType(free))

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickled as its columns (the advice process's mirror, advice/advice_process.py): no rebuild there."""
        values = tuple(dict(v) if isinstance(v, MappingProxyType) else v for v in (getattr(self, f.name) for f in fields(self)))
        return _class_table, values


def _class_table(*values: object) -> ClassTable:
    """Unpickles a `ClassTable`: read-only columns and type maps, as `ClassTable.of` builds them."""
    out = []
    for v in values:
        if isinstance(v, dict):
            for a in v.values():
                a.flags.writeable = False
            v = MappingProxyType(v)
        elif isinstance(v, np.ndarray):
            v.flags.writeable = False
        out.append(v)
    return ClassTable(*out)  # type: ignore[arg-type]


def _rooms(job: JobDemand, t: ClassTable) -> tuple[np.ndarray, np.ndarray]:
    """`headroom_fraction` and `headroom_containers` over a whole table (same formulas, elementwise)."""
    n = np.floor(t.free_vcores[job.job_type] / job.container.vcores + 1e-9)
    if t.memory_limits:
        with np.errstate(invalid="ignore"):
            n = np.where(np.isnan(t.memory_free_mb), n, np.minimum(n, np.floor(t.memory_free_mb / job.container.memory_mb + 1e-9)))
    return t.fraction[job.job_type], np.maximum(n, 0).astype(np.int64)


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
    w_pattern = np.array([float(w_type.get(p, 0.0)) for p in Pattern])
    fracs, rooms = _rooms(job, table)
    weighted = rooms * w_pattern[table.pattern_code]  # line 6
    req = job.required_containers
    head = f"{job.reason}; need {req} × <{job.container.memory_mb} MB, {job.container.vcores} vc>"

    def choice(i: int, n: int) -> ClassChoice:
        c = ordered[i]
        return ClassChoice(c.class_id, c.pattern, c.average, c.peak, c.current, float(fracs[i]), int(rooms[i]),
                           float(weighted[i]), n)

    fits = np.flatnonzero((rooms >= req) & (weighted > 0))  # line 8
    if len(fits):  # lines 9–11
        i, p = _draw(fits, weighted, rng)
        why = (f"{head}; {len(fits)}/{len(ordered)} classes fit alone (line 8); picked {ordered[i].class_id} "
               f"with p={p:.2f} (room {rooms[i]} × weight {w_type.get(ordered[i].pattern, 0.0):g}) (line 10)")
        return Selection(job.job_type, req, (choice(i, req),), why, model_version)
    pool = np.flatnonzero(weighted > 0)
    combined = int(rooms[pool].sum())
    if combined >= req:  # lines 12–14
        picked: list[ClassChoice] = []
        remaining = req
        while remaining > 0:
            i, _ = _draw(pool, weighted, rng)
            pool = pool[pool != i]
            n = min(int(rooms[i]), remaining)
            picked.append(choice(i, n))
            remaining -= n
        why = (f"{head}; no class fits alone, {combined} containers of room in {len(pool) + len(picked)} classes "
               f"combined (line 12); picked {', '.join(f'{c.class_id}×{c.containers}' for c in picked)} (line 13)")
        return Selection(job.job_type, req, tuple(picked), why, model_version)
    why = f"{head}; only {combined} containers of room in all {len(ordered)} classes: none picked (line 16)"
    return Selection(job.job_type, req, (), why, model_version)


def _draw(candidates: np.ndarray, weighted: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
    """One index from `candidates` with probability ∝ weighted[i]; returns it and its p (the
    cumulative sum runs in candidate order, as a sequential sum would)."""
    cum = np.cumsum(weighted[candidates])
    total = float(cum[-1])
    k = min(int(np.searchsorted(cum, rng.random() * total, side="right")), len(candidates) - 1)
    i = int(candidates[k])
    return i, float(weighted[i]) / total

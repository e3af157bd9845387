"""Recurring jobs for the Morpheus evaluation, derived from real traces.

No public trace labels recurring jobs (../shared/traces/README.md); two samples show them by
structure. Method (stated in docs/evaluation/morpheus.md), per period P:
- a job's *shape*: Alibaba 2018, its DAG (the task names, which encode every dependency,
  `R13_2_3_12`); Alibaba 2017 (no dependencies), the loader's request signature (per task its
  instance count's order of magnitude, cpus and memory: sim/traces/identity.py);
- runs of one shape are split into *slots* by their time within the period (sorted, a new slot
  where consecutive runs are more than `slot_gap_s` apart);
- a slot is a recurring job when it has a run in at least `min_days` distinct periods; its
  run of a period is the first of that period in the slot. Each run keeps its own tasks
  (instance counts and durations of that run: real run-to-run variation).
`WORKLOADS`: the Alibaba 2018 DAG sample with P = 1 day (7-8 days), and the Alibaba 2017 batch
tasks with P = 1 hour (the ~17-h trace is too short for days; 41 % of its recurring gaps of
30 min or more are whole hours, docs/traces.md). Periods are counted from the loader's origin
(the first job's start), the trace's own clock.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from harvester.domain import Resources
from harvester.sim.traces import load_jobs
from harvester.sim.workload import JobSpec

TRACE = "alibaba-2018-batch-dags/batch_task_selected_2119_DAG_jobs.csv.gz"
TRACE_2017 = "alibaba-2017-batch-task/batch_task.csv.gz"
DAY_S = 86_400.0
HOUR_S = 3_600.0


@dataclass(frozen=True, eq=False)
class RecurringJob:
    """One daily job: `runs[day]` is that day's trace run (submit_s in trace seconds)."""

    name: str
    shape: tuple[str, ...]
    runs: dict[int, JobSpec]        # period index → that period's run
    container: Resources
    period_s: float = DAY_S

    @property
    def days(self) -> list[int]:
        return sorted(self.runs)


def shape_of(spec: JobSpec) -> tuple[str, ...]:
    return tuple(sorted(st.name for st in spec.stages))


def container_of(specs: Sequence[JobSpec]) -> Resources:
    """One container size per job (the event simulator's tokens are all alike): its largest task."""
    return Resources(max(st.memory_mb for s in specs for st in s.stages), max(st.vcores for s in specs for st in s.stages))


def signature_of(spec: JobSpec) -> tuple[str, ...]:
    """The loader's recurring identity (sim/traces/identity.py), for traces without a DAG."""
    return (spec.name,)


def recurring_jobs(specs: Sequence[JobSpec], *, min_days: int = 6, slot_gap_s: float = 3600.0,
                   min_stages: int = 10, max_tasks: int = 6000, period_s: float = DAY_S,
                   shape: Callable[[JobSpec], tuple[str, ...]] = shape_of) -> list[RecurringJob]:
    """Recurring jobs of period `period_s` among `specs` (module docstring), named
    `<first job>@<hh:mm>` (daily) or `<first job>@xx:<mm>` (hourly), the trace's own job id
    (`meta["trace_job"]`) where the loader keeps one. Runs with more than `max_tasks` tasks are
    left out (simulation cost); a slot must still have `min_days` periods without them."""
    by_shape: dict[tuple[str, ...], list[JobSpec]] = defaultdict(list)
    for s in specs:
        if len(s.stages) >= min_stages:
            by_shape[shape(s)].append(s)
    out: list[RecurringJob] = []
    for key, group in by_shape.items():
        group.sort(key=lambda s: s.submit_s % period_s)
        slots: list[list[JobSpec]] = [[group[0]]]
        for prev, cur in zip(group, group[1:]):
            if cur.submit_s % period_s - prev.submit_s % period_s > slot_gap_s:
                slots.append([])
            slots[-1].append(cur)
        for slot in slots:
            runs: dict[int, JobSpec] = {}
            for s in sorted(slot, key=lambda s: s.submit_s):
                if s.tasks <= max_tasks:
                    runs.setdefault(int(s.submit_s // period_s), s)
            if len(runs) < min_days:
                continue
            first = runs[min(runs)]
            phase = sorted(s.submit_s % period_s for s in runs.values())[len(runs) // 2]
            hh = f"{int(phase // 3600):02d}" if period_s > HOUR_S else "xx"
            name = f"{first.meta.get('trace_job', first.name)}@{hh}:{int(phase % 3600 // 60):02d}"
            out.append(RecurringJob(name, key, runs, container_of(list(runs.values())), period_s))
    return sorted(out, key=lambda j: j.name)


@dataclass(frozen=True)
class Workload:
    """A staged trace and how its recurring jobs are found (module docstring)."""

    trace: str                     # path under the traces folder
    loader: str                    # sim/traces format name
    period_s: float
    min_days: int                  # periods with a run for a slot to count
    slot_gap_s: float
    min_stages: int
    shape: Callable[[JobSpec], tuple[str, ...]]
    cite: str


WORKLOADS: dict[str, Workload] = {
    "alibaba-2018": Workload(TRACE, "alibaba-2018-dags", DAY_S, 6, 3600.0, 10, shape_of,
                             "Alibaba cluster-trace-v2018 batch_task (2,119-DAG sample)"),
    "alibaba-2017": Workload(TRACE_2017, "alibaba-2017-batch", HOUR_S, 10, 300.0, 2, signature_of,
                             "Alibaba cluster-trace-v2017 batch_task"),
}


def load_recurring(traces_dir: str | Path, workload: str = "alibaba-2018", **options: object) -> list[RecurringJob]:
    """The recurring jobs of a staged workload (`WORKLOADS`; TraceError if its file is missing);
    `options` override `recurring_jobs`' (e.g. min_days)."""
    w = WORKLOADS[workload]
    kw: dict[str, object] = {"min_days": w.min_days, "slot_gap_s": w.slot_gap_s, "min_stages": w.min_stages,
                             "period_s": w.period_s, "shape": w.shape, **options}
    return recurring_jobs(load_jobs(w.loader, Path(traces_dir) / w.trace), **kw)  # type: ignore[arg-type]

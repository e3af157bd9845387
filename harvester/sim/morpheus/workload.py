"""Recurring jobs for the Morpheus evaluation, derived from the Alibaba 2018 DAG trace.

No public trace labels recurring jobs (../shared/traces/README.md); the Alibaba 2018 sample
shows them by structure. Method (stated in docs/evaluation/morpheus.md):
- a job's *shape* is its DAG: the task names, which encode every dependency (`R13_2_3_12`);
- runs of one shape are split into daily *slots* by their time of day (sorted, a new slot
  where consecutive runs are more than `slot_gap_s` apart);
- a slot is a recurring daily job when it has a run on at least `min_days` distinct trace
  days; its run of a day is the first of that day in the slot. Each run keeps its own DAG
  (instance counts and task durations of that day: real run-to-run variation).
Trace days are counted from the loader's origin (the first DAG job's start), the trace's own
clock: its time of day is anonymised anyway.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from harvester.domain import Resources
from harvester.sim.traces import load_jobs
from harvester.sim.workload import JobSpec

TRACE = "alibaba-2018-batch-dags/batch_task_selected_2119_DAG_jobs.csv.gz"
DAY_S = 86_400.0


@dataclass(frozen=True, eq=False)
class RecurringJob:
    """One daily job: `runs[day]` is that day's trace run (submit_s in trace seconds)."""

    name: str
    shape: tuple[str, ...]
    runs: dict[int, JobSpec]
    container: Resources

    @property
    def days(self) -> list[int]:
        return sorted(self.runs)


def shape_of(spec: JobSpec) -> tuple[str, ...]:
    return tuple(sorted(st.name for st in spec.stages))


def container_of(specs: Sequence[JobSpec]) -> Resources:
    """One container size per job (the event simulator's tokens are all alike): its largest task."""
    return Resources(max(st.memory_mb for s in specs for st in s.stages), max(st.vcores for s in specs for st in s.stages))


def recurring_jobs(specs: Sequence[JobSpec], *, min_days: int = 6, slot_gap_s: float = 3600.0,
                   min_stages: int = 10, max_tasks: int = 6000) -> list[RecurringJob]:
    """Daily recurring jobs among `specs` (module docstring), named `<first job>@<hh:mm>` (the
    trace's own job id, `meta["trace_job"]`, where the loader keeps one).
    Runs with more than `max_tasks` tasks are left out (simulation cost); a slot must still
    have `min_days` days without them."""
    by_shape: dict[tuple[str, ...], list[JobSpec]] = defaultdict(list)
    for s in specs:
        if len(s.stages) >= min_stages:
            by_shape[shape_of(s)].append(s)
    out: list[RecurringJob] = []
    for shape, group in by_shape.items():
        group.sort(key=lambda s: s.submit_s % DAY_S)
        slots: list[list[JobSpec]] = [[group[0]]]
        for prev, cur in zip(group, group[1:]):
            if cur.submit_s % DAY_S - prev.submit_s % DAY_S > slot_gap_s:
                slots.append([])
            slots[-1].append(cur)
        for slot in slots:
            runs: dict[int, JobSpec] = {}
            for s in sorted(slot, key=lambda s: s.submit_s):
                if s.tasks <= max_tasks:
                    runs.setdefault(int(s.submit_s // DAY_S), s)
            if len(runs) < min_days:
                continue
            first = runs[min(runs)]
            tod = sorted(s.submit_s % DAY_S for s in runs.values())[len(runs) // 2]
            name = f"{first.meta.get('trace_job', first.name)}@{int(tod // 3600):02d}:{int(tod % 3600 // 60):02d}"
            out.append(RecurringJob(name, shape, runs, container_of(list(runs.values()))))
    return sorted(out, key=lambda j: j.name)


def load_recurring(traces_dir: str | Path, **options: object) -> list[RecurringJob]:
    """The recurring jobs of the staged Alibaba 2018 DAG sample (TraceError if it is missing)."""
    return recurring_jobs(load_jobs("alibaba-2018-dags", Path(traces_dir) / TRACE), **options)  # type: ignore[arg-type]

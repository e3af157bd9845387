"""A deadline job's models for the control loop (Jockey §4.1-§4.2): the job model fitted from
its prior runs, its completion predictor (C(p, a) or Amdahl), its progress indicator and the
container priorities of its stages.

`load_deadline_job` reads the prior-runs JSON (docs/jockey.md), fits the model, and builds
C(p, a) over `levels` geometric allocation levels from 1 to the job's widest DAG level (or its
`max_allocation`) with `runs_per_level` simulated runs each. With a `table` path the table is a
cache: loaded when a table built from the same runs and settings is there (the fingerprint
file beside it says so), else computed and written there. Bad input raises `FitError` or
`ValueError` naming the file or key; the loop shows it as the job's state and tries again later.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from harvester.models.completion_time import AmdahlModel, CompletionPredictor, CTable, allocation_levels, max_parallelism, precompute
from harvester.models.job_model import JobModel, fit_job_model, load_runs_json
from harvester.models.progress import ProgressIndicator, total_work_with_queue
from harvester.models.stage_counts import stage_priorities


@dataclass(frozen=True, eq=False)
class DeadlineJob:
    name: str
    model: JobModel
    predictor: CompletionPredictor
    indicator: ProgressIndicator
    priorities: Mapping[str, tuple[int, ...]]
    source: str                                     # where the predictor came from (for reasons)


def load_deadline_job(name: str, runs_path: Path, *, predictor: str = "ctable", table: Path | None = None,
                      levels: int = 40, runs_per_level: int = 100, seed: int = 0, max_allocation: int | None = None,
                      priorities: Mapping[str, Sequence[int]] | None = None) -> DeadlineJob:
    """The models of one deadline job (module docstring)."""
    _, runs = load_runs_json(runs_path)
    model = fit_job_model(runs, name=name)
    prio = stage_priorities(model, priorities)
    high = max_allocation if max_allocation is not None else max_parallelism(model)
    lv = allocation_levels(max(1, high), levels)
    if predictor == "amdahl":
        return DeadlineJob(name, model, AmdahlModel.fit(model, lv), total_work_with_queue(model), prio,
                           f"Amdahl from {len(runs)} runs in {runs_path}")
    digest = hashlib.sha256(runs_path.read_bytes() + f"|{lv.tolist()}|{runs_per_level}|{seed}".encode()).hexdigest()
    ctable = _cached(table, digest)
    source = f"C(p,a) cached in {table}" if ctable is not None else ""
    if ctable is None:
        ctable = precompute(model, lv, runs=runs_per_level, seed=seed)
        source = f"C(p,a) from {len(runs)} runs in {runs_path}"
        if table is not None:
            ctable.save(table)
            _stamp(table).write_text(digest + "\n", encoding="utf-8")
    return DeadlineJob(name, model, ctable, ctable.indicator, prio, source)


def _stamp(table: Path) -> Path:
    return table.with_name(table.name + ".fingerprint")


def _cached(table: Path | None, digest: str) -> CTable | None:
    if table is None or not table.is_file() or not _stamp(table).is_file():
        return None
    if _stamp(table).read_text(encoding="utf-8").strip() != digest:
        return None  # built from other runs or settings: recomputed
    return CTable.load(table)

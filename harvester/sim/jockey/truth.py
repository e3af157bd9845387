"""Jobs for the Jockey evaluation: trace DAGs, their run-to-run variability, and prior runs.

The Alibaba 2018 `batch_task` sample gives each DAG's stages, task counts, dependencies and one
duration per stage (the stage's wall time; per-instance durations are in `batch_instance`,
which is not staged — ../shared/traces/alibaba-2018-batch-dags/SOURCE.md). A recurring job's
runs differ in their task durations, initialization, failures and outliers; no public trace
here records that, so the "true" job of the evaluation adds it with stated `Variability`
parameters (ASSUMPTIONS, named in docs/evaluation/jockey.md):
- task runtime = the stage's trace duration × LogNormal(0, `runtime_sigma`); with probability
  `outlier_prob` an outlier, × U(`outlier_factor`);
- initialization (container localization, JVM start) ~ U(`init_s`);
- each attempt fails with `failure_prob` (first attempt) / `retry_failure_prob` (re-runs).
The true job is itself a `JobModel` (dense 1,001-point quantile functions) so the same event
simulator (models/job_sim.py) plays the cluster. Jockey never sees it: it fits its model from a
few simulated prior runs (`prior_runs`), as it would from a job's history.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harvester.models.job_model import AttemptRecord, Edge, JobModel, Quantiles, RunRecord, StageModel, StageRecord
from harvester.models.job_sim import CompiledJob, DagRun, draw
from harvester.sim.workload import JobSpec


@dataclass(frozen=True, slots=True)
class Variability:
    runtime_sigma: float = 0.3
    outlier_prob: float = 0.02
    outlier_factor: tuple[float, float] = (1.5, 5.0)
    failure_prob: float = 0.01
    retry_failure_prob: float = 0.01
    init_s: tuple[float, float] = (1.0, 5.0)
    points: int = 1001
    samples: int = 20000


def true_model(spec: JobSpec, var: Variability, seed: int = 0) -> JobModel:
    """The job as it really behaves (module docstring); deterministic in `seed`."""
    rng = np.random.default_rng([seed, 17])
    stages = []
    lo, hi = var.outlier_factor
    for st in spec.stages:
        base = st.durations_s[rng.integers(0, st.tasks, var.samples)]
        rt = base * rng.lognormal(0.0, var.runtime_sigma, var.samples)
        out = rng.random(var.samples) < var.outlier_prob
        rt[out] *= rng.uniform(lo, hi, int(out.sum()))
        parents = _distinct(st.parents)
        stages.append(StageModel(st.name, st.tasks, Quantiles.from_samples(rt, var.points),
                                 Quantiles(np.linspace(var.init_s[0], var.init_s[1], var.points)),
                                 parents, tuple(Edge.BARRIER for _ in parents),
                                 (var.failure_prob, var.retry_failure_prob)))
    return JobModel(spec.name or spec.job_id, tuple(stages))


def prior_runs(truth: JobModel, allocation: int, seeds: list[int]) -> list[RunRecord]:
    """Runs of the true job at a fixed `allocation` (the job's past quota), as job history."""
    job = CompiledJob(truth)
    out = []
    for s in seeds:
        run = DagRun(job, draw(job, np.random.default_rng([s, 1])), allocation)
        run.run_to_end()
        out.append(run.record(f"prior-{s}"))
    return out


def run_from_jobspec(spec: JobSpec) -> RunRecord:
    """A trace job as ONE prior run: each task one successful attempt of its trace duration.

    Start times, queueing and initialization are not in the simulator's traces: tasks are
    recorded as starting at 0 with no ready time (the fit then assumes no queueing) and no
    initialization.
    """
    stages = tuple(StageRecord(st.name, st.tasks, tuple(spec.stages[p].name for p in _distinct(st.parents)),
                               tuple(Edge.BARRIER for _ in _distinct(st.parents))) for st in spec.stages)
    attempts = tuple(AttemptRecord(st.name, i, 0, 0.0, float(d))
                     for st in spec.stages for i, d in enumerate(st.durations_s.tolist()))
    return RunRecord(spec.job_id, stages, attempts)


def _distinct(parents: tuple[int, ...]) -> tuple[int, ...]:
    """A trace may name a dependency twice (Alibaba names truncated at 50 characters): once is enough."""
    return tuple(sorted(set(parents)))

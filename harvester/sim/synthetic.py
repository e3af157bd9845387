"""Synthetic batch workload: DAG jobs whose shapes follow distributions fitted to Alibaba 2018.

Fitted (by `harvester simulate-fit`, stored in harvester/sim/data/workload.json) from the
Alibaba v2018 DAG sample (../shared/traces/alibaba-2018-batch-dags): stages per job, tasks
(instances) per stage, stage wall time, how stages depend on earlier ones, container vcores
and memory. The sample is size-stratified (SOURCE.md), so per-job sizes lean large.

Not in any public trace, so assumed and stated (../shared/traces/README.md, "What no public
sample provides"):
- recurrence: `recurring_fraction` of job runs (default 0.6: Morpheus §2 reports "over 60 %
  of the jobs ... are recurrent") come from templates re-submitted every period; periods are
  natural values (Morpheus Fig. 1b: "once a day, once an hour"), weights in DEFAULT_PERIODS
  are ours; each run re-draws task durations around the template's (lognormal, sigma
  `run_to_run_sigma`, default 0.1);
- task-duration spread inside a stage: lognormal sigma 0.3 (the Yahoo Hawk/Eagle sub-traces
  have a median within-job CV of 0.31, hawk-eagle-shortjob-subtraces/SOURCE.md);
- arrivals of ad-hoc jobs: uniform over the horizon (a Poisson process given the count).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from harvester.sim.workload import JobSpec, StageSpec

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_PERIODS: dict[float, float] = {900.0: 0.10, 3600.0: 0.45, 14400.0: 0.15, 86400.0: 0.30}
QUANTILES = np.linspace(0.0, 1.0, 51)


@dataclass(frozen=True)
class WorkloadParams:
    """Distributions of one workload (quantile tables at `QUANTILES`) plus DAG-shape rates."""

    stages_per_job: list[float]
    tasks_per_stage: list[float]
    stage_duration_s: list[float]
    memory_mb: list[float]
    vcores_probs: dict[str, float]
    p_no_parent: float
    mean_extra_parents: float
    within_stage_sigma: float = 0.3
    source: str = ""
    notes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @staticmethod
    def load(path: str | Path | None = None) -> WorkloadParams:
        p = Path(path) if path is not None else DATA_DIR / "workload.json"
        return WorkloadParams(**json.loads(p.read_text(encoding="utf-8")))


def fit_workload(jobs: Sequence[JobSpec], source: str = "") -> WorkloadParams:
    """Fit `WorkloadParams` to real jobs (each stage's tasks share one wall time in Alibaba)."""
    if not jobs:
        raise ValueError("no jobs to fit")
    stages = [s for j in jobs for s in j.stages]
    later = [s for j in jobs for s in j.stages[1:]]
    with_parents = [len(s.parents) for s in later if s.parents]
    vc = np.array([s.vcores for s in stages])
    return WorkloadParams(
        stages_per_job=np.quantile([len(j.stages) for j in jobs], QUANTILES).tolist(),
        tasks_per_stage=np.quantile([s.tasks for s in stages], QUANTILES).tolist(),
        stage_duration_s=np.quantile([float(np.median(s.durations_s)) for s in stages], QUANTILES).tolist(),
        memory_mb=np.quantile([s.memory_mb for s in stages], QUANTILES).tolist(),
        vcores_probs={str(v): float(np.mean(vc == v)) for v in sorted(set(vc.tolist()))},
        p_no_parent=float(np.mean([not s.parents for s in later])) if later else 1.0,
        mean_extra_parents=float(np.mean(with_parents) - 1.0) if with_parents else 0.0,
        source=source,
    )


def _draw(table: Sequence[float], rng: np.random.Generator, n: int | None = None, log: bool = False) -> np.ndarray:
    """Inverse-CDF draws from a quantile table (log-linear interpolation for heavy tails)."""
    u = rng.random(n if n is not None else 1)
    t = np.asarray(table, dtype=np.float64)
    if log:
        return np.exp(np.interp(u, QUANTILES, np.log(np.maximum(t, 1e-9))))
    return np.interp(u, QUANTILES, t)


@dataclass(frozen=True, slots=True)
class _Template:
    stages: tuple[tuple[str, float, int, int, int, tuple[int, ...]], ...]  # name, median s, tasks, vcores, mem, parents


def _template(p: WorkloadParams, rng: np.random.Generator, max_tasks: int | None) -> _Template:
    n = max(1, int(round(float(_draw(p.stages_per_job, rng)[0]))))
    vkeys = list(p.vcores_probs)
    vprob = np.asarray([p.vcores_probs[k] for k in vkeys], dtype=np.float64)
    tasks = np.maximum(1, np.round(_draw(p.tasks_per_stage, rng, n, log=True))).astype(np.int64)
    if max_tasks is not None:
        tasks = np.minimum(tasks, max_tasks)
    medians = _draw(p.stage_duration_s, rng, n, log=True)
    vcores = rng.choice(len(vkeys), size=n, p=vprob / vprob.sum())
    mems = np.maximum(64, np.round(_draw(p.memory_mb, rng, n))).astype(np.int64)
    rooted = rng.random(n) < p.p_no_parent
    extra = rng.poisson(max(0.0, p.mean_extra_parents), n)
    out = []
    # Python numbers (the same values): numpy scalars per stage cost more than the draws
    rooted_l, extra_l, medians_l = rooted.tolist(), extra.tolist(), medians.tolist()
    tasks_l, mems_l = tasks.tolist(), mems.tolist()
    vsizes = [int(vkeys[v]) for v in vcores.tolist()]
    for i in range(n):
        parents: tuple[int, ...] = ()
        if i and not rooted_l[i]:
            k = min(i, 1 + extra_l[i])
            picks = [int(rng.integers(0, i))] if k == 1 else rng.choice(i, size=k, replace=False).tolist()
            parents = tuple(sorted(picks))
        out.append((f"S{i + 1}", medians_l[i], tasks_l[i], vsizes[i], mems_l[i], parents))
    return _Template(tuple(out))


def _instantiate(t: _Template, p: WorkloadParams, rng: np.random.Generator, run_sigma: float,
                 runs: int = 1) -> list[tuple[StageSpec, ...]]:
    """`runs` runs of template `t`: per run and stage, the run's factor (lognormal `run_sigma`,
    if > 0) around the stage's median, then its task durations (lognormal `within_stage_sigma`).

    numpy's lognormal(0, sigma) is exp(sigma * z) of one standard normal z per value, so the
    draws of all runs are one standard_normal call (the same stream, in the same order), and
    exp is math.exp (the libm exp numpy's generator calls; numpy's vectorized exp differs in
    the last bit): the same durations, bit for bit, as a lognormal call per stage and run
    (tests/sim/test_workload.py), at a fraction of the cost (~1 M stages in a 7-day run).
    """
    sigma = p.within_stage_sigma
    if sigma < 0 or run_sigma < 0:
        raise ValueError("lognormal sigmas must be >= 0")
    tasks = np.array([s[2] for s in t.stages], dtype=np.int64)
    medians = np.array([s[1] for s in t.stages], dtype=np.float64)
    n = tasks.size
    lead = 1 if run_sigma > 0 else 0
    ends = np.cumsum(tasks + lead)
    z = rng.standard_normal(runs * int(ends[-1])).reshape(runs, int(ends[-1]))
    exp = math.exp
    if lead:
        fz = z[:, ends - tasks - 1]  # each stage's run factor comes before its tasks
        factor = np.array([exp(x) for x in (run_sigma * fz).ravel().tolist()]).reshape(runs, n)
        m = medians * factor
        z = np.delete(z, ends - tasks - 1, axis=1)
    else:
        m = np.broadcast_to(medians, (runs, n))
    e = np.array([exp(x) for x in (sigma * z).ravel().tolist()]).reshape(z.shape)
    durations = np.maximum(1.0, np.repeat(m, tasks, axis=1) * e)
    bounds = np.concatenate(([0], np.cumsum(tasks))).tolist()
    return [tuple(StageSpec(name, row[bounds[i]:bounds[i + 1]], vcores, mem, parents)
                  for i, (name, _, _, vcores, mem, parents) in enumerate(t.stages))
            for row in durations]


def generate_jobs(
    params: WorkloadParams,
    *,
    jobs: int,
    horizon_s: float,
    rng: np.random.Generator,
    recurring_fraction: float = 0.6,
    periods: Mapping[float, float] | None = None,
    run_to_run_sigma: float = 0.1,
    max_tasks_per_stage: int | None = None,
) -> list[JobSpec]:
    """About `jobs` job runs over [0, horizon_s): recurring runs first, ad-hoc jobs fill the rest."""
    if jobs < 0 or not 0.0 <= recurring_fraction <= 1.0:
        raise ValueError("jobs must be >= 0 and recurring_fraction in [0, 1]")
    periods = dict(periods or DEFAULT_PERIODS)
    pvals = np.asarray(list(periods), dtype=np.float64)
    pw = np.asarray(list(periods.values()), dtype=np.float64)
    out: list[JobSpec] = []
    want = int(round(jobs * recurring_fraction))
    n_templates = 0
    while len(out) < want:
        period = float(pvals[int(rng.choice(len(pvals), p=pw / pw.sum()))])
        phase = float(rng.uniform(0.0, min(period, horizon_s)))
        runs = max(1, math.ceil((horizon_s - phase) / period))
        runs = min(runs, want - len(out))
        tmpl = _template(params, rng, max_tasks_per_stage)
        name = f"recurring-{n_templates:05d}"
        for r, stages in enumerate(_instantiate(tmpl, params, rng, run_to_run_sigma, runs)):
            out.append(JobSpec(f"{name}-run{r:03d}", phase + r * period, stages, name=name, period_s=period,
                               source="synthetic"))
        n_templates += 1
    arrivals = np.sort(rng.uniform(0.0, horizon_s, max(0, jobs - len(out))))
    for i, t in enumerate(arrivals.tolist()):
        stages = _instantiate(_template(params, rng, max_tasks_per_stage), params, rng, 0.0)[0]
        out.append(JobSpec(f"adhoc-{i:06d}", t, stages, name=f"adhoc-{i:06d}", source="synthetic"))
    out.sort(key=lambda j: (j.submit_s, j.job_id))
    return out


def total_core_seconds(jobs: Sequence[JobSpec], cores_per_vcore: float) -> float:
    return float(sum(j.task_seconds(cores_per_vcore) for j in jobs))

"""Runs, skylines and SLO terms of the recurring jobs (the Morpheus evaluation's history side).

- The true run of (job, day, seed): that day's trace DAG made a `JobModel` by the Jockey
  evaluation's `true_model` (sim/jockey/truth.py) with `VARIABILITY`: task runtime = the
  stage's trace wall time × LogNormal(0, 0.1), initialization U(1, 5) s, 1 % failed attempts,
  no extra outliers (the wall time is already the slowest instance of that day: the
  run-to-run variation is the trace's own, day to day), and one set of draws.
  The same run is history in the folds that train on its day and the test run of its own fold.
- History as it ran: unconstrained (as many containers as tasks are ready, the trace cluster
  ran each task's instances when they were ready; §2: users "compensate with under-allocation
  via opportunistic fair-sharing"). Its skyline is what the live poller records: containers in
  use at polls every 20 s, the largest per minute from the submission, × the job's container.
- Provenance (no trace has any, ../shared/traces/README.md; the pattern is that of the recorded
  pipeline, fixtures hdfs-3.3.6/provenance-recurring): an upstream writes the day's input 1 s
  before the submission (the trace's submit time is T_inAvail), the run reads it and writes its
  output at its end, and a downstream consumer reads the output at a fixed time of its period
  c_j plus U(0, 60) s, or 1 s after the output appears when it is later. c_j = the 95th
  percentile of the history's ends (within the period: the consumer is scheduled after the
  output is usually there) + `slack` × the median duration, slack ~ U(0.25, 3) per job: §9.1
  Fig. 9a says about 70 % of jobs have slack to run twice before their deadline (P(slack >= 1) =
  0.73 here). A run's `day` is the index of its period (a day, or an hour for hourly jobs).
  These events go through the SAME §4 inference as live (build_graph, fit_slo).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
import numpy as np

from harvester.models.completion_time import max_parallelism
from harvester.models.job_sim import CompiledJob, DagRun, Draws, draw
from harvester.models.provenance import Access, FileAccess, RunRecord, build_graph
from harvester.models.skyline import RunSkyline, SkylineFitError, SkylineParams
from harvester.models.skyline_window import fit_in_window
from harvester.models.slo_contract import Terms, window_steps
from harvester.models.slo_inference import JobSlo, SloParams, fit_slo
from harvester.sim.jockey.truth import Variability, true_model
from harvester.sim.morpheus.workload import DAY_S, RecurringJob

STEP_S = 60.0
POLL_S = 20.0  # the live jobs loop's poll of the RM's apps (morpheus.history.poll_interval_s)
VARIABILITY = Variability(runtime_sigma=0.1, outlier_prob=0.0)


@dataclass(frozen=True, eq=False)
class TrueRun:
    """One run of a job: its compiled DAG, draws, trace submit time, and its history (unconstrained)."""

    job: str
    day: int
    run_id: str
    compiled: CompiledJob
    draws: Draws
    submit_s: float
    makespan_s: float
    peak: int                 # most containers in use at once, unconstrained
    usage: np.ndarray         # mean containers in use per step from the submission
    period_s: float = DAY_S   # `day` is the index of its period (of the job's recurrence)

    @property
    def period_start(self) -> float:
        return self.day * self.period_s


def polled_usage(run: DagRun, start_s: float, step_s: float = STEP_S, poll_s: float = POLL_S) -> np.ndarray:
    """Containers in use per step from `start_s` as the live history records it
    (models/job_history.py: "the largest ... it held at a poll in that step"): polls every
    `poll_s` at start + (j + ½)·poll_s, the maximum per step."""
    _, _, s, e, _ = run.arrays()
    end = float(e.max()) if e.size else start_s
    k = max(1, math.ceil((end - start_s) / step_s - 1e-9))
    polls = start_s + poll_s * (np.arange(int(math.ceil(k * step_s / poll_s))) + 0.5)
    held = np.searchsorted(np.sort(s), polls, side="right") - np.searchsorted(np.sort(e), polls, side="right")
    step = ((polls - start_s) // step_s).astype(np.int64)
    out = np.zeros(k)
    np.maximum.at(out, step, held)
    return out


def _peak(run: DagRun) -> int:
    _, _, s, e, _ = run.arrays()
    ev = np.concatenate([np.stack([s, np.ones_like(s)], 1), np.stack([e, -np.ones_like(e)], 1)])
    ev = ev[np.lexsort((ev[:, 1], ev[:, 0]))]  # ends before starts at the same instant
    return int(np.cumsum(ev[:, 1]).max(initial=0))


def true_run(job: RecurringJob, day: int, seed: int) -> TrueRun:
    """The run of `job` on `day` for `seed`, with its unconstrained history (module docstring)."""
    compiled = CompiledJob(true_model(job.runs[day], VARIABILITY, seed=seed))
    return observe(job.name, day, compiled, draw(compiled, np.random.default_rng([seed, day, 23])),
                   float(job.runs[day].submit_s), job.period_s)


def observe(job: str, day: int, compiled: CompiledJob, draws: Draws, submit_s: float,
            period_s: float = DAY_S) -> TrueRun:
    """A run as history records it: played unconstrained from `submit_s`."""
    run = DagRun(compiled, draws, max_parallelism(compiled.model), start_s=submit_s)
    finish = run.run_to_end()
    return TrueRun(job, day, f"{job}#{day}", compiled, draws, submit_s, finish - submit_s, _peak(run),
                   polled_usage(run, submit_s), period_s)


def consumer_time(runs: list[TrueRun], slack: float) -> float:
    """c_j, seconds after the period start (module docstring)."""
    ends = [(r.submit_s + r.makespan_s) - r.period_start for r in runs]
    return float(np.percentile(ends, 95) + slack * np.median([r.makespan_s for r in runs]))


def provenance(job: str, runs: list[TrueRun], consumer_s: float, rng: np.random.Generator) -> tuple[list[FileAccess], list[RunRecord]]:
    """The synthesized audit events and run records of `runs` (module docstring)."""
    acc: list[FileAccess] = []
    recs: list[RunRecord] = []
    for r in runs:
        inp, out = f"/warehouse/{job}/input/day={r.day}", f"/warehouse/{job}/output/day={r.day}"
        end = r.submit_s + r.makespan_s
        read_at = max(r.period_start + consumer_s + float(rng.uniform(0.0, 60.0)), end + 1.0)
        acc += [FileAccess(r.submit_s - 1.0, Access.WRITE, inp, None, "upstream", "create"),
                FileAccess(r.submit_s, Access.READ, inp, r.run_id, r.run_id, "open"),
                FileAccess(end, Access.WRITE, out, r.run_id, r.run_id, "rename"),
                FileAccess(read_at, Access.READ, out, None, "downstream", "open")]
        recs.append(RunRecord(job, r.run_id, r.submit_s, r.submit_s, end))
    return acc, recs


@dataclass(frozen=True)
class Fitted:
    """A job's §4 SLO and §5 skyline from its training runs (terms None: not reservable, `why`)."""

    job: str
    slo: JobSlo
    terms: Terms | None
    why: str


def fit_job(job: RecurringJob, train: list[TrueRun], consumer_s: float, alpha: float, seed: int,
            slo_params: SloParams = SloParams()) -> Fitted:
    """§4 + §5 on the training runs, through the live code (fit_slo, fit_skyline)."""
    acc, recs = provenance(job.name, train, consumer_s, np.random.default_rng([seed, 31, *[r.day for r in train]]))
    slo = fit_slo(build_graph(acc, recs), slo_params, jobs=[job.name]).jobs[0]
    if not slo.actionable or slo.period_s is None or slo.earliest_start_s is None or slo.deadline_s is None:
        return Fitted(job.name, slo, None, f"SLO: {slo.reason}")
    c = job.container  # one container size: the skyline is whole containers of it (memory and vcores alike)
    params = SkylineParams(alpha=alpha)
    first, last = window_steps(slo.earliest_start_s, slo.deadline_s, STEP_S)
    # as the live refit: a run no poll saw running (shorter than the poll interval) has no skyline
    seen = [r for r in train if r.usage.any()]
    if len(seen) < params.min_runs:
        return Fitted(job.name, slo, None, f"skyline: {len(seen)} of {len(train)} runs have a usable polled skyline "
                                           f"(need {params.min_runs})")
    try:
        sky = fit_in_window([RunSkyline(r.run_id, STEP_S, r.usage * c.memory_mb, r.usage * c.vcores, c) for r in seen],
                            max(0, last - first + 1), params)
    except SkylineFitError as exc:
        return Fitted(job.name, slo, None, f"skyline: {exc}")
    if sky.model is None:
        return Fitted(job.name, slo, None, f"skyline: {sky.why}")
    terms = Terms(slo.period_s, slo.earliest_start_s, slo.deadline_s, slo.grid_origin_s, STEP_S,
                  tuple(int(x) for x in sky.model.memory_mb), tuple(int(x) for x in sky.model.vcores), slo.problematic,
                  sky.longer, max(r.makespan_s for r in train))
    return Fitted(job.name, slo, terms, "")


def static_levels(job: RecurringJob, runs: list[TrueRun], seed: int, *, user_mu: float = 1.024,
                  user_sigma: float = 1.519, max_ratio: float = 20.0) -> tuple[int, float]:
    """(the user's static allocation, its ratio to the median historical peak): ratio ~
    LogNormal(1.024, 1.519), which puts 25 % of jobs under-provisioned at their peak and 20 %
    over 10× over-provisioned (§2 Fig. 2a: "75% of jobs are over-provisioned (even at their
    peak), with 20% of them over 10× over-provisioned"), capped at `max_ratio` (the lognormal's
    tail would give a few jobs 100× and more). No trace records users' quotas."""
    rng = np.random.default_rng([seed, 41, *job.name.encode()])
    ratio = min(max_ratio, float(rng.lognormal(user_mu, user_sigma)))
    return max(1, round(ratio * float(np.median([r.peak for r in runs])))), ratio


def p95_peak(train: list[TrueRun]) -> int:
    """The strongest static baseline's level: the 95th percentile of the training runs' peaks."""
    return max(1, math.ceil(float(np.percentile([r.peak for r in train], 95))))


def job_slack(job: RecurringJob, seed: int, lo: float = 0.25, hi: float = 3.0) -> float:
    return float(np.random.default_rng([seed, 43, *job.name.encode()]).uniform(lo, hi))

"""SLO inference from the provenance graph — Morpheus §4 (paper 002) — pure fit / predict.

§4: "We derive the period P_j of a job j based on the submission times ... four random
variables, in chronological order: T_inAvail, time at which job inputs are available (i.e., the
time of last write to any input); T_start, time when the job starts execution; T_end, time when
the job completes execution; T_outRead, time at which any job output is first read. All these
times are defined relative to the start of the current period T_periodStart. ... a job has an
actionable deadline if its output is consumed at an approximately fixed time ... and if there is
non-trivial amount of slack between the job end and the deadline. Formally this means imposing
thresholds on CV(T_outRead) [= MAD / median] and median (T_outRead − T_end)/(T_end − T_start).
Finally, a_j and d_j are derived as percentiles of the distributions of T_inAvail and
T_outRead (e.g., 95th and 50th percentiles, respectively)."

How each quantity is measured (choices the paper leaves open):
- Period: the base spacing of which the gaps between consecutive submissions (the RM's
  `startedTime`, which is the submit time) are near-whole multiples (`infer_period`: so a
  skipped run neither doubles it nor makes the job aperiodic), the median per-period gap,
  snapped to the nearest natural period (a whole-minute divisor of the LCM, a day, §6) within `snap_tolerance`; otherwise kept as measured and flagged not LCM-aligned (§6: such
  jobs get one-off reservations per instance). A 58-minute job stays 58 minutes.
  The gaps must be regular: MAD/median of the per-period gaps at most `max_gap_cv`.
- Period starts lie on a grid of multiples of P from `grid_origin_s` (epoch 0 = UTC midnight,
  as the RM places recurring reservations). A run belongs to the period of its TYPICAL submit
  (the median phase plus a whole number of periods), so a late run is late in its own period
  rather than early in the next one.
- T_start is the AM's launch (the RM's `launchTime`), the submit time when unknown; T_end the
  finish. T_inAvail is the last write (by anyone else) of any input before the run first read
  it; an input written before its period began counts as available at the period start (0).
- T_outRead is the first read of any output by a named actor other than the run itself, before
  the output is rewritten (harvester.models.provenance explains what is a read and what is not).
- "Problematic" jobs (§7: "high CV for T_start − T_inAvail, T_outRead − T_end") get LowCost's
  alignment penalty: either CV above `problematic_cv`.
A job without an actionable deadline is reported with the reason; nothing is guessed for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from harvester.models.provenance import ProvenanceGraph, RunRecord
from harvester.models.morpheus_params import SloParams  # noqa: F401  (re-exported: the §4 knobs)




@dataclass(frozen=True)
class PeriodTimes:
    """One period's run; times in seconds after `period_start` (epoch seconds)."""

    period_start: float
    run_id: str
    submitted: float
    start: float
    end: float | None
    in_avail: float | None
    out_read: float | None
    consumer: str | None
    late_start: bool
    missed_deadline: bool | None  # None: no deadline inferred


@dataclass(frozen=True)
class JobSlo:
    """The inferred SLO of one recurring job (or why there is none: `actionable` False, `reason`)."""

    job: str
    runs: int
    period_s: float | None
    lcm_aligned: bool
    periods: tuple[PeriodTimes, ...]
    earliest_start_s: float | None  # a_j, after the period start
    deadline_s: float | None  # d_j, after the period start
    cv_out_read: float | None
    slack_ratio: float | None
    problematic: bool
    actionable: bool
    reason: str
    producers: tuple[str, ...] = ()
    consumers: tuple[str, ...] = ()
    grid_origin_s: float = 0.0  # period starts are grid_origin_s + n · period_s

    @property
    def late_runs(self) -> tuple[str, ...]:
        return tuple(p.run_id for p in self.periods if p.late_start)

    @property
    def missed_runs(self) -> tuple[str, ...]:
        return tuple(p.run_id for p in self.periods if p.missed_deadline)


@dataclass(frozen=True)
class SloModel:
    params: SloParams
    jobs: tuple[JobSlo, ...]

    def job(self, name: str) -> JobSlo | None:
        return next((j for j in self.jobs if j.job == name), None)


def window(slo: JobSlo, t: float) -> tuple[float, float]:
    """(earliest start, deadline) in epoch seconds for the period containing `t` (predict)."""
    if not slo.actionable or slo.period_s is None:
        raise ValueError(f"{slo.job} has no actionable SLO: {slo.reason}")
    origin = slo.grid_origin_s
    start = origin + math.floor((t - origin) / slo.period_s) * slo.period_s
    return start + slo.earliest_start_s, start + slo.deadline_s


def _cv(values: Sequence[float]) -> float:
    v = np.asarray(values, dtype=float)
    med = float(np.median(v))
    mad = float(np.median(np.abs(v - med)))
    return mad / med if med > 0 else (0.0 if mad == 0 else math.inf)


def natural_periods(lcm_s: int) -> list[int]:
    """Divisors of the LCM that are whole minutes or divide a minute (the plan's step is a
    minute; 3456 s divides a day but is no schedule anyone sets)."""
    small = [d for d in range(1, int(math.isqrt(lcm_s)) + 1) if lcm_s % d == 0]
    return sorted(d for d in set(small + [lcm_s // d for d in small]) if d % 60 == 0 or 60 % d == 0)


def infer_period(submits: Sequence[float], params: SloParams) -> tuple[float | None, bool, str]:
    """(P, divides the LCM, reason if not periodic) from sorted submit times.

    P is the base spacing of which the gaps are near-whole multiples (§4 "derive the period
    from the submission times"; a skipped run leaves a 2P gap, it does not make the job
    aperiodic). The median gap is tried first; when it fails (a daily job with a missing day
    has gaps of 1 and 2 days, median 1.5) each smaller gap is tried, largest first."""
    gaps = np.diff(np.asarray(submits, dtype=float))
    raw = float(np.median(gaps)) if gaps.size else 0.0
    if raw <= 0:
        return None, False, "submissions are not spread in time"
    fit = _regular(gaps, raw, params)
    for base in sorted({float(g) for g in gaps if 0 < g < raw}, reverse=True):
        if fit[0] is not None:
            break
        fit = _regular(gaps, base, params)
    period, gap_cv = fit
    if period is None:
        return None, False, f"not periodic: gaps between submissions vary (MAD/median {gap_cv:.2f} > {params.max_gap_cv})"
    near = min(natural_periods(params.lcm_s), key=lambda d: abs(d - period))
    if abs(near - period) <= params.snap_tolerance * period:
        return float(near), True, ""
    return period, False, ""


def _regular(gaps: np.ndarray, base: float, params: SloParams) -> tuple[float | None, float]:
    """(median per-period gap, or None when the gaps are not whole multiples of `base`; MAD/median).

    Each gap is divided by its whole number of periods. Regular: the per-period gaps agree
    (MAD/median <= max_gap_cv), at least half the gaps are single periods (a skipped run is the
    exception, or any base smaller than the gaps would fit), and every multiple lies within
    max_gap_cv of a whole number of periods."""
    k = np.maximum(1, np.round(gaps / base))
    per = gaps / k
    period = float(np.median(per))
    gap_cv = _cv(per)
    if gap_cv > params.max_gap_cv or np.mean(k == 1) < 0.5:
        return None, gap_cv
    multiple = k > 1
    if np.any(np.abs(gaps[multiple] - k[multiple] * period) > params.max_gap_cv * period):
        return None, gap_cv
    return period, gap_cv


def fit_slo(graph: ProvenanceGraph, params: SloParams = SloParams(), jobs: Iterable[str] | None = None) -> SloModel:
    """Infer the SLO of every recurring job in `graph.runs` (or of `jobs`)."""
    by_job: dict[str, list[RunRecord]] = {}
    for run in graph.runs.values():
        by_job.setdefault(run.job, []).append(run)
    names = sorted(by_job) if jobs is None else list(jobs)
    return SloModel(params, tuple(_fit_job(name, sorted(by_job.get(name, []), key=lambda r: r.submitted_at),
                                           graph, params) for name in names))


def _fit_job(name: str, runs: list[RunRecord], graph: ProvenanceGraph, params: SloParams) -> JobSlo:
    producers = sorted(set().union(*(graph.producers(r.run_id) for r in runs))) if runs else []
    consumers = sorted(set().union(*(graph.consumers(r.run_id) for r in runs))) if runs else []

    def none(reason: str, period: float | None = None, aligned: bool = False,
             periods: tuple[PeriodTimes, ...] = ()) -> JobSlo:
        return JobSlo(name, len(runs), period, aligned, periods, None, None, None, None, False, False, reason,
                      tuple(producers), tuple(consumers), params.grid_origin_s)

    if len(runs) < params.min_periods:
        return none(f"too few runs ({len(runs)} < {params.min_periods})")
    period, aligned, why = infer_period([r.submitted_at for r in runs], params)
    if period is None:
        return none(why)
    rows = _period_rows(runs, graph, period, params)
    read = [p for p in rows if p.out_read is not None]
    if len(read) < params.min_periods:
        return none(f"output read in {len(read)} of {len(rows)} periods (need {params.min_periods})",
                    period, aligned, tuple(rows))
    out_read = [p.out_read for p in read]
    deadline = float(np.percentile(out_read, params.deadline_percentile))
    cv = _cv(out_read)
    slack = [(p.out_read - p.end) / (p.end - p.start) for p in read if p.end is not None and p.end > p.start]
    slack_ratio = float(np.median(slack)) if slack else None
    avail = [p.in_avail if p.in_avail is not None else 0.0 for p in rows]
    earliest = float(np.percentile(avail, params.start_percentile))
    starts = np.median([p.start for p in rows])
    rows = tuple(
        PeriodTimes(p.period_start, p.run_id, p.submitted, p.start, p.end, p.in_avail, p.out_read, p.consumer,
                    p.start - starts > params.late_fraction * period, None if p.end is None else p.end > deadline)
        for p in rows)
    gaps_in = [p.start - p.in_avail for p in rows if p.in_avail is not None]
    gaps_out = [p.out_read - p.end for p in read if p.end is not None]
    problematic = bool((gaps_in and _cv(gaps_in) > params.problematic_cv)
                       or (gaps_out and _cv(gaps_out) > params.problematic_cv))
    if cv > params.max_cv:
        reason = f"output read time too variable: CV(T_outRead) {cv:.3f} > {params.max_cv}"
    elif slack_ratio is None or slack_ratio < params.min_slack_ratio:
        shown = "n/a" if slack_ratio is None else f"{slack_ratio:.2f}"
        reason = f"too little slack: median (T_outRead−T_end)/(T_end−T_start) {shown} < {params.min_slack_ratio}"
    elif earliest >= deadline:
        reason = f"inputs arrive (a = {earliest:.1f}s) after the deadline (d = {deadline:.1f}s)"
    else:
        reason = (f"d = p{params.deadline_percentile:g} of {len(read)} first output reads = {deadline:.1f}s, "
                  f"a = p{params.start_percentile:g} of input availability = {earliest:.1f}s after the period start "
                  f"(P = {period:g}s); CV(T_outRead) {cv:.3f} <= {params.max_cv}, "
                  f"slack ratio {slack_ratio:.2f} >= {params.min_slack_ratio}")
        return JobSlo(name, len(runs), period, aligned, rows, earliest, deadline, cv, slack_ratio, problematic,
                      True, reason, tuple(producers), tuple(consumers), params.grid_origin_s)
    return JobSlo(name, len(runs), period, aligned, rows, None, None, cv, slack_ratio, problematic, False, reason,
                  tuple(producers), tuple(consumers), params.grid_origin_s)


def _period_rows(runs: list[RunRecord], graph: ProvenanceGraph, period: float, params: SloParams) -> list[PeriodTimes]:
    first = runs[0].submitted_at
    residual = [(r.submitted_at - first) - round((r.submitted_at - first) / period) * period for r in runs]
    anchor = first + float(np.median(residual))
    rows: dict[float, PeriodTimes] = {}
    for r in runs:
        typical = anchor + round((r.submitted_at - anchor) / period) * period
        start = params.grid_origin_s + math.floor((typical - params.grid_origin_s) / period) * period
        if start in rows:
            continue  # a second run in one period (a retry): the first one counts
        rows[start] = _times(r, start, graph)
    return [rows[k] for k in sorted(rows)]


def _times(run: RunRecord, start: float, graph: ProvenanceGraph) -> PeriodTimes:
    avail = None
    for path, first_read in graph.read_by_run.get(run.run_id, {}).items():
        w = graph.last_write_before(path, first_read, exclude_run=run.run_id)
        if w is not None:
            avail = w if avail is None else max(avail, w)
    out, consumer = None, None
    for path, written in graph.written_by_run.get(run.run_id, {}).items():
        hit = graph.first_read_after(path, written, exclude_run=run.run_id)
        if hit and (out is None or hit[0] < out):
            out, consumer = hit
    rel = (lambda t: None if t is None else t - start)
    return PeriodTimes(start, run.run_id, run.submitted_at - start, run.start - start, rel(run.finished_at),
                       None if avail is None else max(0.0, avail - start), rel(out), consumer, False, None)

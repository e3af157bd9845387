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
- Pipelines (harvester.models.slo_pipeline): stage B reads stage A's output of the same period.
  The stages of a pipeline share ONE period and ONE phase; a job on its own is a pipeline of one.
- Period (harvester.models.slo_period): a least-squares fit through the submits of every stage
  (§4: "based on the submission times") and the reads of the pipeline's consumer (the deadline
  recurs with them), each against its period number; snapped to a
  divisor of the LCM (`lcm_aligned`, a recurring reservation, §6) or a whole second only when
  within `snap_sigmas` standard errors. A 90 s pipeline is 90 s in every stage.
- Period numbers: the first stage's from its gaps; a later stage's run takes the number of the
  run whose output it read, else its typical lag after the first stage. Period n starts at the
  grid point (multiples of P from `grid_origin_s`; epoch 0 = UTC midnight, as the RM places
  recurring reservations) at or before the first stage's TYPICAL submit φ + n·P: a late run is
  late in its own period, and all stages of period n are measured from the same start.
- T_start is the AM's launch (the RM's `launchTime`), the submit time when unknown; T_end the
  finish. T_inAvail is the last write (by anyone else) of any input before the run first read
  it; an input written before its period began counts as available at the period start (0).
- T_outRead is the first read of any output by a named actor other than the run, before the
  output is old (provenance.superseded_at: reading an old period's output is a backfill, not
  consumption; harvester.models.provenance explains what is a read).
- Deadlines: a stage read OUTSIDE its pipeline (the last stage; any stage with a consumer of its
  own) gets the end-to-end deadline D = p50 of those reads, after §4's tests on them (CV,
  slack). Every stage's d_s = min(its own D, d_v − (median T_end of v − median T_end of s) for
  each next stage v): the latest end that leaves the rest of the pipeline its typical time to
  meet the consumer. So stage windows never drift apart. a_s = p95 of its T_inAvail.
- Each period's `state` per stage: "missed" when the END-TO-END deadline was missed in that
  period (a stage downstream with its own D, or this one, ended after D) and this stage ended
  after its d_s (it used the slack up); "late" when not missed but it started late (more than
  `late_fraction`·P after its median start) or ended after d_s (the pipeline caught up); else
  "on time"; "no deadline" without an actionable SLO, "unfinished" without an end.
- "Problematic" jobs (§7: "high CV for T_start − T_inAvail, T_outRead − T_end") get LowCost's
  alignment penalty: either CV above `problematic_cv`.
A job without an actionable deadline is reported with the reason; nothing is guessed for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from harvester.models.morpheus_params import SloParams  # noqa: F401  (re-exported: the §4 knobs)
from harvester.models.provenance import ProvenanceGraph, RunRecord, superseded_at
from harvester.models.slo_period import (RESOLUTION_S, PeriodFit, base_spacing, fit_period, infer_period,  # noqa: F401
                                         period_index, phase)
from harvester.models.slo_pipeline import Pipeline, find_pipelines

MISSED, LATE, ON_TIME, NO_DEADLINE, UNFINISHED = "missed", "late", "on time", "no deadline", "unfinished"


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
    missed_deadline: bool | None  # the end-to-end deadline missed and this stage past its own; None: unknown
    state: str = NO_DEADLINE  # missed | late | on time | no deadline | unfinished (module doc)


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
    pipeline: tuple[str, ...] = ()  # the stages of its pipeline in order, when it has more than one

    @property
    def late_runs(self) -> tuple[str, ...]:
        """Runs that started late (whether or not the deadline was met)."""
        return tuple(p.run_id for p in self.periods if p.late_start)

    @property
    def missed_runs(self) -> tuple[str, ...]:
        return tuple(p.run_id for p in self.periods if p.missed_deadline)

    def runs_in(self, state: str) -> tuple[str, ...]:
        return tuple(p.run_id for p in self.periods if p.state == state)


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


@dataclass(frozen=True)
class _Own:
    """A job's own period (or why it has none), before pipelines are joined."""

    fit: PeriodFit | None
    why: str
    index: np.ndarray | None = None


def _own(runs: list[RunRecord], params: SloParams) -> _Own:
    if len(runs) < params.min_periods:
        return _Own(None, f"too few runs ({len(runs)} < {params.min_periods})")
    submits = [r.submitted_at for r in runs]
    base, why = base_spacing(submits, params)
    if base is None:
        return _Own(None, why)
    index = period_index(submits, base)
    fit = fit_period([(index, np.asarray(submits))], params)
    return _Own(fit, "" if fit else "submissions are not spread in time", index)


def fit_slo(graph: ProvenanceGraph, params: SloParams = SloParams(), jobs: Iterable[str] | None = None) -> SloModel:
    """Infer the SLO of every recurring job in `graph.runs` (or of `jobs`)."""
    by_job: dict[str, list[RunRecord]] = {}
    for run in graph.runs.values():
        by_job.setdefault(run.job, []).append(run)
    for runs in by_job.values():
        runs.sort(key=lambda r: (r.submitted_at, r.run_id))
    names = sorted(by_job) if jobs is None else list(jobs)
    superseded = superseded_at(graph)
    own = {j: _own(runs, params) for j, runs in by_job.items()}
    eligible = {j for j, runs in by_job.items() if len(runs) >= params.min_periods}
    periodic = {j for j, o in own.items() if o.fit is not None}

    def same_period(a: str, b: str) -> bool:
        fa, fb = own[a].fit, own[b].fit
        assert fa is not None and fb is not None
        return fa.period_s == fb.period_s or \
            abs(fa.fitted_s - fb.fitted_s) <= params.snap_sigmas * math.hypot(fa.se_s, fb.se_s) + RESOLUTION_S

    wanted, fitted = set(names), {}
    for pipe in find_pipelines(graph, by_job, eligible, periodic, superseded, params.min_periods, same_period):
        if not wanted.isdisjoint(pipe.stages):
            fitted.update(_fit_pipeline(pipe, by_job, own, graph, superseded, params))
    return SloModel(params, tuple(fitted.get(n) or _unfitted(n, by_job.get(n, []), own.get(n), graph, superseded, params)
                                  for n in names))


def _unfitted(name: str, runs: list[RunRecord], own: _Own | None, graph: ProvenanceGraph,
              superseded: dict[str, float | None], params: SloParams) -> JobSlo:
    producers = sorted(set().union(*(graph.producers(r.run_id) for r in runs))) if runs else []
    consumers = sorted(set().union(*(graph.consumers(r.run_id, superseded.get(r.run_id)) for r in runs))) if runs else []
    why = own.why if own else f"too few runs ({len(runs)} < {params.min_periods})"
    return JobSlo(name, len(runs), None, False, (), None, None, None, None, False, False, why,
                  tuple(producers), tuple(consumers), params.grid_origin_s)


@dataclass
class _Run:
    """A run's times in epoch seconds, its period number and who read it."""

    run: RunRecord
    n: int = 0
    avail: float | None = None
    first: tuple[float, str] | None = None  # first read of its output before it was old, by anyone but itself
    outside: float | None = None  # first read by an actor outside its pipeline
    consumers: frozenset[str] = frozenset()


def _facts(r: RunRecord, graph: ProvenanceGraph, until: float | None, skip: frozenset[str]) -> _Run:
    out = _Run(r)
    for path, first_read in graph.read_by_run.get(r.run_id, {}).items():
        w = graph.last_write_before(path, first_read, exclude_run=r.run_id)
        if w is not None:
            out.avail = w if out.avail is None else max(out.avail, w)
    readers = set()
    for path, written in graph.written_by_run.get(r.run_id, {}).items():
        hit = graph.first_read_after(path, written, exclude_run=r.run_id, until=until)
        if hit is None:
            continue
        readers.add(hit[1])
        if out.first is None or hit[0] < out.first[0]:
            out.first = hit
        if hit[1] in skip:
            hit = graph.first_read_after(path, written, exclude_run=r.run_id, until=until, skip=skip)
        if hit and (out.outside is None or hit[0] < out.outside):
            out.outside = hit[0]
    out.consumers = frozenset(readers)
    return out


def _number(pipe: Pipeline, stage_runs: dict[str, list[_Run]], own: dict[str, _Own]) -> str:
    """Set every run's period number (module doc) and return the anchor: the first periodic
    stage, whose own period numbers the others follow."""
    anchor = next(s for s in pipe.stages if own[s].fit is not None)
    fit, index = own[anchor].fit, own[anchor].index
    assert fit is not None and index is not None
    p1 = fit.fitted_s
    known: dict[str, int] = {}
    for x, n in zip(stage_runs[anchor], index):
        x.n = known[x.run.run_id] = int(n)
    near: dict[str, list[str]] = {}
    for u, v in pipe.links:
        near.setdefault(u, []).append(v)
        near.setdefault(v, []).append(u)
    todo = list(known)
    while todo:  # a run is in the period of the run it read from (or that read it)
        r = todo.pop()
        for x in near.get(r, ()):
            if x not in known:
                known[x] = known[r]
                todo.append(x)
    phi = phase(index, np.array([x.run.submitted_at for x in stage_runs[anchor]]), p1)
    for stage in pipe.stages:
        if stage == anchor:
            continue
        xs = stage_runs[stage]
        lags = [x.run.submitted_at - phi - known[x.run.run_id] * p1 for x in xs if x.run.run_id in known]
        lag = float(np.median(lags)) if lags else float(np.median([(x.run.submitted_at - phi) % p1 for x in xs]))
        for x in xs:
            x.n = known.get(x.run.run_id, round((x.run.submitted_at - phi - lag) / p1))
    return anchor


def _fit_pipeline(pipe: Pipeline, by_job: dict[str, list[RunRecord]], own: dict[str, _Own], graph: ProvenanceGraph,
                  superseded: dict[str, float | None], params: SloParams) -> dict[str, JobSlo]:
    skip = frozenset(pipe.stages)
    stage_runs = {s: [_facts(r, graph, superseded.get(r.run_id), skip) for r in by_job[s]] for s in pipe.stages}
    first = _number(pipe, stage_runs, own)
    series = []
    for s in pipe.stages:
        xs = stage_runs[s]
        series.append((np.array([x.n for x in xs]), np.array([x.run.submitted_at for x in xs])))
        reads = [x for x in xs if x.outside is not None]
        if len(reads) >= params.min_periods:  # the consumer's reads: the deadline recurs with them
            series.append((np.array([x.n for x in reads]), np.array([x.outside for x in reads])))
    fit = fit_period(series, params) or own[first].fit
    assert fit is not None
    period, origin = fit.period_s, params.grid_origin_s
    anchor = stage_runs[first]
    phi = phase(np.array([x.n for x in anchor]), np.array([x.run.submitted_at for x in anchor]), period)
    rows: dict[str, dict[int, tuple[_Run, float]]] = {}
    for s in pipe.stages:
        mine: dict[int, tuple[_Run, float]] = {}
        for x in stage_runs[s]:  # a second run in one period (a retry): the first one counts
            mine.setdefault(x.n, (x, origin + math.floor((phi + x.n * period - origin) / period) * period))
        rows[s] = mine
    return _deadlines(pipe, rows, stage_runs, period, fit.lcm_aligned, graph, params)


@dataclass
class _Stage:
    """One stage's measured distributions (offsets after the period start) and its §4 tests."""

    med_start: float
    med_end: float | None
    own_deadline: float | None  # D from reads outside the pipeline, when §4's tests pass
    cv: float | None
    slack: float | None
    why: str  # why it has no own deadline / the formula of the one it has


def _stage(rows: dict[int, tuple[_Run, float]], params: SloParams) -> _Stage:
    starts = [x.run.start - s for x, s in rows.values()]
    ends = [x.run.finished_at - s for x, s in rows.values() if x.run.finished_at is not None]
    read = [(x.outside - s, x.run.start - s, None if x.run.finished_at is None else x.run.finished_at - s)
            for x, s in rows.values() if x.outside is not None]
    med_start, med_end = float(np.median(starts)), (float(np.median(ends)) if ends else None)
    if len(read) < params.min_periods:
        return _Stage(med_start, med_end, None, None, None,
                      f"output read in {len(read)} of {len(rows)} periods (need {params.min_periods})")
    out = [o for o, _, _ in read]
    deadline, cv = float(np.percentile(out, params.deadline_percentile)), _cv(out)
    ratios = [(o - e) / (e - b) for o, b, e in read if e is not None and e > b]
    slack = float(np.median(ratios)) if ratios else None
    if cv > params.max_cv:
        return _Stage(med_start, med_end, None, cv, slack,
                      f"output read time too variable: CV(T_outRead) {cv:.3f} > {params.max_cv}")
    if slack is None or slack < params.min_slack_ratio:
        shown = "n/a" if slack is None else f"{slack:.2f}"
        return _Stage(med_start, med_end, None, cv, slack,
                      f"too little slack: median (T_outRead−T_end)/(T_end−T_start) {shown} < {params.min_slack_ratio}")
    return _Stage(med_start, med_end, deadline, cv, slack,
                  f"d = p{params.deadline_percentile:g} of {len(read)} first output reads = {deadline:.1f}s, "
                  f"CV(T_outRead) {cv:.3f} <= {params.max_cv}, slack ratio {slack:.2f} >= {params.min_slack_ratio}")


def _deadlines(pipe: Pipeline, rows: dict[str, dict[int, tuple[_Run, float]]], stage_runs: dict[str, list[_Run]],
               period: float, aligned: bool, graph: ProvenanceGraph, params: SloParams) -> dict[str, JobSlo]:
    """Each stage's window from the end-to-end deadline, and each period's state (module doc)."""
    st = {s: _stage(rows[s], params) for s in pipe.stages}
    deadline: dict[str, float] = {}
    via: dict[str, str | None] = {}
    for s in reversed(pipe.stages):
        cands: list[tuple[float, str | None]] = [] if st[s].own_deadline is None else [(st[s].own_deadline, None)]
        for v in pipe.downstream(s):
            if v in deadline and st[v].med_end is not None and st[s].med_end is not None:
                cands.append((deadline[v] - (st[v].med_end - st[s].med_end), v))
        if cands:
            deadline[s], via[s] = min(cands, key=lambda c: c[0])
    missed_e2e: dict[str, dict[int, bool]] = {}
    for s in reversed(pipe.stages):
        d_own = st[s].own_deadline
        missed_e2e[s] = {n: (d_own is not None and x.run.finished_at is not None and x.run.finished_at - t0 > d_own)
                         or any(missed_e2e[v].get(n, False) for v in pipe.downstream(s))
                         for n, (x, t0) in rows[s].items()}
    out = {}
    for i, s in enumerate(pipe.stages):
        out[s] = _job_slo(s, i, pipe, rows[s], stage_runs[s], st, deadline, via, missed_e2e[s], period, aligned,
                          graph, params)
    return out


def _terminal(s: str, pipe: Pipeline, via: dict[str, str | None]) -> str:
    """The stage whose consumer sets `s`'s deadline; without one, the last stage downstream."""
    seen = set()
    while s not in seen:
        seen.add(s)
        nxt = via[s] if s in via else next(iter(pipe.downstream(s)), None)
        if nxt is None:
            return s
        s = nxt
    return s


def _job_slo(s: str, i: int, pipe: Pipeline, rows: dict[int, tuple[_Run, float]], runs: list[_Run],
             st: dict[str, _Stage], deadline: dict[str, float], via: dict[str, str | None],
             missed_e2e: dict[int, bool], period: float, aligned: bool, graph: ProvenanceGraph,
             params: SloParams) -> JobSlo:
    d = deadline.get(s)
    avail = [0.0 if x.avail is None else max(0.0, x.avail - t0) for x, t0 in rows.values()]
    earliest = float(np.percentile(avail, params.start_percentile))
    actionable = d is not None and earliest < d
    periods = []
    for n in sorted(rows):
        x, t0 = rows[n]
        r = x.run
        end = None if r.finished_at is None else r.finished_at - t0
        late = r.start - t0 - st[s].med_start > params.late_fraction * period
        missed: bool | None = None
        if not actionable:
            state = NO_DEADLINE
        elif end is None:
            state = UNFINISHED
        else:
            missed = missed_e2e[n] and end > d
            state = MISSED if missed else LATE if late or end > d else ON_TIME
        periods.append(PeriodTimes(t0, r.run_id, r.submitted_at - t0, r.start - t0, end,
                                   None if x.avail is None else max(0.0, x.avail - t0),
                                   None if x.first is None else x.first[0] - t0,
                                   None if x.first is None else x.first[1], late, missed, state))
    term = _terminal(s, pipe, via)
    cv, slack = st[term].cv, st[term].slack
    where = "" if len(pipe.stages) == 1 else f"stage {i + 1} of {len(pipe.stages)} of pipeline {' → '.join(pipe.stages)}: "
    if d is None:
        reason = where + (st[s].why if term == s else f"no end-to-end deadline: {term}: {st[term].why}")
    elif not actionable:
        reason = where + f"inputs arrive (a = {earliest:.1f}s) after the deadline (d = {d:.1f}s)"
    else:
        v = via.get(s)
        how = st[s].why if v is None else (
            f"d = {v}'s deadline {deadline[v]:.1f}s − its typical end after this stage's "
            f"{st[v].med_end - st[s].med_end:.1f}s = {d:.1f}s (end-to-end: {term}: {st[term].why})")  # type: ignore[operator]
        reason = where + how + (f"; a = p{params.start_percentile:g} of input availability = {earliest:.1f}s "
                                f"after the period start (P = {period:g}s)")
    gaps_in = [p.start - p.in_avail for p in periods if p.in_avail is not None]
    gaps_out = [p.out_read - p.end for p in periods if p.out_read is not None and p.end is not None]
    problematic = bool((gaps_in and _cv(gaps_in) > params.problematic_cv)
                       or (gaps_out and _cv(gaps_out) > params.problematic_cv))
    producers = sorted(set().union(*(graph.producers(x.run.run_id) for x in runs)))
    consumers = sorted(set().union(*(x.consumers for x in runs)))
    return JobSlo(s, len(runs), period, aligned, tuple(periods), earliest if actionable else None,
                  d if actionable else None, cv, slack, problematic, actionable, reason, tuple(producers),
                  tuple(consumers), params.grid_origin_s, pipe.stages if len(pipe.stages) > 1 else ())

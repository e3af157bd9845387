"""One test period of the Morpheus evaluation: every job's run under one provisioning policy.

Worst case, as §9.1 counts SLO misses ("the amount of SLO violations a periodic job would incur
if no opportunistic (fair-share) capacity is available"): a job runs on its guaranteed
containers only. The cluster is the event simulator (models/job_sim.py) playing each job's true
run (history.py).

- Static (user's request, or the p95 baseline): the level from the submission until the job
  ends; it holds that many containers meanwhile.
- Morpheus: the fold's terms become LowCost requests (decisions/reservation_schedule.request_for:
  a skyline longer than its window is compressed into it, models/skyline_window.py), placed in
  job-name order into the period's plan (decisions/reservation_packing.place: LowCost); the
  period's one-off reservations are `desired_windows` of those placements, as the live loop
  submits them. Never worse than static (decisions/static_fallback.py, the live rule): a job
  LowCost does not place keeps its user's static request from its submission; a reserved run
  holds its reservation from its submission (or the window's start, if later) while the window
  lasts, and its static request from the moment the reservation is over (its input came after
  the window, or it is still running when the window — stretched by DRA — ends).
- `greedy` instead of LowCost (an ablation): the skyline as fitted, not stretched, at the
  earliest offset where it fits (reservation_packing.greedy, like YARN's greedy agent).
- Morpheus + DRA: every `tick_s` (20 s: the live jobs loop's poll of the RM apps, which is what
  DRA sees), the running jobs' demand (running + ready tasks, models/job_sim) goes with the
  ACTIVE records to decisions/reprovisioning.decide_reprovisioning; granted updates are applied
  as the RM accepting them (decisions/reservation_reconcile.fold with Outcome.SENT) and their
  placements are added to the plan until they expire — what loop/morpheus_reservations does.
Footprint: the peak of what is held (static: Σ level × container of the jobs running, exactly;
Morpheus: per plan step, the plan's load — every placement's instances and DRA's grants — plus
the largest static-fallback load within that step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from harvester.decisions.reprovisioning import DraContext, DraParams, JobDemand, decide_reprovisioning
from harvester.decisions.reservation_actions import Outcome, ReservationResult
from harvester.decisions.reservation_lifecycle import TRANSITIONS, ManagedReservation, ReservationState, by_time
from harvester.decisions.reservation_packing import Agent, lowcost, place
from harvester.decisions.reservation_plan import MEM, VC, Placement, Plan, PlanError, empty_plan
from harvester.decisions.reservation_reconcile import fold
from harvester.decisions.reservation_schedule import PlannedJob, desired_windows, plannable_terms, request_for
from harvester.decisions.static_fallback import EARLY_START, Service, run_share
from harvester.domain import Resources
from harvester.lifecycle import Lifecycle
from harvester.models.job_sim import DagRun
from harvester.models.slo_contract import Terms
from harvester.sim.morpheus.history import STEP_S, TrueRun
from harvester.sim.morpheus.workload import DAY_S, RecurringJob

PREFIX = "harvester-morpheus-sim"
NO_RESERVATION = "static: not reserved"
LATE_INPUT = "static: input after the window"
CUT = "static: running at the window's end"
EARLY = "static: started before its window"


@dataclass(frozen=True)
class JobDay:
    """One job's test run in one period, its SLO deadline (absolute, s), the fold's terms (None:
    none fitted, the job is static) and its user's static request (containers: the fallback)."""

    job: RecurringJob
    run: TrueRun
    deadline_s: float
    terms: Terms | None
    static_level: int = 0


@dataclass
class RunOutcome:
    job: str
    finish_s: float           # inf: never finished on its guaranteed containers
    deadline_s: float
    held_cs: float            # container-seconds held (static) or reserved (Morpheus) + its static fallback
    grants: int = 0
    note: str = ""            # "" reserved throughout; NO_RESERVATION, LATE_INPUT or CUT: its static share
    static_cs: float = 0.0    # of held_cs, container-seconds of static fallback

    @property
    def met(self) -> bool:
        return self.finish_s <= self.deadline_s


@dataclass
class DayResult:
    outcomes: list[RunOutcome]
    peak_memory_mb: float
    peak_vcores: float
    reasons: list[str] = field(default_factory=list)


def static_day(jobs: list[JobDay], levels: dict[str, int]) -> DayResult:
    """Every job at its static level from its submission to its end."""
    out, events = [], []
    for jd in jobs:
        n = levels[jd.job.name]
        run = DagRun(jd.run.compiled, jd.run.draws, n, start_s=jd.run.submit_s, keep_log=False)
        end = run.run_to_end()
        held_until = min(run.finish_s, run.failed_at)
        out.append(RunOutcome(jd.job.name, end, jd.deadline_s, n * (held_until - jd.run.submit_s)))
        c = jd.job.container
        events += [(jd.run.submit_s, n * c.memory_mb, n * c.vcores), (held_until, -n * c.memory_mb, -n * c.vcores)]
    events.sort(key=lambda e: (e[0], e[1]))  # releases before acquisitions at the same instant
    load = np.cumsum(np.array([[m, v] for _, m, v in events]), axis=0) if events else np.zeros((1, 2))
    return DayResult(out, float(load[:, 0].max()), float(load[:, 1].max()))


def plan_day(jobs: list[JobDay], day: int, capacity: Resources, agent: Agent = lowcost,
             period_s: float = DAY_S) -> tuple[Plan, dict[str, ManagedReservation], dict[str, str]]:
    """The agent's (LowCost's) placements of the period's jobs, their one-off reservations, and
    why each job without one has none. Period `day` starts at day × period_s; the plan is one
    day (the LCM)."""
    plan = empty_plan(capacity, int(DAY_S / STEP_S), STEP_S)
    planned, reasons = [], {}
    start = day * period_s
    instance_ms: dict[str, int] = {}  # a one-off (§6): the instance starting in this period
    for jd in sorted(jobs, key=lambda j: j.job.name):
        if jd.terms is None:
            reasons[jd.job.name] = "no skyline for this α"
            continue
        try:
            terms = plannable_terms(jd.terms, plan.lcm_steps, start)
            if terms.instance_s is not None:
                instance_ms[jd.job.name] = int(round(terms.instance_s * 1000))
            req = request_for(jd.job.name, terms, jd.job.container, STEP_S, 1, plan.lcm_steps)
            decision, plan = place(plan, req, agent)
        except PlanError as exc:  # a period not dividing the day, a skyline that cannot fit its window
            reasons[jd.job.name] = str(exc)
            continue
        if decision.accepted and decision.placement is not None:
            planned.append(PlannedJob(jd.job.name, terms, decision.placement))
        else:
            reasons[jd.job.name] = decision.reason
    desired, problems = desired_windows(start - 1.0, planned, step_s=STEP_S, lead_s=period_s + DAY_S, min_lead_s=0.0,
                                        recurring=False, prefix=PREFIX)
    records = {}
    for i, d in enumerate(sorted(desired.values(), key=lambda d: d.key)):
        if d.period_start_ms != instance_ms.get(d.job, int(round(start * 1000))):
            continue
        life = Lifecycle.start(d.key, TRANSITIONS, ReservationState.SCHEDULED, start, "simulated submit")
        records[d.job] = ManagedReservation(d.key, d.job, d.period_start_ms, d.spec, d.spec, life,
                                            reservation_id=f"reservation_{day}_{i:04d}")
    for p in problems:
        reasons.setdefault(p.split(":", 1)[0], p)
    for jd in jobs:
        if jd.job.name not in records:
            reasons.setdefault(jd.job.name, "no window in this period")
    return plan, records, reasons


@dataclass(frozen=True)
class _Hold:
    """A run's static fallback: `level` containers of `container` over [start, end)."""

    job: str
    start: float
    end: float
    level: int
    container: Resources


@dataclass
class _Live:
    jd: JobDay
    run: DagRun | None = None
    finish_s: float = math.inf
    done: bool = False
    note: str = ""
    static_from: float | None = None   # when it fell back to its static share


def _static(lv: _Live, t: float, note: str, holds: list[_Hold]) -> None:
    """From `t` on, the run holds its user's static request to its end (decisions/static_fallback.run_share)."""
    jd, level = lv.jd, lv.jd.static_level
    if level < 1:
        raise ValueError(f"{jd.job.name}: no static request to fall back to")
    if lv.run is None:
        t = max(t, jd.run.submit_s)
        lv.run = DagRun(jd.run.compiled, jd.run.draws, level, start_s=t, keep_log=False)
    else:
        lv.run.set_allocation(level)
    end = lv.run.run_to_end()
    lv.finish_s, lv.done, lv.note, lv.static_from = end, True, note, t
    holds.append(_Hold(jd.job.name, t, min(lv.run.finish_s, lv.run.failed_at), level, jd.job.container))


def morpheus_day(jobs: list[JobDay], day: int, capacity: Resources, *, dra: bool, tick_s: float = 20.0,
                 dra_params: DraParams = DraParams(), agent: Agent = lowcost, period_s: float = DAY_S,
                 early: Sequence[str] = EARLY_START) -> DayResult:
    """The period under Morpheus' reservations, with or without DRA, never worse than static
    (module docstring); `early`: the reasons a run starts at once before its window (an ablation)."""
    plan, records, why_not = plan_day(jobs, day, capacity, agent, period_s)
    base = plan.load.copy()
    live = {jd.job.name: _Live(jd) for jd in jobs}
    holds: list[_Hold] = []
    released: set[str] = set()
    for name, lv in live.items():
        if name not in records:
            _static(lv, lv.jd.run.submit_s, NO_RESERVATION, holds)
    grants: dict[str, float] = {}
    n_grants: dict[str, int] = {}
    granted = np.zeros_like(base)
    t = min((r.spec.arrival_ms / 1000 for r in records.values()), default=math.inf)
    t = math.floor(min(t, min((lv.jd.run.submit_s for lv in live.values()), default=t)) / tick_s) * tick_s
    while not all(lv.done for lv in live.values()):
        t_ms = int(round(t * 1000))
        for name, r in records.items():
            state = by_time(r.spec, t_ms)
            if state is not r.state and r.lifecycle.can(state):
                records[name] = r.to(state, t, "by time")
        for name, lv in live.items():
            if not lv.done and lv.run is not None:
                lv.run.advance(t)
                if lv.run.ended_by(t):
                    lv.finish_s = lv.run.finish_s if lv.run.failed_at == math.inf else math.inf
                    lv.done = True
        if dra:
            for gid, until in list(grants.items()):
                if until <= t:
                    plan = plan.remove(gid)
                    del grants[gid]
            plan = _dra(t, live, records, plan, grants, n_grants, dra_params, granted)
        for name, lv in live.items():
            if lv.done:
                continue
            if lv.run is None and t + tick_s <= lv.jd.run.submit_s:
                continue
            longest = 0 if lv.jd.terms is None else int(lv.jd.terms.longest_run_s * 1000)
            share = run_share(records[name].spec, max(t_ms, int(lv.jd.run.submit_s * 1000)), lv.jd.static_level,
                              lv.run is not None, int(lv.jd.deadline_s * 1000), longest, early)
            if share.service is Service.STATIC:
                late = t_ms >= records[name].spec.deadline_ms
                at_once = lv.run is None and not late
                _static(lv, t, CUT if lv.run is not None else LATE_INPUT if late else EARLY, holds)
                if at_once:  # started on its static share before its window: the period's reservation is released
                    _add(base, _instance(records[name], plan), plan.lcm_steps, -1)
                    released.add(name)
            elif share.containers < 1:
                continue  # before the window opens: it waits for it
            elif lv.run is None:
                lv.run = DagRun(lv.jd.run.compiled, lv.jd.run.draws, share.containers, start_s=max(t, lv.jd.run.submit_s))
            elif share.containers != lv.run.allocation:
                lv.run.set_allocation(share.containers)
        t += tick_s
    out = []
    for name, lv in live.items():
        r = records.get(name)
        reserved = 0.0 if r is None or name in released else sum(s.containers * s.duration_ms / 1000 for s in r.spec.stages)
        static = sum(h.level * (h.end - h.start) for h in holds if h.job == name)
        out.append(RunOutcome(name, lv.finish_s, lv.jd.deadline_s, reserved + static, n_grants.get(name, 0), lv.note,
                              static))
    peak = _peak(base + granted, holds, plan.step_s)
    return DayResult(out, float(peak[MEM]), float(peak[VC]), [f"{k}: {v}" for k, v in sorted(why_not.items())])


def _peak(reserved: np.ndarray, holds: list[_Hold], step_s: float) -> np.ndarray:
    """Per resource, the largest (reserved load of a plan step + the static holds' largest load
    within that step), holds placed on the plan's day (time mod the LCM) at 1-s resolution."""
    lcm = reserved.shape[1]
    per = int(round(step_s))
    day = lcm * per
    diff = np.zeros((2, day + 1))
    for h in holds:
        n, c = h.level, h.container
        lo, hi = int(math.floor(h.start)), int(math.ceil(h.end))
        if hi <= lo:
            continue
        for x0, x1 in _wrapped(lo, hi, day):
            diff[:, x0] += (n * c.memory_mb, n * c.vcores)
            diff[:, x1] -= (n * c.memory_mb, n * c.vcores)
    static = np.cumsum(diff[:, :day], axis=1).reshape(2, lcm, per).max(axis=2)
    return (reserved + static).max(axis=1)


def _wrapped(lo: int, hi: int, day: int) -> list[tuple[int, int]]:
    """[lo, hi) seconds on the plan's day, split where it wraps past midnight."""
    if hi - lo >= day:
        return [(0, day)]
    a = lo % day
    b = a + hi - lo
    return [(a, b)] if b <= day else [(a, day), (0, b - day)]


def _dra(t: float, live: dict[str, _Live], records: dict[str, ManagedReservation], plan: Plan,
         grants: dict[str, float], n_grants: dict[str, int], params: DraParams, granted: np.ndarray) -> Plan:
    """One DRA tick over every job (one plan; containers differ per job, so one call per job)."""
    for name, lv in live.items():
        r = records.get(name)
        if lv.done or lv.run is None or r is None or r.state is not ReservationState.ACTIVE:
            continue
        c = lv.jd.job.container
        running, pending = int(lv.run.running_at(t).sum()), int(lv.run.pending_at(t).sum())
        demand = JobDemand(name, (lv.jd.run.run_id,), Resources(running * c.memory_mb, running * c.vcores),
                           Resources(pending * c.memory_mb, pending * c.vcores))
        decision = decide_reprovisioning(DraContext(t, t, [r], {name: demand}, plan, 0.0, c, params,
                                                   static={name: lv.jd.static_level}))
        for g in decision.grants:
            new, _ = fold({r.key: r}, [ReservationResult(g.action, Outcome.SENT, r.reservation_id)], t)
            records[name] = r = new[r.key]
            plan = plan.add(g.placement)
            _add(granted, g.placement, plan.lcm_steps)
            grants[g.placement.job_id] = g.until
            n_grants[name] = n_grants.get(name, 0) + 1
    return plan


def _add(load: np.ndarray, p: Placement, lcm: int, sign: int = 1) -> None:
    """A grant's extra containers into the footprint (grants are increments over the
    reservation as it was, so they add up without counting a container twice), or a released
    period's reservation out of it (`sign` -1)."""
    steps = p.steps(lcm)
    alloc = np.broadcast_to(np.asarray(p.alloc, dtype=np.int64), steps.shape)
    np.add.at(load[MEM], steps, sign * alloc * p.container.memory_mb)
    np.add.at(load[VC], steps, sign * alloc * p.container.vcores)


def _instance(r: ManagedReservation, plan: Plan) -> Placement:
    """One period's reservation as a placement of that instance only (on the plan's day)."""
    step_ms = int(round(plan.step_s * 1000))
    alloc = tuple(r.spec.per_step(step_ms))
    start = int(r.spec.arrival_ms // step_ms) % plan.lcm_steps
    c = r.spec.stages[0].container
    return Placement(f"release:{r.key}", c, plan.lcm_steps, start, alloc)

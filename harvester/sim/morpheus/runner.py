"""One test day of the Morpheus evaluation: every job's run under one provisioning policy.

Worst case, as §9.1 counts SLO misses ("the amount of SLO violations a periodic job would incur
if no opportunistic (fair-share) capacity is available"): a job runs on its guaranteed
containers only. The cluster is the event simulator (models/job_sim.py) playing each job's true
run (history.py).

- Static (user's request, or the p95 baseline): the level from the submission until the job
  ends; it holds that many containers meanwhile.
- Morpheus: the fold's terms become LowCost requests (decisions/reservation_schedule.request_for),
  placed in job-name order into one day's plan (decisions/reservation_packing.place: LowCost);
  the day's one-off reservations are `desired_windows` of those placements, as the live loop
  submits them. A job uses its reservation from its submission (or the window's start, if
  later) while the window lasts; a job still running when its window (and any grant) ends is a
  miss — it has no guaranteed capacity after that.
- `greedy` instead of LowCost (an ablation): the skyline as fitted, not stretched, at the
  earliest offset where it fits (reservation_packing.greedy, like YARN's greedy agent).
- Morpheus + DRA: every `tick_s` (20 s: the live jobs loop's poll of the RM apps, which is what
  DRA sees), the running jobs' demand (running + ready tasks, models/job_sim) goes with the
  ACTIVE records to decisions/reprovisioning.decide_reprovisioning; granted updates are applied
  as the RM accepting them (decisions/reservation_reconcile.fold with Outcome.SENT) and their
  placements are added to the plan until they expire — what loop/morpheus_reservations does.
Footprint: the peak, over the day, of the resources held (static: Σ level × container of the
jobs running; Morpheus: the plan's load, grants included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from harvester.decisions.reprovisioning import DraContext, DraParams, JobDemand, decide_reprovisioning
from harvester.decisions.reservation_actions import Outcome, ReservationResult
from harvester.decisions.reservation_lifecycle import TRANSITIONS, ManagedReservation, ReservationState, by_time
from harvester.decisions.reservation_packing import Agent, lowcost, place
from harvester.decisions.reservation_plan import MEM, VC, Plan, PlanError, empty_plan
from harvester.decisions.reservation_reconcile import fold
from harvester.decisions.reservation_schedule import PlannedJob, desired_windows, request_for
from harvester.domain import Resources
from harvester.lifecycle import Lifecycle
from harvester.models.job_sim import DagRun
from harvester.models.slo_contract import Terms
from harvester.sim.morpheus.history import STEP_S, TrueRun
from harvester.sim.morpheus.workload import DAY_S, RecurringJob

PREFIX = "harvester-morpheus-sim"
NO_RESERVATION = "no reservation"


@dataclass(frozen=True)
class JobDay:
    """One job's test run on one day, its SLO deadline (absolute, s) and the fold's terms."""

    job: RecurringJob
    run: TrueRun
    deadline_s: float
    terms: Terms


@dataclass
class RunOutcome:
    job: str
    finish_s: float           # inf: never finished on its guaranteed containers
    deadline_s: float
    held_cs: float            # container-seconds held (static) or reserved (Morpheus)
    grants: int = 0
    note: str = ""

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


def plan_day(jobs: list[JobDay], day: int, capacity: Resources,
             agent: Agent = lowcost) -> tuple[Plan, dict[str, ManagedReservation], list[str]]:
    """The agent's (LowCost's) placements of the day's jobs and their one-off reservations."""
    plan = empty_plan(capacity, int(DAY_S / STEP_S), STEP_S)
    planned, reasons = [], []
    for jd in sorted(jobs, key=lambda j: j.job.name):
        try:
            req = request_for(jd.job.name, jd.terms, jd.job.container, STEP_S, 1, plan.lcm_steps)
            decision, plan = place(plan, req, agent)
        except PlanError as exc:  # e.g. a window shorter than one whole step
            reasons.append(f"{jd.job.name}: {exc}")
            continue
        if decision.accepted and decision.placement is not None:
            planned.append(PlannedJob(jd.job.name, jd.terms, decision.placement))
        else:
            reasons.append(f"{jd.job.name}: {decision.reason}")
    start = day * DAY_S
    desired, problems = desired_windows(start - 1.0, planned, step_s=STEP_S, lead_s=DAY_S, min_lead_s=0.0,
                                        recurring=False, prefix=PREFIX)
    records = {}
    for i, d in enumerate(sorted(desired.values(), key=lambda d: d.key)):
        if d.period_start_ms != int(start * 1000):
            continue
        life = Lifecycle.start(d.key, TRANSITIONS, ReservationState.SCHEDULED, start, "simulated submit")
        records[d.job] = ManagedReservation(d.key, d.job, d.period_start_ms, d.spec, d.spec, life,
                                            reservation_id=f"reservation_{day}_{i:04d}")
    return plan, records, reasons + problems


@dataclass
class _Live:
    jd: JobDay
    run: DagRun | None = None
    finish_s: float = math.inf
    done: bool = False
    note: str = ""


def morpheus_day(jobs: list[JobDay], day: int, capacity: Resources, *, dra: bool, tick_s: float = 20.0,
                 dra_params: DraParams = DraParams(), agent: Agent = lowcost) -> DayResult:
    """The day under Morpheus' reservations, with or without DRA (module docstring)."""
    plan, records, reasons = plan_day(jobs, day, capacity, agent)
    live = {jd.job.name: _Live(jd) for jd in jobs}
    for name, lv in live.items():
        if name not in records:
            lv.done, lv.note = True, NO_RESERVATION
    grants: dict[str, float] = {}
    n_grants: dict[str, int] = {}
    peak = plan.load.max(axis=1).astype(float)
    t = min((r.spec.arrival_ms / 1000 for r in records.values()), default=math.inf)
    t = math.floor(t / tick_s) * tick_s
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
            plan = _dra(t, live, records, plan, grants, n_grants, dra_params)
            peak = np.maximum(peak, plan.load.max(axis=1))
        for name, lv in live.items():
            if lv.done:
                continue
            r = records[name]
            have = r.spec.containers_at(t_ms)
            if lv.run is None:
                if t + tick_s <= lv.jd.run.submit_s:
                    continue
                if t_ms >= r.spec.deadline_ms:
                    lv.done, lv.note = True, "input after the window"
                    continue
                if have < 1:
                    continue
                lv.run = DagRun(lv.jd.run.compiled, lv.jd.run.draws, have, start_s=max(t, lv.jd.run.submit_s))
            elif have < 1:
                lv.done, lv.note = True, "window ended"
            elif have != lv.run.allocation:
                lv.run.set_allocation(have)
        t += tick_s
    out = []
    for name, lv in live.items():
        r = records.get(name)
        reserved = 0.0 if r is None else sum(s.containers * s.duration_ms / 1000 for s in r.spec.stages)
        out.append(RunOutcome(name, lv.finish_s, lv.jd.deadline_s, reserved, n_grants.get(name, 0), lv.note))
    return DayResult(out, float(peak[MEM]), float(peak[VC]), reasons)


def _dra(t: float, live: dict[str, _Live], records: dict[str, ManagedReservation], plan: Plan,
         grants: dict[str, float], n_grants: dict[str, int], params: DraParams) -> Plan:
    """One DRA tick over every job (one plan; containers differ per job, so one call per job)."""
    for name, lv in live.items():
        r = records.get(name)
        if lv.done or lv.run is None or r is None or r.state is not ReservationState.ACTIVE:
            continue
        c = lv.jd.job.container
        running, pending = int(lv.run.running_at(t).sum()), int(lv.run.pending_at(t).sum())
        demand = JobDemand(name, (lv.jd.run.run_id,), Resources(running * c.memory_mb, running * c.vcores),
                           Resources(pending * c.memory_mb, pending * c.vcores))
        decision = decide_reprovisioning(DraContext(t, t, [r], {name: demand}, plan, 0.0, c, params))
        for g in decision.grants:
            new, _ = fold({r.key: r}, [ReservationResult(g.action, Outcome.SENT, r.reservation_id)], t)
            records[name] = r = new[r.key]
            plan = plan.add(g.placement)
            grants[g.placement.job_id] = g.until
            n_grants[name] = n_grants.get(name, 0) + 1
    return plan

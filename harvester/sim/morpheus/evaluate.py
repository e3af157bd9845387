"""Morpheus in the simulator: SLO violations and cluster footprint (docs/evaluation/morpheus.md).

    harvester evaluate morpheus --traces ../shared/traces --out docs/evaluation

Per seed:
1. the recurring jobs of a workload (workload.py: Alibaba 2018 daily DAGs, or Alibaba 2017
   hourly batch jobs) and every run's true run (history.py);
2. leave-one-period-out: for each test period, every job's SLO (§4, fit_slo on the synthesized
   provenance of its OTHER periods) and skyline (§5, fit_skyline on those periods' runs, per α);
   a job without an actionable SLO has no deadline to meet and is not evaluated that period
   (counted, with the reason);
3. that period's runs under each policy (runner.py), the same draws for all:
   `user` — the user's static request (history.static_levels); `p95` — the strongest static
   baseline, the 95th percentile of the training runs' peak containers; `morpheus[α]` —
   LowCost reservations of the α skylines; `morpheus+dra[α]` — the same with DRA (§7);
   `greedy[α]`, `greedy+dra[α]` — the ablation without LowCost (the skyline as fitted, earliest).
   Every reservation policy is never worse than static (decisions/static_fallback.py): a job
   without a reservation, and a run outside its reservation, holds the user's static request;
4. footprints: each period's peak of what is held (static fallbacks included); for a
   reservation policy also the p95 baseline's peak over only the jobs it reserved;
5. Morpheus plans into a cluster the size of the user baseline's largest peak (the users'
   cluster today, the paper's "match the user utilization level" setting, §9.1 Fig. 10b);
6. the cluster-size sweep (§9.1 Fig. 10a): `sweep` plan capacities, as fractions of the p95
   baseline's largest period peak, for morpheus and morpheus+dra at the main α.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

from harvester.decisions.reservation_packing import Agent, greedy, lowcost
from harvester.decisions.static_fallback import EARLY_START
from harvester.domain import Resources
from harvester.observability.progress import Progress
from harvester.sim.morpheus.history import Fitted, consumer_time, fit_job, job_slack, p95_peak, static_levels, true_run
from harvester.sim.morpheus.runner import NO_RESERVATION, DayResult, JobDay, morpheus_day, static_day
from harvester.sim.morpheus.workload import RecurringJob, load_recurring

PAPER = ("OSDI'16 §1/§9.1: 5× to 13× fewer (worst-case) SLO violations than user-defined static provisioning, "
         "and 14 % to 28 % less cluster footprint; Fig. 10a: 19 % smaller cluster for the baseline's attainment")


@dataclass(frozen=True)
class EvalPlan:
    traces_dir: Path
    alphas: tuple[float, ...] = (0.001, 0.01, 0.1, 0.5)
    seeds: tuple[int, ...] = (1, 2, 3)
    min_days: int | None = None         # periods with a run for a job to count (None: the workload's)
    tick_s: float = 20.0
    slack: tuple[float, float] = (0.25, 3.0)   # the consumer's slack ratio, U(lo, hi) per job (history.py)
    jobs: tuple[str, ...] = ()          # only these jobs (names from workload.py); empty: all
    workload: str = "alibaba-2018"      # workload.WORKLOADS
    sweep: tuple[float, ...] = ()       # plan capacities for the Fig. 10a sweep, × the p95 baseline's largest peak
    policies: tuple[str, ...] = ("morpheus", "morpheus+dra", "greedy", "greedy+dra")
    early_start: tuple[str, ...] = EARLY_START   # decisions/static_fallback.start_at_once's rules (an ablation)
    # What a job not reserved runs with, and the cluster Morpheus plans in: "user" the users' static
    # requests (history.static_levels, synthesized: no trace records them), "p95" the 95th percentile
    # of the job's other runs' peaks (`harvester whatif`: the same level as the static baseline it is
    # compared with, since a store knows no quotas either)
    static_fallback: Literal["user", "p95"] = "user"

    @property
    def main_alpha(self) -> float:
        return 0.01 if 0.01 in self.alphas else self.alphas[0]

    def load(self) -> list[RecurringJob]:
        extra = {} if self.min_days is None else {"min_days": self.min_days}
        return load_recurring(self.traces_dir, self.workload, **extra)


#: Reservation policies: (the placement agent, DRA on). `greedy` is the ablation without LowCost.
RESERVING: dict[str, tuple[Agent, bool]] = {"morpheus": (lowcost, False), "morpheus+dra": (lowcost, True),
                                            "greedy": (greedy, False), "greedy+dra": (greedy, True)}
SWEPT = ("morpheus", "morpheus+dra")


@dataclass
class SeedResult:
    rows: list[dict[str, Any]] = field(default_factory=list)       # one per (day, policy, alpha, job)
    days: list[dict[str, Any]] = field(default_factory=list)       # one per (day, policy, alpha): footprint
    slos: list[dict[str, Any]] = field(default_factory=list)       # per (day, job): a_j, d_j, submit, p95 level
    excluded: list[dict[str, Any]] = field(default_factory=list)   # (day, job, why) not evaluated
    jobs: list[dict[str, Any]] = field(default_factory=list)       # per job: user level and ratio, slack, c_j
    sweep: list[dict[str, Any]] = field(default_factory=list)      # per (day, policy, capacity factor)


def run_seed(plan: EvalPlan, seed: int, jobs: Sequence[RecurringJob] | None = None) -> SeedResult:
    """Everything for one seed (module docstring)."""
    if jobs is None:
        jobs = plan.load()
    if plan.jobs:
        jobs = [j for j in jobs if j.name in plan.jobs]
    out = SeedResult()
    runs = {j.name: {d: true_run(j, d, seed) for d in j.days} for j in jobs}
    consumer, user = {}, {}
    for j in jobs:
        slack = job_slack(j, seed, *plan.slack)
        consumer[j.name] = consumer_time(list(runs[j.name].values()), slack)
        user[j.name], ratio = static_levels(j, list(runs[j.name].values()), seed)
        peaks = [r.peak for r in runs[j.name].values()]
        out.jobs.append({"seed": seed, "job": j.name, "days": len(j.days), "period_s": j.period_s,
                         "stages": len(j.runs[j.days[0]].stages),
                         "tasks": [j.runs[d].tasks for d in j.days], "container": [j.container.memory_mb, j.container.vcores],
                         "peaks": peaks, "makespans_s": [round(r.makespan_s, 1) for r in runs[j.name].values()],
                         "user_level": user[j.name], "user_ratio": round(ratio, 3), "slack": round(slack, 3),
                         "consumer_s": round(consumer[j.name], 1)})
    all_days = sorted({d for j in jobs for d in j.days})
    folds: dict[tuple[int, float], list[JobDay]] = {}
    statics: dict[int, list[JobDay]] = {}
    p95s: dict[tuple[int, str], int] = {}
    period = {j.name: j.period_s for j in jobs}
    for day in all_days:
        for j in jobs:
            if day not in j.runs:
                continue
            train = [r for d, r in runs[j.name].items() if d != day]
            fits = {a: fit_job(j, train, consumer[j.name], a, seed) for a in plan.alphas}
            slo = next(iter(fits.values())).slo
            if slo.deadline_s is None or not slo.actionable:
                out.excluded.append({"seed": seed, "day": day, "job": j.name, "why": f"SLO: {slo.reason}"})
                continue
            deadline = day * j.period_s + slo.deadline_s
            p95 = p95_peak(train)
            fallback = p95 if plan.static_fallback == "p95" else user[j.name]
            for a, f in fits.items():
                if f.terms is None:
                    out.excluded.append({"seed": seed, "day": day, "job": j.name, "alpha": a,
                                         "why": f"{f.why} (served static)"})
                folds.setdefault((day, a), []).append(JobDay(j, runs[j.name][day], deadline, f.terms, fallback))
            statics.setdefault(day, []).append(JobDay(j, runs[j.name][day], deadline, _any_terms(fits), fallback))
            out.slos.append({"seed": seed, "day": day, "job": j.name,
                             "a_s": round(slo.earliest_start_s or 0.0, 1), "d_s": round(slo.deadline_s, 1),
                             "period_s": slo.period_s,
                             "submit_s": round(runs[j.name][day].submit_s - day * j.period_s, 1), "p95_level": p95})
            p95s[(day, j.name)] = p95
    cap_mem = cap_vc = p95_mem = p95_vc = 0.0
    p95_days: dict[int, DayResult] = {}
    for day, jd in statics.items():
        p95_res = static_day(jd, {x.job.name: p95s[(day, x.job.name)] for x in jd})
        user_res = static_day(jd, {x.job.name: user[x.job.name] for x in jd})
        _collect(out, seed, day, "user", None, user_res, p95_res)
        _collect(out, seed, day, "p95", None, p95_res, p95_res)
        cap_mem, cap_vc = max(cap_mem, user_res.peak_memory_mb), max(cap_vc, user_res.peak_vcores)
        p95_mem, p95_vc = max(p95_mem, p95_res.peak_memory_mb), max(p95_vc, p95_res.peak_vcores)
        p95_days[day] = p95_res
    if plan.static_fallback == "p95":
        cap_mem, cap_vc = p95_mem, p95_vc
    capacity = Resources(int(math.ceil(cap_mem)), int(math.ceil(cap_vc)))
    same: dict[tuple[int, tuple[str, ...]], DayResult] = {}
    for (day, a), jd in sorted(folds.items()):
        p_s = period[jd[0].job.name]
        for pol in plan.policies:
            agent, dra = RESERVING[pol]
            res = morpheus_day(jd, day, capacity, dra=dra, tick_s=plan.tick_s, agent=agent, period_s=p_s,
                               early=plan.early_start)
            # the p95 baseline's peak over the jobs this plan reserved: footprints on the same jobs
            held = tuple(sorted(o.job for o in res.outcomes if o.note != NO_RESERVATION))
            if (day, held) not in same:
                same[(day, held)] = static_day([x for x in statics[day] if x.job.name in held],
                                               {n: p95s[(day, n)] for n in held})
            _collect(out, seed, day, pol, a, res, same[(day, held)])
        if a != plan.main_alpha:
            continue
        for f in plan.sweep:
            cap = Resources(max(1, int(f * p95_mem)), max(1, int(f * p95_vc)))
            for pol in SWEPT:
                agent, dra = RESERVING[pol]
                res = morpheus_day(jd, day, cap, dra=dra, tick_s=plan.tick_s, agent=agent, period_s=p_s,
                                   early=plan.early_start)
                out.sweep.append({"seed": seed, "day": day, "policy": pol, "alpha": a, "capacity_factor": f,
                                  "capacity": [cap.memory_mb, cap.vcores], "runs": len(res.outcomes),
                                  "missed": sorted(o.job for o in res.outcomes if not o.met),
                                  "static_runs": sum(1 for o in res.outcomes if o.note),
                                  "unreserved": sum(1 for o in res.outcomes if o.note == NO_RESERVATION),
                                  "peak_memory_mb": res.peak_memory_mb, "peak_vcores": res.peak_vcores,
                                  "p95_peak_memory_mb": p95_days[day].peak_memory_mb,
                                  "p95_peak_vcores": p95_days[day].peak_vcores})
    return out


def _any_terms(fits: dict[float, Fitted]):  # type: ignore[no-untyped-def]
    return next((f.terms for f in fits.values() if f.terms is not None), None)


def _collect(out: SeedResult, seed: int, day: int, policy: str, alpha: float | None, res: DayResult,
             p95_same: DayResult | None = None) -> None:
    for o in res.outcomes:
        out.rows.append({"seed": seed, "day": day, "job": o.job, "policy": policy, "alpha": alpha, "met": o.met,
                         "late_s": None if math.isinf(o.finish_s) else round(o.finish_s - o.deadline_s, 1),
                         "held_cs": round(o.held_cs, 1), "grants": o.grants, "note": o.note,
                         "static_cs": round(o.static_cs, 1)})
    same = p95_same or res
    out.days.append({"seed": seed, "day": day, "policy": policy, "alpha": alpha, "peak_memory_mb": res.peak_memory_mb,
                     "peak_vcores": res.peak_vcores, "p95_same_jobs_peak_memory_mb": same.peak_memory_mb,
                     "p95_same_jobs_peak_vcores": same.peak_vcores, "reasons": res.reasons})


def run_plan(plan: EvalPlan, processes: int = 1, progress: bool = False) -> list[SeedResult]:
    """Every seed, in plan order (one process per seed); progress on a terminal when `progress`."""
    jobs = plan.load()
    with Progress(len(plan.seeds), "evaluate morpheus", quiet=not progress, unit="seeds") as bar:
        if processes <= 1:
            results = []
            for s in plan.seeds:
                results.append(run_seed(plan, s, jobs))
                bar.advance(note=f"seed {s}: {len(results[-1].rows)} rows")
            return results
        with ProcessPoolExecutor(max_workers=processes) as pool:
            futures = [pool.submit(run_seed, plan, s, jobs) for s in plan.seeds]
            for fut in as_completed(futures):
                bar.advance(note=f"{len(fut.result().rows)} rows")
            return [f.result() for f in futures]

"""Morpheus vs the jobs' static allocations on the recorded recurring jobs (Morpheus §9.1, issue 28).

Reuses the evaluation's runner (harvester/sim/morpheus: `static_day`, `morpheus_day` with LowCost
and DRA, never worse than static) on the recorded runs instead of trace runs:

- every recurring name (inputs.periods) becomes a `RecurringJob` whose period-k run is its
  recorded run submitted in period k, as a one-stage job holding its skyline (inputs.job_of);
  only the last `MAX_PERIODS` periods are evaluated (each is tested against all the others as
  training, as the evaluation does: the cost grows with the square of the periods);
- **SLOs**: a job with an accepted SLO contract in the store is judged against it (its period,
  grid origin, deadline and skyline, the contract's terms: what the live loop would reserve);
  without contracts the evaluation's own inference runs (`evaluate.run_seed`: §4 on the runs with
  the evaluation's synthesized consumer reads — said so in the report);
- **static**: the strongest static baseline, the 95th percentile of the other runs' peaks
  (`history.p95_peak`; the store does not know a user's requested quota). It is also what a job
  Morpheus does not reserve runs with, and the cluster Morpheus plans in is the static baseline's
  (`EvalPlan.static_fallback="p95"`): the evaluation's synthesized user quotas have no place in a
  replay of the operator's own jobs (with them a job whose synthesized quota was 1 vcore missed
  every period it was not reserved, against 0 misses for static).
Jobs are grouped by period (the runner plans one period length at a time).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from harvester.domain import Resources
from harvester.models.job_history import JobRun
from harvester.models.slo_contract import SloContract
from harvester.sim.morpheus.history import STEP_S, p95_peak, true_run
from harvester.sim.morpheus.runner import NO_RESERVATION
from harvester.sim.morpheus.workload import RecurringJob
from harvester.sim.workload import JobSpec
from harvester.whatif.inputs import job_of, periods
from harvester.whatif.recorded import Recorded

MAX_PERIODS = 14
MIN_PERIODS = 3
SEED = 1


def recurring_jobs(runs: Sequence[JobRun], slos: Mapping[str, SloContract]) -> list[tuple[RecurringJob, float]]:
    """(job in its period frame, frame origin): periods from the contract, else the median gap."""
    per = periods(runs)
    by: dict[str, list[JobRun]] = {}
    for r in runs:
        if r.job_name in per:
            by.setdefault(r.job_name, []).append(r)
    out = []
    for name, rs in sorted(by.items()):
        c = slos.get(name)
        terms = c.accepted if c is not None else None
        period = terms.period_s if terms is not None else per[name]
        origin = terms.grid_origin_s if terms is not None else math.floor(min(r.started_at for r in rs) / period) * period
        specs: dict[int, JobSpec] = {}
        for r in sorted(rs, key=lambda r: r.started_at):
            k = math.floor((r.started_at - origin) / period)
            specs.setdefault(k, job_of(r, origin=origin, period_s=period))  # the first run of each period
        keep = sorted(specs)[-MAX_PERIODS:]
        if len(keep) < MIN_PERIODS:
            continue
        st = specs[keep[0]].stages[0]
        container = Resources(max(s.stages[0].memory_mb for s in specs.values()), max(s.stages[0].vcores for s in specs.values()))
        out.append((RecurringJob(name, (name,), {k: specs[k] for k in keep}, container, period), origin))
        del st
    return out


def _contract_days(jobs: list[tuple[RecurringJob, float]], slos: Mapping[str, SloContract]) -> dict[str, Any]:
    from harvester.sim.morpheus.runner import JobDay, morpheus_day, static_day

    groups: dict[float, list[RecurringJob]] = {}
    for j, _ in jobs:
        groups.setdefault(j.period_s, []).append(j)
    res = {"static": {"slo_misses": 0, "runs": 0, "footprint_peak_vcores": 0.0, "footprint_peak_memory_mb": 0.0},
           "morpheus": {"slo_misses": 0, "runs": 0, "footprint_peak_vcores": 0.0, "footprint_peak_memory_mb": 0.0}}
    for period, js in groups.items():
        runs = {j.name: {d: true_run(j, d, SEED) for d in j.days} for j in js}
        for day in sorted({d for j in js for d in j.days}):
            jd, levels = [], {}
            for j in js:
                if day not in j.runs:
                    continue
                t = slos[j.name].accepted
                assert t is not None
                terms = dataclasses.replace(t, grid_origin_s=0.0)
                train = [r for d, r in runs[j.name].items() if d != day]
                levels[j.name] = p95_peak(train)
                jd.append(JobDay(j, runs[j.name][day], day * period + t.deadline_s, terms, levels[j.name]))
            if not jd:
                continue
            st = static_day(jd, levels)
            cap = Resources(int(math.ceil(st.peak_memory_mb)), int(math.ceil(st.peak_vcores)))
            mo = morpheus_day(jd, day, cap, dra=True, period_s=period)
            for name, r in (("static", st), ("morpheus", mo)):
                res[name]["runs"] += len(r.outcomes)
                res[name]["slo_misses"] += sum(1 for o in r.outcomes if not o.met)
                res[name]["footprint_peak_vcores"] = max(res[name]["footprint_peak_vcores"], r.peak_vcores)
                res[name]["footprint_peak_memory_mb"] = max(res[name]["footprint_peak_memory_mb"], r.peak_memory_mb)
    return res


def _inferred(jobs: list[tuple[RecurringJob, float]]) -> dict[str, Any]:
    from harvester.sim.morpheus.evaluate import EvalPlan, run_seed

    res = {}
    groups: dict[float, list[RecurringJob]] = {}
    for j, _ in jobs:
        groups.setdefault(j.period_s, []).append(j)
    plan = EvalPlan(traces_dir=Path("."), alphas=(0.01,), seeds=(SEED,), policies=("morpheus+dra",), static_fallback="p95")
    rows: list[dict[str, Any]] = []
    days: list[dict[str, Any]] = []
    for js in groups.values():
        out = run_seed(plan, SEED, js)
        rows += out.rows
        days += out.days
    for name, pol in (("static", "p95"), ("morpheus", "morpheus+dra")):
        mine = [r for r in rows if r["policy"] == pol]
        d = [x for x in days if x["policy"] == pol]
        res[name] = {"slo_misses": sum(1 for r in mine if not r["met"]), "runs": len(mine),
                     "footprint_peak_vcores": max((x["peak_vcores"] for x in d), default=0.0),
                     "footprint_peak_memory_mb": max((x["peak_memory_mb"] for x in d), default=0.0)}
    reserved = [r for r in rows if r["policy"] == "morpheus+dra"]
    res["morpheus"]["reserved_runs"] = sum(1 for r in reserved if r["note"] != NO_RESERVATION)
    # why a job got no reservation, one line per job (its first period's reason: they repeat)
    why: dict[str, str] = {}
    for x in days:
        if x["policy"] == "morpheus+dra":
            for line in x["reasons"]:  # "job: reason" (runner.morpheus_day); the reasons name the job again
                job, _, reason = line.partition(": ")
                why.setdefault(job, reason)
    res["morpheus"]["not_reserved_why"] = sorted(why.values())
    return res


def compare(rec: Recorded) -> dict[str, Any]:
    """Static (p95) vs Morpheus + DRA on the recorded recurring jobs (module docstring)."""
    jobs = recurring_jobs(rec.jobs, rec.slos)
    if not jobs:
        return {"measured": False, "why": f"no recurring job with runs in {MIN_PERIODS} or more periods in the replay"}
    with_contract = [(j, o) for j, o in jobs if rec.slos.get(j.name) is not None and rec.slos[j.name].accepted is not None
                     and math.isclose(rec.slos[j.name].accepted.step_s, STEP_S)]
    if with_contract:
        res = _contract_days(with_contract, rec.slos)
        slo_source = f"the store's accepted SLO contracts ({len(with_contract)} jobs)"
    else:
        res = _inferred(jobs)
        slo_source = ("no accepted SLO contract in the store: SLOs inferred by the Morpheus evaluation's own §4 "
                      "inference on the recorded runs, with its synthesized consumer reads")
    n = len(with_contract) or len(jobs)
    s, m = res["static"], res["morpheus"]
    md = [f"{n} recurring jobs, their last ≤ {MAX_PERIODS} periods each; SLOs from {slo_source}; static = the 95th "
          "percentile of the other runs' peaks (the store does not know users' quotas).", "",
          "| | runs | SLO misses | peak vcores | peak memory (MB) |", "|---|---:|---:|---:|---:|"]
    md += [f"| {k} | {v['runs']} | {v['slo_misses']} | {v['footprint_peak_vcores']:,.0f} | {v['footprint_peak_memory_mb']:,.0f} |"
           for k, v in (("static (p95)", s), ("Morpheus + DRA", m))]
    if "reserved_runs" in m:
        md += ["", f"Morpheus reserved {m['reserved_runs']} of {m['runs']} runs; the others ran at the static level."]
        md += [f"- not reserved: {line}" for line in m["not_reserved_why"]]
    return {"measured": True, "jobs": n, "slo_source": slo_source, "static": s, "morpheus": m, "markdown": md}

"""JSON documents of Morpheus's state (the admin routes serve them, `harvester slo` prints them):
built from the board's items only (board/morpheus.py).

- `slo_row(...)`: one job in `GET /v1/morpheus/slos`: runs, the inferred SLO or why none,
  the skyline's size, its contract, whether LowCost placed it and its current reservation, and
  how it is served (`service`: reserved, or static fallback and why, decisions/static_fallback.py);
- `slo_detail(...)`: `GET /v1/morpheus/slo?job=`: the row plus every period's times (§4), the
  skyline per step and in the Resource Estimator's answer form, the proposal and the terms in
  force, the placement with LowCost's reason, the contract's and the reservations' status
  histories;
- `reservations_doc(...)`: `GET /v1/morpheus/reservations`: the plan and every managed
  reservation (state, definition, status history, events), DRA grants, nudges, recent actions.
Times are epoch seconds; reservation times the RM's epoch ms.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from harvester.board.morpheus import JobModel, MorpheusModel, PlannedEntry, ReservationsView
from harvester.decisions.reservation_actions import ReservationSpec
from harvester.decisions.reservation_lifecycle import ManagedReservation
from harvester.decisions.static_fallback import start_by
from harvester.models.skyline_formats import to_estimator_json
from harvester.models.slo_contract import ContractState, SloContract, Terms, effective_terms, fit_note, fit_warning
from harvester.models.slo_inference import LATE, JobSlo


def _num(x: float | None, nd: int = 3) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), nd)


def violation_rate(slo: JobSlo) -> float | None:
    """Share of the periods with a known outcome that MISSED: the end-to-end deadline was missed
    and this stage ended after its own d_j (§4; models/slo_inference.py). None without a deadline."""
    known = [p.missed_deadline for p in slo.periods if p.missed_deadline is not None]
    return None if not known else sum(known) / len(known)


def late_rate(slo: JobSlo) -> float | None:
    """Share of those periods that were LATE (a late start or past d_j) but met the end-to-end deadline."""
    known = [p for p in slo.periods if p.missed_deadline is not None]
    return None if not known else sum(p.state == LATE for p in known) / len(known)


def spec_doc(spec: ReservationSpec) -> dict[str, Any]:
    return {"name": spec.name, "arrival_ms": spec.arrival_ms, "deadline_ms": spec.deadline_ms,
            "interpreter": spec.interpreter, "recurrence_ms": spec.recurrence_ms,
            "stages": [{"containers": s.containers, "gang": s.gang, "duration_ms": s.duration_ms,
                        "container": {"memory_mb": s.container.memory_mb, "vcores": s.container.vcores}}
                       for s in spec.stages]}


def record_doc(r: ManagedReservation, *, history: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "key": r.key, "job": r.job, "reservation_id": r.reservation_id, "state": r.state.value,
        "since": r.lifecycle.since, "reason": r.lifecycle.history[-1].reason, "period_start_ms": r.period_start_ms,
        "arrival_ms": r.spec.arrival_ms, "deadline_ms": r.spec.deadline_ms, "grant_until": r.grant_until,
        "last_error": r.last_error or None, "capacity_refusals": r.refusals, "retry_at": r.retry_at,
    }
    if history:
        doc["definition"] = spec_doc(r.spec)
        doc["history"] = [{"at": c.at, "state": c.state.value, "reason": c.reason} for c in r.lifecycle.history]
        doc["events"] = [{"at": at, "event": e} for at, e in r.events]
    return doc


def contract_doc(c: SloContract | None, *, history: bool = False) -> dict[str, Any]:
    if c is None:
        return {"state": ContractState.PROPOSED.value, "since": None, "by": None}
    doc: dict[str, Any] = {"state": c.state.value, "since": c.lifecycle.since, "by": c.by or None}
    if history:
        doc["history"] = [{"at": ch.at, "state": ch.state.value, "reason": ch.reason} for ch in c.lifecycle.history]
        doc["accepted"] = None if c.accepted is None else terms_doc(c.accepted)
        doc["override"] = None if c.override is None else asdict(c.override)
    return doc


def terms_doc(t: Terms) -> dict[str, Any]:
    return {"period_s": t.period_s, "earliest_s": _num(t.earliest_s), "deadline_s": _num(t.deadline_s),
            "grid_origin_s": t.grid_origin_s, "step_s": t.step_s, "problematic": t.problematic,
            "memory_mb": list(t.memory_mb), "vcores": list(t.vcores), "longer_runs": t.longer_runs,
            "longest_run_s": _num(t.longest_run_s)}


def slo_row(j: JobModel, contract: SloContract | None, view: ReservationsView, now: float) -> dict[str, Any]:
    s, sky = j.slo, j.skyline
    planned = next((e for e in view.planned if e.job == j.job), None)
    current = view.current(j.job, now)
    return {
        "job": j.job, "runs": j.runs, "synthesized_runs": j.synthesized, "actionable": s.actionable,
        "reason": s.reason, "period_s": s.period_s, "lcm_aligned": s.lcm_aligned,
        "earliest_s": _num(s.earliest_start_s), "deadline_s": _num(s.deadline_s), "cv_out_read": _num(s.cv_out_read),
        "slack_ratio": _num(s.slack_ratio), "problematic": s.problematic, "violation_rate": _num(violation_rate(s)),
        "late_rate": _num(late_rate(s)), "pipeline": list(s.pipeline),
        "skyline": {"runs": j.skyline_runs, "steps": None if sky is None else sky.steps,
                    "peak_memory_mb": None if sky is None else int(sky.memory_mb.max(initial=0)),
                    "peak_vcores": None if sky is None else int(sky.vcores.max(initial=0)),
                    "reason": j.proposal.skyline_reason},
        "contract": contract_doc(contract),
        "planned": planned is not None,
        "plan_reason": planned.placement.reason if planned is not None else view.not_planned.get(j.job),
        "warning": terms_warning(j, contract) or None,
        "fitted_as": terms_note(j, contract) or None,
        "reservation": None if current is None else record_doc(current, history=False),
        "service": service_doc(view, j.job),
        "start_at_once_until": start_until(planned, current),
    }


def start_until(planned: PlannedEntry | None, current: ManagedReservation | None) -> float | None:
    """For the job's scheduler: until when (epoch s) a run whose input is ready before its current
    or next reservation opens starts at once in its own queue instead of waiting for it
    (decisions/static_fallback.start_by, from the job's longest past run); None: it waits."""
    if planned is None or current is None or current.spec.recurrence_ms:
        return None
    t = planned.terms
    by = start_by(current.spec, current.period_start_ms + int(t.deadline_s * 1000), int(t.longest_run_s * 1000))
    return None if by is None or by < current.period_start_ms else by / 1000.0  # before the period: no run can


def service_doc(view: ReservationsView, job: str) -> dict[str, Any] | None:
    """How the reservation loop serves `job` now (None before its first tick)."""
    s = view.services.get(job)
    return None if s is None else {"service": s.service.value, "why": s.why}


def terms_warning(j: JobModel, contract: SloContract | None) -> str:
    """`fit_warning` of the terms the job would be planned from once signed off (the proposal
    while PROPOSED, the accepted or overridden terms after), "" when they fit."""
    terms, _ = effective_terms(j.proposal, contract, False)
    return "" if terms is None else fit_warning(terms)


def terms_note(j: JobModel, contract: SloContract | None) -> str:
    """`fit_note` of those terms: how the reservation departs from them to fit the window."""
    terms, _ = effective_terms(j.proposal, contract, False)
    return "" if terms is None else fit_note(terms)


def _placement(e: PlannedEntry | None) -> dict[str, Any] | None:
    if e is None:
        return None
    p = e.placement
    return {"offset_steps": p.start, "period_steps": p.period_steps, "containers_per_step": list(p.alloc),
            "reason": p.reason, "terms_from": e.why, "terms": terms_doc(e.terms)}


def slo_detail(j: JobModel, contract: SloContract | None, view: ReservationsView, now: float) -> dict[str, Any]:
    doc = slo_row(j, contract, view, now)
    sky = j.skyline
    doc["periods"] = [{k: (_num(v) if isinstance(v, float) else v) for k, v in asdict(p).items()} for p in j.slo.periods]
    doc["producers"], doc["consumers"] = list(j.slo.producers), list(j.slo.consumers)
    doc["skyline"]["memory_mb"] = None if sky is None else [int(x) for x in sky.memory_mb]
    doc["skyline"]["vcores"] = None if sky is None else [int(x) for x in sky.vcores]
    doc["skyline"]["estimator_form"] = None if sky is None else to_estimator_json(sky.memory_mb, sky.vcores, sky.step_s)
    doc["contract"] = contract_doc(contract, history=True)
    doc["placement"] = _placement(next((e for e in view.planned if e.job == j.job), None))
    doc["reservations"] = [record_doc(r) for r in view.records if r.job == j.job]
    return doc


def slos_doc(model: MorpheusModel | None, contracts: dict[str, SloContract], view: ReservationsView,
             now: float) -> dict[str, Any]:
    if model is None:
        return {"model_version": None, "fitted_at": None, "jobs": [], "note": "no refit yet"}
    return {"model_version": model.version, "fitted_at": model.fitted_at, "single_run_names": model.single_runs,
            "provenance_events": model.provenance_events,
            "jobs": [slo_row(j, contracts.get(j.job), view, now) for j in model.jobs],
            "contracts_without_runs": sorted(set(contracts) - {j.job for j in model.jobs})}


def reservations_doc(view: ReservationsView) -> dict[str, Any]:
    return {
        "at": view.at, "mode": view.mode, "actuate": view.actuate, "listed_at": view.listed_at,
        "plan": {"capacity": None if view.plan_capacity is None else
                 {"memory_mb": view.plan_capacity[0], "vcores": view.plan_capacity[1]},
                 "peak_cost": _num(view.plan_peak_cost),
                 "placed": [{"job": e.job, **(_placement(e) or {})} for e in view.planned],
                 "not_placed": dict(view.not_planned)},
        "reservations": [record_doc(r) for r in view.records],
        "grants": [asdict(g) for g in view.grants],
        "dra_not_now": dict(view.dra_skipped),
        "services": {job: {"service": v.service.value, "why": v.why} for job, v in sorted(view.services.items())},
        "fallback_stays": dict(view.fallback_stays),
        "handed_over": dict(view.handed_over),
        "nudges": [asdict(n) for n in view.nudges],
        "actions": [asdict(a) for a in view.actions],
        "problems": list(view.problems),
    }

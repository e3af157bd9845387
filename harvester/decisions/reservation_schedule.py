"""From accepted terms to LowCost requests, from placements to the reservations wanted now, and
the moments a reservation queue needs a nudge (Morpheus §6, §8; scenarios/recurring-reservation*)
— pure.

- `plannable_terms`: terms whose period is not a whole number of steps dividing the LCM become
  the terms of ONE instance, the first starting at or after a given time: its window placed on
  the LCM grid with period = the LCM (§6: "jobs whose period does not divide the LCM get one-off
  reservations"); a refit or the next instance gives new terms, so the plan re-places the job.
- `request_for`: a job's terms as a LowCost `ReservationRequest`: the skyline in containers of
  the plan's container size (stages_from_skyline), the window [a_j, d_j] as whole steps inside
  it (earliest = ⌈a/step⌉, the last step must END by d: deadline = ⌊d/step⌋ − 1; a window
  holding no whole step gets the steps covering it, models/slo_contract.window_steps), the
  period in steps (it must divide the LCM). A skyline longer than the window is a PlanError with
  the sign-off warning (models/slo_contract.fit_warning): the job keeps its static provisioning
  (the refit fits the skyline on the runs that fit the window, models/skyline_window.py).
- `desired_windows`: the reservations the plan wants the RM to hold now. One-off mode (the
  3.3.6 workaround): every window of every placed job whose deadline is ahead and whose arrival
  is within `lead_s` — period start grid_origin + n·P, arrival = period start + the placement's
  offset; one that already opened (or opens within `min_lead_s`) is wanted but not submitted
  any more. Recurring mode: one reservation per job, recurrence P, first window the next one.
- `due_nudges`: the boundaries of held reservations (activation, each stage boundary, window
  end) that fell in a time range: after each, the reservation queue's effective capacity stays
  stale until a node-resource update (recording: 0/0 at activation, the old stage's size after
  a boundary) — README of scenarios/recurring-reservation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from harvester.decisions.reservation_actions import ReservationSpec, spec_from_steps
from harvester.decisions.reservation_lifecycle import HELD, ManagedReservation, record_key, reservation_name
from harvester.decisions.reservation_plan import Placement, PlanError, ReservationRequest, stages_from_skyline
from harvester.domain import Resources
from harvester.models.slo_contract import Terms, fit_warning, window_steps
from harvester.timefmt import when

DAY_MS = 86_400_000


@dataclass(frozen=True)
class PlannedJob:
    job: str
    terms: Terms
    placement: Placement


@dataclass(frozen=True)
class Desired:
    key: str
    job: str
    period_start_ms: int
    spec: ReservationSpec
    submittable: bool
    why_not: str = ""


def divides_lcm(period_s: float, step_s: float, lcm_steps: int) -> bool:
    period = period_s / step_s
    return abs(period - round(period)) <= 1e-6 and round(period) >= 1 and lcm_steps % round(period) == 0


def instance_start(terms: Terms, starting_at: float) -> float:
    """The start of the first period of `terms` at or after `starting_at`."""
    n = math.ceil((starting_at - terms.grid_origin_s) / terms.period_s - 1e-9)
    return terms.grid_origin_s + n * terms.period_s


def plannable_terms(terms: Terms, lcm_steps: int, starting_at: float) -> Terms:
    """`terms` when its period divides the LCM; else the one-off terms of the first instance
    starting at or after `starting_at` (module docstring)."""
    if divides_lcm(terms.period_s, terms.step_s, lcm_steps):
        return terms
    lcm_s = lcm_steps * terms.step_s
    origin = terms.grid_origin_s
    start = instance_start(terms, starting_at)
    offset = start - (origin + math.floor((start - origin) / lcm_s) * lcm_s)  # into its LCM period
    return replace(terms, period_s=lcm_s, earliest_s=terms.earliest_s + offset, deadline_s=terms.deadline_s + offset,
                   instance_s=start)


def request_for(job: str, terms: Terms, container: Resources, step_s: float, gang: int,
                lcm_steps: int) -> ReservationRequest:
    """The LowCost request of `terms` (module docstring); PlanError says why there is none."""
    if not math.isclose(terms.step_s, step_s):
        raise PlanError(f"{job}: skyline step {terms.step_s:g}s differs from the plan step {step_s:g}s")
    if not divides_lcm(terms.period_s, step_s, lcm_steps):
        raise PlanError(f"{job}: period {terms.period_s:g}s does not divide the plan's {lcm_steps} steps in whole "
                        "steps (plannable_terms makes it a one-off first)")
    p = int(round(terms.period_s / step_s))
    earliest, deadline = window_steps(terms.earliest_s, terms.deadline_s, step_s)
    shift = (earliest // p) * p  # inputs available only in a later period: the window moves with them
    warned = fit_warning(terms)
    if warned:
        raise PlanError(f"{job}: {warned}")
    stages = stages_from_skyline(terms.memory_mb, terms.vcores, container, gang)
    if not stages:
        raise PlanError(f"{job}: the skyline reserves nothing")
    return ReservationRequest(job, container, stages, p, earliest - shift, deadline - shift, terms.problematic)


def desired_windows(now: float, jobs: Iterable[PlannedJob], *, step_s: float, lead_s: float, min_lead_s: float,
                    recurring: bool, prefix: str) -> tuple[dict[str, Desired], list[str]]:
    """(key → the reservation wanted now, problems) — module docstring."""
    out: dict[str, Desired] = {}
    problems: list[str] = []
    step_ms = int(round(step_s * 1000))
    now_ms = int(round(now * 1000))
    for j in jobs:
        p_ms = int(round(j.terms.period_s * 1000))
        origin_ms = int(round(j.terms.grid_origin_s * 1000))
        offset_ms = j.placement.start * step_ms
        length_ms = len(j.placement.alloc) * step_ms
        if recurring and j.terms.instance_s is None:  # a one-off stays one, in either mode (§6)
            if DAY_MS % p_ms or length_ms > p_ms:
                problems.append(f"{j.job}: period {p_ms} ms does not divide a day (or the window is longer): "
                                "not reservable as a recurring reservation")
                continue
            n = math.ceil((now_ms + min_lead_s * 1000 - origin_ms - offset_ms) / p_ms)
            start = origin_ms + n * p_ms
            spec = spec_from_steps(reservation_name(prefix, j.job, None), start + offset_ms, j.placement.alloc,
                                   step_ms, j.placement.container, recurrence_ms=p_ms)
            out[record_key(j.job, None)] = Desired(record_key(j.job, None), j.job, start, spec, True)
            continue
        n = math.ceil((now_ms - length_ms - offset_ms - origin_ms + 1) / p_ms)  # first window not yet over
        while True:
            start = origin_ms + n * p_ms
            arrival = start + offset_ms
            if arrival > now_ms + lead_s * 1000:
                break
            n += 1
            if j.terms.instance_s is not None:  # a one-off: only its instance's window, keyed by the instance
                first = int(round(j.terms.instance_s * 1000))
                day = origin_ms + (first - origin_ms) // p_ms * p_ms  # the LCM period its window is placed in
                lo, hi = day + round(j.terms.earliest_s * 1000) - step_ms, day + round(j.terms.deadline_s * 1000)
                if not lo <= arrival <= hi:
                    continue
                start = first
            key = record_key(j.job, start)
            spec = spec_from_steps(reservation_name(prefix, j.job, start), arrival, j.placement.alloc, step_ms,
                                   j.placement.container)
            ok = arrival >= now_ms + min_lead_s * 1000
            out[key] = Desired(key, j.job, start, spec, ok,
                               "" if ok else f"its window opens at {when(arrival / 1000, now_ms / 1000)}, less than "
                                             f"min_lead_s {min_lead_s:g} s ahead")
    return out, problems


def due_nudges(records: Iterable[ManagedReservation], lo: float, hi: float) -> list[str]:
    """Boundaries in [lo, hi) of the reservations the RM holds, as reasons for a nudge."""
    out: list[str] = []
    for r in records:
        if r.state not in HELD:
            continue
        for t_ms, label in r.spec.boundaries(int(lo * 1000), int(hi * 1000)):
            out.append(f"{label} of {r.reservation_id or r.key} at {t_ms / 1000:.1f}")
    return out


def placements_of(jobs: Sequence[PlannedJob]) -> dict[str, Placement]:
    return {j.job: j.placement for j in jobs}

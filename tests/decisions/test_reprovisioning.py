"""DRA (Morpheus §7, decisions/reprovisioning.py): when, how much, for how long, and only with room."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from harvester.decisions.reprovisioning import DraContext, DraParams, JobDemand, decide_reprovisioning
from harvester.decisions.reservation_actions import Outcome, ReservationResult, UpdateReservation, spec_from_steps
from harvester.decisions.reservation_lifecycle import ReservationState, by_time, new_record
from harvester.decisions.reservation_reconcile import fold
from harvester.decisions.reservation_plan import Placement, empty_plan
from harvester.domain import Resources

C = Resources(1024, 1)
ARRIVAL_S = 3600.0  # plan step 60
BASE = (2, 2, 4, 4)  # containers per minute from the arrival: [3600, 3840)


def record(alloc: tuple[int, ...] = BASE, *, state: ReservationState = ReservationState.ACTIVE, recurrence_ms: int = 0):  # type: ignore[no-untyped-def]
    spec = spec_from_steps("hv|etl|3600000", int(ARRIVAL_S * 1000), alloc, 60_000, C, recurrence_ms)
    r = new_record("etl@3600000", "etl", 3_600_000, spec, state, 0.0, "test")
    return replace(r, reservation_id="reservation_1_0001")


def plan(capacity: Resources = Resources(16384, 16)):  # type: ignore[no-untyped-def]
    p = empty_plan(capacity)
    return p.add(Placement("etl", C, 1440, 60, BASE))  # the job's own placement: steps 60..63


def ctx(now: float, demand: int | None, *, r=None, p=None, params: DraParams = DraParams()) -> DraContext:  # type: ignore[no-untyped-def]
    demands = {} if demand is None else {"etl": JobDemand("etl", ("app_1",), Resources(1024 * min(demand, 3), min(demand, 3)),
                                                          Resources(1024 * max(0, demand - 3), max(0, demand - 3)))}
    return DraContext(now, now, [r or record()], demands, p or plan(), 0.0, C, params, "s")


@pytest.mark.parametrize(("now", "demand", "level", "why"), [
    (3610.0, None, None, "no running app"),
    (3610.0, 2, None, "demand 2 <= allocation 2"),
    (3610.0, 3, 3, None),                 # over the skyline, under ρ·max(R_recent) = 2×2
    (3610.0, 9, 4, None),                 # capped at ρ·max(R_recent) = 2×2 = 4
    (3730.0, 20, 8, None),                # R_recent (last 2 min) reaches the 4-container stage: cap 8
    (3830.0, 5, 5, None),                 # last step: the grant stretches the window past its deadline
    (3790.0, 4, 4, None),                 # last step, demand = allocation: still extended (the job runs on)
])
def test_when_and_how_much(now: float, demand: int | None, level: int | None, why: str | None) -> None:
    d = decide_reprovisioning(ctx(now, demand))
    if level is None:
        assert d.grants == () and why in d.skipped[0][1]
        return
    (g,) = d.grants
    a = g.action
    assert g.level == level and isinstance(a, UpdateReservation) and a.reservation_id == "reservation_1_0001"
    k0, k1 = int((now - ARRIVAL_S) // 60), int(math.ceil((now + 60 - ARRIVAL_S) / 60))
    end = k1 + 1 if k1 >= len(BASE) else k1  # the allocation would run out: one more T past it
    steps = a.spec.per_step(60_000)
    assert steps[k0:end] == [max(level, b) for b in (list(BASE) + [0] * 4)[k0:end]], \
        "from the current step, for at least T = 60 s"
    assert all(s >= b for s, b in zip(steps, BASE)), "never below the planned skyline"
    assert g.until == ARRIVAL_S + 60 * end and a.grant_until == ARRIVAL_S + 60 * k1, \
        "DRA looks again while a span of the window remains"
    assert a.spec.arrival_ms == int(ARRIVAL_S * 1000) and "DRA §7" in a.reason and f"grant {level}" in a.reason
    assert level <= demand, "never above what the job asks for"
    base = list(BASE) + [0] * 4
    assert d.plan.placements[g.placement.job_id].alloc == tuple(max(0, level - base[k]) for k in range(k0, end)), \
        "the extra containers are admitted into the plan"


def test_the_window_is_stretched_when_the_grant_runs_past_the_deadline() -> None:
    (g,) = decide_reprovisioning(ctx(3830.0, 5)).grants
    assert g.action.spec.deadline_ms == 3_960_000 and g.action.spec.per_step(60_000) == [2, 2, 4, 5, 5, 5]
    assert g.action.grant_until == 3900.0 and "window stretched to 3960 (planned end 3840)" in g.action.reason


def test_only_as_much_as_the_plan_has_room_for() -> None:
    tight = plan().add(Placement("other", C, 1440, 60, (12, 12, 11, 11)))  # 16 − 2 − 12 = 2 free at step 60
    (g,) = decide_reprovisioning(ctx(3610.0, 9, p=tight)).grants
    assert g.level == 4 and "room" not in g.action.reason
    full = plan().add(Placement("other", C, 1440, 60, (14, 14, 12, 12)))
    d = decide_reprovisioning(ctx(3610.0, 9, p=full))
    assert d.grants == () and "no room in the plan" in d.skipped[0][1]
    some = plan().add(Placement("other", C, 1440, 60, (13, 13, 12, 12)))
    (g,) = decide_reprovisioning(ctx(3610.0, 9, p=some)).grants
    assert g.level == 3 and "(room for 3 only)" in g.action.reason


@pytest.mark.parametrize(("r", "why"), [
    (record(recurrence_ms=600_000), "recurring"),
    (replace(record(), grant_until=3700.0), "still running"),
    (record(state=ReservationState.SCHEDULED), ""),
])
def test_no_grant(r, why: str) -> None:  # type: ignore[no-untyped-def]
    d = decide_reprovisioning(ctx(3610.0, 9, r=r))
    assert d.grants == () and (why == "" and d.skipped == () or why in d.skipped[0][1])


def test_grants_do_not_compound_r_recent_comes_from_the_planned_skyline() -> None:
    r = record()
    (g,) = decide_reprovisioning(ctx(3610.0, 9, r=r)).grants
    granted = replace(r, spec=g.action.spec, grant_until=None)  # looked at again, the job still behind
    d = decide_reprovisioning(ctx(3670.0, 9, r=granted, p=plan()))
    assert d.grants == () and "max(2×2, 0) = 4 <= allocation 4" in d.skipped[0][1], \
        "ρ × max of the PLANNED skyline (2), not of the granted 4 (which would allow 8)"


@pytest.mark.parametrize(("static", "level"), [(0, 4), (3, 4), (7, 7), (12, 9)])
def test_never_worse_than_static_a_known_static_share_raises_the_cap(static: int, level: int) -> None:
    """Demand 9 against a 2-container skyline: §7 caps the grant at ρ·max(R_recent) = 4; with the
    job's static share known, at max(4, static), never above the demand (9). Before, the cap was
    4 whatever the job had without Morpheus (decisions/static_fallback.py)."""
    c = ctx(3610.0, 9)
    (g,) = decide_reprovisioning(replace(c, static={"etl": static} if static else {})).grants
    assert g.level == level and f"max(2×2, {static})" in g.action.reason


def test_rho_and_window_are_parameters() -> None:
    (g,) = decide_reprovisioning(ctx(3610.0, 9, params=DraParams(rho=3.0))).grants
    assert g.level == 6
    (g,) = decide_reprovisioning(ctx(3610.0, 9, params=DraParams(grant_s=150.0))).grants
    assert g.until == ARRIVAL_S + 180.0 and g.action.spec.per_step(60_000)[:3] == [4, 4, 4]
    (g,) = decide_reprovisioning(ctx(3715.0, 20, params=DraParams(recent_window_s=60.0))).grants
    assert g.level == 4, "the last minute holds only the 2-container stage: 2 × 2"


def _granted(r, g, now: float):  # type: ignore[no-untyped-def]
    """The record after the RM accepted the grant, as the loop and the simulator fold it."""
    out, _ = fold({r.key: r}, [ReservationResult(g.action, Outcome.SENT, r.reservation_id)], now)
    return out[r.key]


def test_a_running_job_keeps_its_reservation_past_the_planned_end_a_minute_at_a_time() -> None:
    """§7, Fig. 8: the hand case of docs/evaluation/morpheus.md. One task still runs in the last
    planned minute (demand 1 <= allocation 4): grants chained on step boundaries used to end
    exactly at the window end, the record turned ENDED and the task lost its container."""
    r, p = record(), plan()
    d = decide_reprovisioning(ctx(3780.0, 1, r=r, p=p))   # the last planned step, [3780, 3840)
    (g,) = d.grants
    assert g.action.spec.per_step(60_000) == [2, 2, 4, 4, 1] and g.level == 1, "never above the demand"
    assert g.until == 3900.0 and g.action.grant_until == 3840.0
    assert d.plan.placements[g.placement.job_id].alloc == (0, 1), "the extra minute is admitted into the plan"
    r = _granted(r, g, 3780.0)
    assert by_time(r.spec, 3_840_000) is ReservationState.ACTIVE, "still open (and updatable) at the planned end"
    d = decide_reprovisioning(ctx(3840.0, 1, r=r, p=d.plan))  # looked at again: the task still runs
    (g,) = d.grants
    assert g.action.spec.per_step(60_000) == [2, 2, 4, 4, 1, 1] and g.action.grant_until == 3900.0
    r = _granted(r, g, 3840.0)
    d = decide_reprovisioning(ctx(3900.0, None, r=r, p=d.plan))  # the job is done: the window ends at 3960
    assert d.grants == () and "no running app" in d.skipped[0][1]


def test_an_extension_is_bounded_and_needs_room() -> None:
    params = DraParams(max_extension_s=60.0)  # at most one minute past the planned end 3840
    (g,) = decide_reprovisioning(ctx(3780.0, 1, params=params)).grants
    assert g.action.spec.deadline_ms == 3_900_000 and g.action.grant_until == 3840.0
    r = _granted(record(), g, 3780.0)
    d = decide_reprovisioning(ctx(3840.0, 1, r=r, params=params))
    assert d.grants == () and "demand 1 <= allocation 1" in d.skipped[0][1], "the bound is reached"
    full = plan().add(Placement("other", C, 1440, 64, (16,)))  # no room in the minute after the end
    d = decide_reprovisioning(ctx(3780.0, 1, p=full))
    assert d.grants == () and "no room in the plan" in d.skipped[0][1]
    (g,) = decide_reprovisioning(ctx(3830.0, 5, params=DraParams(max_extension_s=0.0))).grants
    assert g.action.spec.per_step(60_000) == [2, 2, 4, 5] and g.until == 3840.0, "no stretch at all"
    d = decide_reprovisioning(ctx(3780.0, 0, p=full))
    assert d.grants == () and "demand 0 <= allocation 4" in d.skipped[0][1], "nothing left to run: no extension"


def test_with_a_known_static_share_the_stretch_is_not_cut_at_the_bound() -> None:
    """A stretch holds at most min(demand, max(ρ·R_recent, static)): with the static share known
    it is never worse for the job than falling back to that share, and never bigger, so
    `max_extension_s` does not end it (before, the run fell back to its whole static share)."""
    params = DraParams(max_extension_s=60.0)
    c = replace(ctx(3780.0, 1, params=params), static={"etl": 8})
    (g,) = decide_reprovisioning(c).grants
    r = _granted(record(), g, 3780.0)
    (g,) = decide_reprovisioning(replace(ctx(3840.0, 1, r=r, params=params), static={"etl": 8})).grants
    assert g.action.spec.deadline_ms == 3_960_000 and g.level == 1, "past the 60-s bound, at the demand"


def test_past_the_planned_end_r_recent_is_the_skylines_last_minutes() -> None:
    r = _granted(record(), decide_reprovisioning(ctx(3780.0, 1)).grants[0], 3780.0)
    (g,) = decide_reprovisioning(ctx(3850.0, 20, r=replace(r, grant_until=None))).grants
    assert g.level == 8, "2 × the planned 4 of [3720, 3840), not 2 × the extension's 1"

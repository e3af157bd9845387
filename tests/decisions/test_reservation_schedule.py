"""Renewal timing, the pinned definitions, LowCost requests from terms, and nudge boundaries
(decisions/reservation_schedule.py, decisions/reservation_actions.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harvester.decisions.reservation_actions import R_ORDER_NO_GAP, SpecStage, spec_from_steps
from harvester.decisions.reservation_lifecycle import ReservationState, new_record
from harvester.decisions.reservation_plan import Placement, PlanError, Stage
from harvester.decisions.reservation_schedule import PlannedJob, desired_windows, due_nudges, plannable_terms, request_for
from harvester.domain import Resources
from harvester.models.slo_contract import Terms

C = Resources(1024, 1)
T = Terms(600.0, 30.0, 480.0, 0.0, 60.0, (4096, 4096, 8192), (4, 4, 8))
JOB = PlannedJob("etl", T, Placement("etl", C, 10, 2, (4, 4, 8)))  # offset 120 s, 180 s long


def test_the_recorded_definition_is_what_we_pin() -> None:
    """scenarios/recurring-reservation: 2 x <1024,1> gang 2 for 180 s then 4 x for 120 s, R_ORDER_NO_GAP,
    the window exactly their sum."""
    spec = spec_from_steps("n", 1_795_504_820_000, (2, 2, 2, 4, 4), 60_000, C, recurrence_ms=600_000)
    assert spec.stages == (SpecStage(C, 2, 2, 180_000), SpecStage(C, 4, 4, 120_000))
    assert spec.interpreter == R_ORDER_NO_GAP == 3 and spec.deadline_ms - spec.arrival_ms == 300_000
    assert [spec.containers_at(spec.arrival_ms + x) for x in (-1, 0, 179_999, 180_000, 299_999, 300_000)] == [0, 2, 2, 4, 4, 0]
    assert spec.containers_at(spec.arrival_ms + 600_000 + 200_000) == 4, "every period"
    with pytest.raises(ValueError, match="no holes"):
        spec_from_steps("n", 0, (2, 0, 2), 60_000, C)


@given(alloc=st.lists(st.integers(1, 20), min_size=1, max_size=30), arrival=st.integers(0, 10**12))
def test_per_step_round_trips(alloc: list[int], arrival: int) -> None:
    spec = spec_from_steps("n", arrival, alloc, 60_000, C)
    assert spec.per_step(60_000) == alloc
    assert all(s.gang == s.containers for s in spec.stages), "each stage all at once: the agent has no choice"


@pytest.mark.parametrize(("now", "lead", "wanted"), [
    (0.0, 720.0, [(0, True), (600_000, True)]),          # window [120 s, 300 s) and the next at 720 s: both within the lead
    (115.0, 60.0, [(0, True)]),                          # opens in 5 s: still submittable (min lead 5 s)
    (116.0, 60.0, [(0, False)]),                         # opens in 4 s: wanted, no longer submitted
    (200.0, 600.0, [(0, False), (600_000, True)]),       # open now: wanted (never disturbed), the next one ahead
    (300.0, 100.0, []),                                  # over; the next opens at 720 s, beyond the lead
    (620.0, 100.0, [(600_000, True)]),
])
def test_renewal_timing(now: float, lead: float, wanted: list[tuple[int, bool]]) -> None:
    desired, problems = desired_windows(now, [JOB], step_s=60.0, lead_s=lead, min_lead_s=5.0, recurring=False,
                                        prefix="hv")
    assert problems == []
    assert [(d.period_start_ms, d.submittable) for d in desired.values()] == wanted
    for d in desired.values():
        assert d.key == f"etl@{d.period_start_ms}" and d.spec.name == f"hv|etl|{d.period_start_ms}"
        assert d.spec.arrival_ms == d.period_start_ms + 120_000 and d.spec.per_step(60_000) == [4, 4, 8]


def test_recurring_mode_wants_one_reservation_per_job_at_the_next_window() -> None:
    desired, _ = desired_windows(200.0, [JOB], step_s=60.0, lead_s=60.0, min_lead_s=5.0, recurring=True, prefix="hv")
    (d,) = desired.values()
    assert d.key == "etl@recurring" and d.spec.recurrence_ms == 600_000 and d.spec.arrival_ms == 720_000
    odd = PlannedJob("odd", Terms(420.0 * 60, 0.0, 600.0, 0.0, 60.0, (1024,), (1,)), Placement("odd", C, 420, 0, (1,)))
    desired, problems = desired_windows(0.0, [odd], step_s=60.0, lead_s=60.0, min_lead_s=5.0, recurring=True, prefix="hv")
    assert desired == {} and "does not divide a day" in problems[0]


@pytest.mark.parametrize(("terms", "earliest", "deadline", "stages"), [
    (T, 1, 7, (Stage(4, 2), Stage(8, 1))),                                             # ⌈30/60⌉, ⌊480/60⌋ − 1
    (Terms(600.0, 0.0, 300.0, 0.0, 60.0, (1500, 1500), (1, 1)), 0, 4, (Stage(2, 2),)),  # 1500 MB = 2 containers
    (Terms(600.0, 630.0, 1000.0, 0.0, 60.0, (1024,), (1,)), 1, 5, (Stage(1, 1),)),      # inputs a period late: shifted
])
def test_requests_from_terms(terms: Terms, earliest: int, deadline: int, stages: tuple[Stage, ...]) -> None:
    req = request_for("j", terms, C, 60.0, 1, 1440)
    assert (req.earliest, req.deadline, req.stages, req.period_steps) == (earliest, deadline, stages, 10)


@pytest.mark.parametrize(("terms", "message"), [
    (Terms(3480.0, 0.0, 300.0, 0.0, 60.0, (1024,), (1,)), "does not divide"),  # 58 minutes
    (Terms(600.0, 0.0, 300.0, 0.0, 30.0, (1024,), (1,)), "differs from the plan step"),
    (Terms(600.0, 0.0, 300.0, 0.0, 60.0, (0, 0), (0, 0)), "reserves nothing"),
])
def test_requests_that_cannot_be_made(terms: Terms, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        request_for("j", terms, C, 60.0, 1, 1440)


def test_a_period_that_does_not_divide_the_day_is_reserved_one_instance_at_a_time() -> None:
    """§6: a daily job drifting +30 s a day (P = 86,430 s) gets a one-off for the instance that
    starts at or after the given time, placed on the day grid; the next instance moves with it."""
    drift = Terms(86_430.0, 3_600.0, 10_800.0, 0.0, 60.0, (1024,), (1,))
    day3 = plannable_terms(drift, 1440, 3 * 86_400.0)  # instance 3 starts at 3 × 86,430 = day 3 + 90 s
    assert (day3.period_s, day3.earliest_s, day3.deadline_s) == (86_400.0, 3_690.0, 10_890.0)
    req = request_for("drift", day3, C, 60.0, 1, 1440)
    assert (req.period_steps, req.earliest, req.deadline) == (1440, 62, 180)  # ⌈3690/60⌉, ⌊10890/60⌋ − 1
    assert plannable_terms(drift, 1440, 3 * 86_400.0 + 91.0).earliest_s == 3_720.0  # the next one: day 4 + 120 s
    assert plannable_terms(T, 1440, 12_345.0) is T  # a divisor of the day stays recurring
    hourly = Terms(3_553.0, 60.0, 600.0, 0.0, 60.0, (1024,), (1,))  # shorter than the day, not dividing it
    one = plannable_terms(hourly, 1440, 7_200.0)  # instance 3 starts at 10,659 s
    assert (one.earliest_s, one.deadline_s) == (10_719.0, 11_259.0)
    assert request_for("hourly", one, C, 60.0, 1, 1440).period_steps == 1440
    placed = PlannedJob("hourly", one, Placement("hourly", C, 1440, 179, (1,)))  # step 179 = 10,740 s
    for recurring in (False, True):  # a one-off is submitted once, keyed by its instance, in either mode
        desired, problems = desired_windows(10_000.0, [placed], step_s=60.0, lead_s=3_600.0, min_lead_s=5.0,
                                            recurring=recurring, prefix="hv")
        (d,) = desired.values()
        assert d.key == "hourly@10659000" and d.spec.recurrence_ms == 0 and d.spec.arrival_ms == 10_740_000, d
        assert not problems


def test_nudges_are_due_at_activation_each_stage_boundary_and_the_end_of_held_reservations() -> None:
    spec = spec_from_steps("n", 120_000, (4, 4, 8), 60_000, C)
    held = new_record("k", "etl", 0, spec, ReservationState.SCHEDULED, 0.0, "listed")
    planned = new_record("p", "etl", 0, spec, ReservationState.PLANNED, 0.0, "planned")
    reasons = due_nudges([held, planned], 100.0, 400.0)
    assert reasons == ["activation of k at 120.0", "stage 1->2 of k at 240.0", "window end of k at 300.0"]
    assert due_nudges([held], 121.0, 239.0) == [], "nothing changes inside a stage"
    rec = spec_from_steps("n", 120_000, (4, 8), 60_000, C, recurrence_ms=600_000)
    assert [t for t, _ in rec.boundaries(650_000, 1_400_000)] == [720_000, 780_000, 840_000, 1_320_000, 1_380_000]


@given(st.floats(0, 1200), st.floats(0, 1500), st.lists(st.sampled_from([0, 1024, 2048]), min_size=1, max_size=20))
def test_the_sign_off_warning_is_exactly_lowcosts_length_rejection(earliest: float, length: float,
                                                                   memory: list[int]) -> None:
    """fit_warning (shown at sign-off) says "LowCost will reject it" iff the request cannot be made
    or LowCost, on an empty plan with room for anything, rejects it (its window is too short or
    empty); request_for refuses such terms itself, with the warning."""
    from harvester.decisions.reservation_packing import lowcost
    from harvester.decisions.reservation_plan import empty_plan
    from harvester.models.slo_contract import fit_warning

    terms = Terms(86_400.0, earliest, earliest + length, 0.0, 60.0, tuple(memory), tuple(m // 1024 for m in memory))
    try:
        req = request_for("etl", terms, C, 60.0, 1, 1440)
    except PlanError as exc:
        assert not any(memory) or fit_warning(terms), f"refused without a sign-off warning: {exc}"
        return
    try:
        decision = lowcost(empty_plan(Resources(64 * 1024, 64)), req)
        rejected, why = not decision.accepted, decision.reason
    except PlanError as exc:  # an empty window: the loop reports this as the job's plan reason
        rejected, why = True, str(exc)
    assert bool(fit_warning(terms)) == rejected, why

"""LowCost (Morpheus §6) and the greedy baseline on hand-checked plans (harvester.decisions)."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.decisions.reservation_packing import PackingParams, greedy, lowcost, place, place_all, replan, stats
from harvester.decisions.reservation_plan import (
    Placement,
    PlanError,
    ReservationRequest,
    Stage,
    empty_plan,
    stages_from_skyline,
)
from harvester.domain import Resources

C1 = Resources(1024, 1)


def req(job: str, stages, period: int, a: int, d: int, **kw) -> ReservationRequest:
    return ReservationRequest(job, C1, tuple(stages), period, a, d, **kw)


def test_one_stage_spreads_over_the_window_of_an_empty_plan() -> None:
    # 4 container-steps, max parallelism 4, gang 1: the cheapest steps are all equal, so one each.
    d = lowcost(empty_plan(Resources(10 * 1024, 10), lcm_steps=4), req("j", [Stage(4)], 4, 0, 3))
    assert d.accepted and (d.placement.start, d.placement.alloc) == (0, (1, 1, 1, 1))


def test_stages_are_placed_in_reverse_with_intervals_in_proportion_to_demand() -> None:
    # End 7 only: stage 2 (6 containers) gets 1 + ⌊6 · 6/8⌋ = 5 steps [3, 7], its 6th gang on
    # the later step; stage 1 then ends at 2 with [0, 2] and takes the two later steps. Peak 2/10.
    plan, job = empty_plan(Resources(10 * 1024, 10), lcm_steps=8), req("j", [Stage(2), Stage(6)], 8, 0, 7)
    d = lowcost(plan, job, PackingParams(end_points=1))
    assert (d.placement.start, d.placement.alloc) == (1, (1, 1, 1, 1, 1, 1, 2))
    assert "peak cost over its steps 0.200" in d.reason
    # With every end tried, end 4 (stage 2 on [2, 4], stage 1 on [0, 1]) has the same peak and
    # total cost, and the earlier end wins the tie.
    d = lowcost(plan, job, PackingParams(end_points=8))
    assert (d.placement.start, d.placement.alloc) == (0, (1, 1, 2, 2, 2))


def test_lowcost_avoids_loaded_steps_by_trying_other_end_points() -> None:
    plan = empty_plan(Resources(10 * 1024, 10), lcm_steps=4).add(Placement("x", C1, 4, 2, (3, 3)))
    d = lowcost(plan, req("j", [Stage(4)], 4, 0, 3))
    assert (d.placement.start, d.placement.alloc) == (0, (2, 2))  # peak 0.2 instead of 0.4 at steps 2-3


def test_instances_see_the_worst_offset_of_the_period() -> None:
    # A daily job holds step 1 of 4; an every-2-steps job sees offset 1 loaded (steps 1 and 3).
    plan = empty_plan(Resources(10 * 1024, 10), lcm_steps=4).add(Placement("daily", C1, 4, 1, (5,)))
    d = lowcost(plan, req("j", [Stage(1)], 2, 0, 1))
    assert d.placement.start == 0
    after = place(plan, req("j", [Stage(1)], 2, 0, 1))[1]
    assert after.load[1].tolist() == [1, 5, 1, 0]  # the same offset in both periods


def test_problematic_jobs_are_pulled_to_the_middle_of_their_window() -> None:
    plan = empty_plan(Resources(10 * 1024, 10), lcm_steps=10)
    params = PackingParams(end_points=10)
    plain = lowcost(plan, req("j", [Stage(1, 2)], 10, 0, 9), params)
    assert plain.placement.start == 0  # equal cost everywhere: the earliest end leaves DRA the most time
    prob = lowcost(plan, req("j", [Stage(1, 2)], 10, 0, 9, problematic=True), params)
    assert prob.placement.start == 4 and "alignment penalty 0.000" in prob.reason  # mid-point 4.5 = (0 + 9)/2


@pytest.mark.parametrize(("request_", "why"), [
    (req("j", [Stage(1, 3)], 4, 0, 1), "shorter than the 3 steps"),
    (req("j", [Stage(11)], 4, 0, 0), "no room"),
])
def test_rejections_say_why(request_, why) -> None:
    d = lowcost(empty_plan(Resources(10 * 1024, 10), lcm_steps=4), request_)
    assert not d.accepted and d.placement is None and why in d.reason


def test_greedy_takes_the_earliest_fit_of_the_skyline_as_fitted() -> None:
    plan = empty_plan(Resources(10 * 1024, 10), lcm_steps=8).add(Placement("x", C1, 8, 1, (9,)))
    d = greedy(plan, req("j", [Stage(2), Stage(3)], 8, 0, 7))
    assert (d.placement.start, d.placement.alloc) == (2, (2, 3))  # step 1 has 1 free, so not at 0
    full = greedy(plan, req("k", [Stage(4, 8)], 8, 0, 7))
    assert not full.accepted and "fits at no start" in full.reason


def test_placing_never_moves_admitted_jobs_and_replan_moves_only_what_it_is_asked() -> None:
    plan = empty_plan(Resources(4 * 1024, 4), lcm_steps=6)
    a, b = req("a", [Stage(2, 2)], 6, 0, 5), req("b", [Stage(4, 2)], 6, 0, 5)
    (da, db), plan2 = place_all(plan, [a, b])
    assert plan2.placements["a"] is da.placement and plan2.placements["b"] is db.placement
    again, plan3 = place(plan2, a)
    assert not again.accepted and "already placed" in again.reason and plan3 is plan2
    (moved,), plan4 = replan(plan2, [a])
    assert plan4.placements["b"] is db.placement and moved.accepted
    assert np.array_equal(plan4.load, plan2.remove("a").add(moved.placement).load)


def test_plan_rules() -> None:
    plan = empty_plan(Resources(2 * 1024, 2), lcm_steps=4)
    with pytest.raises(PlanError, match="overflows"):
        plan.add(Placement("x", C1, 4, 0, (3,)))
    with pytest.raises(PlanError, match="already placed"):
        plan.add(Placement("x", C1, 4, 0, (1,))).add(Placement("x", C1, 4, 1, (1,)))
    with pytest.raises(PlanError, match="not in the plan"):
        plan.remove("nope")
    with pytest.raises(PlanError, match="does not divide"):
        lowcost(plan, req("j", [Stage(1)], 3, 0, 1))
    with pytest.raises(PlanError, match="shorter than it"):
        lowcost(plan, req("j", [Stage(1)], 2, 0, 2))
    with pytest.raises(PlanError, match="gang divides"):
        Stage(3, 1, 2)


def test_stats_of_the_planned_cost() -> None:
    plan = empty_plan(Resources(4 * 1024, 8), lcm_steps=4).add(Placement("x", Resources(1024, 1), 4, 0, (2, 4)))
    assert stats(plan) == pytest.approx({"peak": 1.0, "mean": 0.375, "variance": np.var([0.5, 1.0, 0, 0])})


@pytest.mark.parametrize(("memory", "vcores", "container", "expected"), [
    ([4096, 4096, 2048, 0, 1024], [1, 1, 4, 0, 1], Resources(2048, 1), [Stage(2, 2), Stage(4, 1), Stage(1, 1)]),
    ([0, 3000, 3000], [0, 1, 1], Resources(1024, 1), [Stage(3, 2)]),
])
def test_stages_from_a_fitted_skyline(memory, vcores, container, expected) -> None:
    assert list(stages_from_skyline(memory, vcores, container)) == expected

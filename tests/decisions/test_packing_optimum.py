"""The CP-SAT offline optimum (harvester.decisions.packing_optimum) used for LowCost's competitive ratio."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.decisions.packing_optimum import optimum
from harvester.decisions.reservation_packing import place_all
from harvester.decisions.reservation_plan import ReservationRequest, Stage, empty_plan
from harvester.domain import Resources

C1 = Resources(1024, 1)


def test_online_order_can_cost_lowcost_and_the_optimum_sees_it() -> None:
    # A (4 container-steps, window 0..3) arrives first and LowCost spreads it 1 per step; then B
    # (4 containers for 1 step, window 0..1) must share steps 0-1: peak 3. Offline, A goes to
    # steps 2-3 at 2 each and B to 0-1 at 2 each: peak 2.
    plan = empty_plan(Resources(10 * 1024, 10), lcm_steps=4)
    jobs = [ReservationRequest("a", C1, (Stage(4),), 4, 0, 3), ReservationRequest("b", C1, (Stage(4),), 4, 0, 1)]
    decisions, online = place_all(plan, jobs)
    assert online.cost().max() == pytest.approx(0.3)
    best = optimum(plan, jobs, time_limit_s=10)
    assert best.status == "OPTIMAL" and best.peak == pytest.approx(0.2) and best.bound == pytest.approx(0.2)
    assert {p.job_id: p.alloc for p in best.placements} == {"a": (2, 2), "b": (2, 2)}


@pytest.mark.parametrize("seed", range(4))
def test_the_optimum_is_never_above_lowcost_and_is_a_valid_plan(seed: int) -> None:
    rng = np.random.default_rng(seed)
    plan = empty_plan(Resources(30 * 1024, 30), lcm_steps=12)
    jobs = []
    for i in range(4):
        period = int(rng.choice([12, 6, 4]))
        stages = tuple(Stage(int(rng.integers(1, 4)), int(rng.integers(1, 3))) for _ in range(int(rng.integers(1, 3))))
        a = int(rng.integers(0, period))
        width = int(min(period, sum(s.steps for s in stages) + rng.integers(0, period)))
        jobs.append(ReservationRequest(f"j{i}", C1, stages, period, a, a + width - 1))
    decisions, online = place_all(plan, jobs)
    assert all(d.accepted for d in decisions)
    best = optimum(plan, jobs, time_limit_s=20, hint=[d.placement for d in decisions])
    assert best.status == "OPTIMAL"
    assert best.peak <= online.cost().max() + 1e-9
    assert best.bound <= best.peak + 1e-4
    rebuilt = plan
    for p in best.placements:
        rebuilt = rebuilt.add(p)  # raises if any step overflows
    assert rebuilt.cost().max() == pytest.approx(best.peak)


def test_an_instance_that_cannot_fit_has_no_optimum() -> None:
    plan = empty_plan(Resources(2 * 1024, 2), lcm_steps=4)
    best = optimum(plan, [ReservationRequest("a", C1, (Stage(2, 3),), 4, 0, 2),
                          ReservationRequest("b", C1, (Stage(2, 3),), 4, 0, 2)], time_limit_s=10)
    assert best.status == "INFEASIBLE" and best.peak is None and best.placements == ()

"""Invariants of LowCost and the greedy baseline (Morpheus §6) on random plans and requests:
capacity is never exceeded, allocations are contiguous and inside their window, every instance
of a job has the same offset, demand and parallelism are respected, and placing never moves an
admitted job."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harvester.decisions.reservation_packing import PackingParams, greedy, lowcost, place
from harvester.decisions.reservation_plan import Plan, ReservationRequest, Stage, empty_plan
from harvester.domain import Resources

LCMS = (12, 24)


@st.composite
def stages(draw) -> tuple[Stage, ...]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        gang = draw(st.sampled_from([1, 1, 2]))
        out.append(Stage(gang * draw(st.integers(1, 3)), draw(st.integers(1, 3)), gang))
    return tuple(out)


@st.composite
def scenario(draw) -> tuple[Plan, list[ReservationRequest], PackingParams]:
    lcm = draw(st.sampled_from(LCMS))
    varying = draw(st.booleans())
    mem = draw(st.integers(4, 24)) * 1024
    vc = draw(st.integers(4, 24))
    if varying:  # capacity per step (e.g. harvested capacity that changes over the day)
        cap = np.array([[mem - 1024 * (t % 3) for t in range(lcm)], [vc - (t % 2) for t in range(lcm)]])
        plan = empty_plan(cap, lcm_steps=lcm)
    else:
        plan = empty_plan(Resources(mem, vc), lcm_steps=lcm)
    requests = []
    for i in range(draw(st.integers(1, 8))):
        period = draw(st.sampled_from([p for p in (1, 2, 3, 4, 6, 8, 12, 24) if lcm % p == 0 and p >= 2]))
        sts = draw(stages())
        a = draw(st.integers(0, period - 1))
        d = draw(st.integers(a, a + period - 1))
        container = Resources(draw(st.sampled_from([512, 1024, 2048])), draw(st.integers(1, 2)))
        requests.append(ReservationRequest(f"j{i}", container, sts, period, a, d, draw(st.booleans())))
    params = PackingParams(end_points=draw(st.integers(1, 10)), alignment_weight=draw(st.sampled_from([0.0, 0.1, 1.0])))
    return plan, requests, params


def check_plan(plan: Plan, requests: dict[str, ReservationRequest]) -> None:
    assert (plan.load <= plan.capacity).all(), "capacity exceeded"
    rebuilt = np.zeros_like(plan.load)
    for job, p in plan.placements.items():
        r = requests[job]
        alloc = np.asarray(p.alloc)
        assert alloc.size and (alloc > 0).all(), "holes in an allocation"
        # Inside the window (unrolled: the window may cross the period boundary).
        start = p.start if p.start >= r.earliest else p.start + r.period_steps
        assert r.earliest <= start and start + alloc.size - 1 <= r.deadline
        assert alloc.sum() == sum(s.containers * s.steps for s in r.stages), "demand not met"
        assert alloc.max() <= max(s.containers for s in r.stages), "above the skyline's parallelism"
        # Same offset in every instance: the job's own load repeats with its period.
        own = np.zeros(plan.lcm_steps, dtype=np.int64)
        np.add.at(own, p.steps(plan.lcm_steps), np.broadcast_to(alloc, p.steps(plan.lcm_steps).shape))
        assert np.array_equal(own, np.roll(own, r.period_steps))
        rebuilt[0] += own * p.container.memory_mb
        rebuilt[1] += own * p.container.vcores
    assert np.array_equal(rebuilt, plan.load), "load is not the sum of the placements"


@settings(max_examples=150, deadline=None)
@given(scenario())
def test_lowcost_invariants(case) -> None:
    plan, requests, params = case
    by_id = {r.job_id: r for r in requests}
    for r in requests:
        before = dict(plan.placements)
        decision, plan = place(plan, r, lambda p, q: lowcost(p, q, params))
        assert decision.reason
        for job, placement in before.items():
            assert plan.placements[job] is placement, "an admitted job moved"
        assert (r.job_id in plan.placements) == decision.accepted
        check_plan(plan, by_id)


@settings(max_examples=100, deadline=None)
@given(scenario())
def test_greedy_invariants(case) -> None:
    plan, requests, _ = case
    by_id = {r.job_id: r for r in requests}
    for r in requests:
        decision, plan = place(plan, r, greedy)
        check_plan(plan, by_id)
        if decision.accepted:  # the skyline exactly as fitted
            shape = [s.containers for s in r.stages for _ in range(s.steps)]
            assert list(decision.placement.alloc) == shape


@settings(max_examples=60, deadline=None)
@given(scenario())
def test_lowcost_never_rejects_what_fits_rigidly_in_an_empty_plan(case) -> None:
    # On an empty plan of constant capacity, a request whose skyline fits as fitted must be
    # accepted: every stage gets an interval of at least its own length, where it fits.
    plan, requests, params = case
    assume((plan.capacity == plan.capacity[:, :1]).all())
    for r in requests:
        if greedy(plan, r).accepted:
            assert lowcost(plan, r, params).accepted, r

"""The plan's load kept as arrays (harvester/emulator/plan_load.py) against a point-by-point sum.

The oracle is the definition itself: the load at time t is the sum of the intervals holding t.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.domain import Resources as R
from harvester.emulator.plan_load import Commitment, Interval, Load, PlanIndex, Timeline

times = st.integers(min_value=0, max_value=40)
intervals = st.builds(lambda s, d, m, v: Interval(s, s + d, R(m, v)), times, st.integers(1, 15),
                      st.integers(0, 4096), st.integers(0, 8))


def load_at(ivs: list[Interval], t: int) -> tuple[int, int]:
    held = [iv.resources for iv in ivs if iv.start <= t < iv.end]
    return sum(r.memory_mb for r in held), sum(r.vcores for r in held)


def covers(segs: list[tuple[int, int, int, int]], lo: int, hi: int, ivs: list[Interval]) -> None:
    if hi <= lo:
        assert segs == []
        return
    assert segs[-1][1] == hi
    assert [s for s, *_ in segs[1:]] == [e for _, e, *_ in segs[:-1]]  # contiguous
    # cut exactly at lo and the interval edges inside (the planner's costs rely on it)
    assert [s for s, *_ in segs] == sorted({lo} | {x for iv in ivs for x in (iv.start, iv.end) if lo < x < hi})
    for s, e, m, v in segs:
        assert all(load_at(ivs, t) == (m, v) for t in range(s, e))


@settings(max_examples=150, deadline=None)
@given(st.lists(intervals, max_size=12), times, st.integers(0, 30))
def test_a_sweep_is_the_pointwise_sum(ivs: list[Interval], lo: int, width: int) -> None:
    covers(Timeline(ivs).segments(lo, lo + width), lo, lo + width, ivs)


@settings(max_examples=150, deadline=None)
@given(st.lists(intervals, max_size=12), st.lists(intervals, max_size=4), times, st.integers(1, 30))
def test_steps_plus_extra_read_per_slot_equal_a_sweep_of_everything(base: list[Interval], extra: list[Interval],
                                                                     lo: int, width: int) -> None:
    got = Load.of(base).steps().segments(lo, lo + width, extra)
    assert got == Timeline(base + extra).segments(lo, lo + width)


commitment = st.builds(
    lambda rid, user, ivs, periodic: Commitment(
        rid, user, tuple(Interval(iv.start % 50, iv.start % 50 + iv.end - iv.start, iv.resources) for iv in ivs)
        if periodic else tuple(ivs), 50 if periodic else 0),
    st.sampled_from(["r1", "r2", "r3", "r4"]), st.sampled_from(["u", "v"]), st.lists(intervals, min_size=1, max_size=4),
    st.booleans())
ops = st.lists(st.one_of(st.tuples(st.just("put"), commitment),
                         st.tuples(st.just("drop"), st.sampled_from(["r1", "r2", "r3", "r4", "nope"]))), max_size=25)


@settings(max_examples=200, deadline=None)
@given(ops, times, st.integers(1, 60), st.sampled_from([None, "u", "v", "w"]),
       st.sampled_from([None, "r1", "r2", "nope"]))
def test_the_index_after_puts_and_drops_holds_exactly_the_live_commitments(
        steps: list, lo: int, width: int, user: str | None, exclude: str | None) -> None:
    index, live = PlanIndex(), {}
    for op, arg in steps:
        if op == "put":
            index.put(arg)
            live[arg.reservation_id] = arg
        else:
            index.drop(arg)
            live.pop(arg, None)
    got = index.load(lo, lo + width, user=user, exclude=exclude)
    want = [iv for rid, c in live.items() if rid != exclude and (user is None or c.user == user)
            for iv in c.concrete(lo, lo + width)]
    if not any(c.period for c in live.values()):
        assert got.start.tolist() == sorted(got.start.tolist())  # handed over in start order
    rows = zip(got.start.tolist(), got.end.tolist(), got.mem.tolist(), got.vc.tolist())
    assert Counter(rows) == Counter((iv.start, iv.end, iv.resources.memory_mb, iv.resources.vcores) for iv in want)

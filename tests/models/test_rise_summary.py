"""The reaction reserve's incremental summary (models/rise_summary.py): the streamed quantile is
the exact one within the stated bound, and folding refit by refit equals folding from scratch."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.models.reaction_margins import BINS, GAP_FACTOR, PrimaryBlock, horizon_samples
from harvester.models.rise_summary import DAY_S, TenantDay, class_histogram, first_day, fold, merged

NODES = ("a", "b", "c", "d")
TENANT = {"a": "t1", "b": "t1", "c": "t2", "d": "t3"}
CLASS = {"t1": "x", "t2": "x", "t3": "y"}


def _exact_rises(times: np.ndarray, values: np.ndarray, k: int, interval: float, cols: list[int]) -> list[float]:
    """Every rise by its definition (reaction_margins docstring), float64, one window at a time."""
    runs, start = [], 0
    for i in range(1, times.size + 1):
        if i == times.size or times[i] - times[i - 1] > GAP_FACTOR * interval:
            runs.append((start, i))
            start = i
    out = []
    for lo, hi in runs:
        for t in range(lo, hi - k):
            for j in cols:
                ahead = values[t + 1:t + k + 1, j].astype(np.float64)
                if math.isnan(values[t, j]) or np.all(np.isnan(ahead)):
                    continue
                out.append(min(1.0, max(0.0, float(np.nanmax(ahead)) - float(values[t, j]))))
    return out


@st.composite
def samples(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 120))
    steps = draw(st.lists(st.sampled_from([10.0, 10.0, 10.0, 9.0, 11.0, 40.0, 3000.0]), min_size=n - 1, max_size=n - 1))
    t0 = draw(st.floats(DAY_S - 600, DAY_S + 600))  # around a day boundary
    times = t0 + np.concatenate([[0.0], np.cumsum(steps)])
    vals = draw(st.lists(st.one_of(st.floats(0, 1, width=32), st.just(math.nan)), min_size=n * 4, max_size=n * 4))
    return times, np.asarray(vals, dtype=np.float32).reshape(n, 4)


def _blocks(times: np.ndarray, values: np.ndarray, size: int, lo: float = -math.inf, hi: float = math.inf):
    keep = (times >= lo) & (times < hi)
    t, v = times[keep], values[keep]
    return [PrimaryBlock(NODES, t[i:i + size], v[i:i + size]) for i in range(0, t.size, size)]


def _counts(rows) -> dict[tuple[int, str], list[int]]:
    return {(r.day, r.tenant): r.dense().tolist() for r in merged(rows)}


@given(samples(), st.integers(1, 50), st.sampled_from([10.0, 22.0, 45.0]), st.floats(0.05, 0.99))
@settings(max_examples=150, deadline=None)
def test_the_streamed_quantile_is_the_exact_one_within_the_stated_bound(data, size, horizon, q) -> None:
    times, values = data
    k = horizon_samples(horizon, 10.0)
    _, days = fold(_blocks(times, values, size), TENANT, horizon_s=horizon, interval_s=10.0, until=math.inf)
    hist = class_histogram(days, CLASS, ["x", "y"])
    for c, cols in ((0, [0, 1, 2]), (1, [3])):
        rises = _exact_rises(times, values, k, 10.0, cols)
        assert hist.total(c) == len(rises)
        if rises:
            exact = float(np.quantile(rises, q, method="inverted_cdf"))
            got = hist.quantile(c, q)
            assert exact - 2e-7 <= got < exact + 1.0 / BINS, (exact, got)


@given(samples(), st.integers(1, 50), st.lists(st.floats(0.0, 1.0), max_size=4), st.sampled_from([10.0, 22.0]))
@settings(max_examples=150, deadline=None)
def test_folding_refit_by_refit_equals_folding_from_scratch(data, size, cuts, horizon) -> None:
    times, values = data
    end = float(times[-1]) + 1.0
    scratch_state, scratch = fold(_blocks(times, values, size), TENANT, horizon_s=horizon, interval_s=10.0, until=end)
    ends = sorted(float(times[0] + c * (end - times[0])) for c in cuts) + [end]
    since, rows = -math.inf, []
    for e in ends:  # each refit reads from where the last one stopped (the store's [since, until))
        state, days = fold(_blocks(times, values, size, since, e), TENANT, horizon_s=horizon, interval_s=10.0, until=e)
        rows += days
        since = state.folded_until
    assert _counts(rows) == _counts(scratch)
    assert state.folded_until == scratch_state.folded_until


def test_rises_count_on_the_day_they_start_and_the_window_is_whole_days() -> None:
    times = DAY_S - 30.0 + 10.0 * np.arange(7)  # 3 polls before midnight, 4 after
    values = np.tile(np.arange(7, dtype=np.float32)[:, None] / 10, (1, 4))
    state, days = fold(_blocks(times, values, 100), TENANT, horizon_s=10.0, interval_s=10.0, until=1e9)
    per_day = {d: sum(int(r.counts.sum()) for r in days if r.day == d) for d in (0, 1)}
    assert per_day == {0: 3 * 4, 1: 3 * 4}, "6 windows of 4 nodes, 3 starting on each day"
    assert state.folded_until == times[-1], "the last poll's window is incomplete: read again next time"
    assert first_day(3 * DAY_S + 5, 2.0) == 1 and first_day(3 * DAY_S, 2.0) == 1


def test_a_tenant_moved_to_another_class_takes_its_counts_with_it() -> None:
    rows = [TenantDay(0, "t1", np.array([5], np.uint16), np.array([10])),
            TenantDay(1, "t2", np.array([7], np.uint16), np.array([3]))]
    before = class_histogram(rows, {"t1": "x", "t2": "x"}, ["x", "y"])
    after = class_histogram(rows, {"t1": "x", "t2": "y"}, ["x", "y"])
    assert before.total(0) == 13 and after.total(0) == 10 and after.total(1) == 3
    assert after.quantile(1, 0.5) == 7 / BINS

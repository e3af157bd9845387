"""Reaction-time reserve margins (models/reaction_margins.py): rises within H, streamed in blocks,
the conservative coarse rule, against a direct computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.models.margins import ClassMargin, MarginModel
from harvester.models.reaction_margins import (
    BINS, PrimaryBlock, RiseHistogram, _sliding_max, fit_reaction_margins, horizon_samples, white_noise_factor,
)


@pytest.mark.parametrize(("h", "dt", "k"), [(22, 10, 3), (20, 10, 2), (3, 10, 1), (30, 3, 10)])
def test_horizon_samples(h: float, dt: float, k: int) -> None:
    assert horizon_samples(h, dt) == k


@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.integers(1, 12))
@settings(max_examples=200, deadline=None)
def test_sliding_max_matches_the_direct_window(values: list[float], k: int) -> None:
    y = np.asarray(values)[:, None]
    if k > len(values):
        return
    got = _sliding_max(y, k)[:, 0]
    want = [max(values[i:i + k]) for i in range(len(values) - k + 1)]
    assert np.allclose(got, want)


def _direct(values: np.ndarray, k: int) -> np.ndarray:
    out = []
    for t in range(values.shape[0] - k):
        for j in range(values.shape[1]):
            out.append(max(0.0, np.nanmax(values[t + 1:t + k + 1, j]) - values[t, j]))
    return np.asarray(out)


def test_the_quantile_matches_a_direct_computation_and_blocks_do_not_matter() -> None:
    rng = np.random.default_rng(3)
    times = np.arange(600) * 10.0
    values = np.clip(0.4 + 0.1 * rng.standard_normal((600, 5)), 0, 1)
    whole = fit_reaction_margins([PrimaryBlock(tuple("abcde"), times, values)], {n: "c" for n in "abcde"}, ["c"],
                                 horizon_s=22.0, quantile=0.95, interval_s=10.0, min_windows=10)
    parts = [PrimaryBlock(tuple("abcde"), times[i:i + 37], values[i:i + 37]) for i in range(0, 600, 37)]
    split = fit_reaction_margins(parts, {n: "c" for n in "abcde"}, ["c"], horizon_s=22.0, quantile=0.95,
                                 interval_s=10.0, min_windows=10)
    rises = _direct(values, 3)
    want = np.quantile(rises, 0.95, method="inverted_cdf")
    m = whole.margin("c")
    assert m.changes == rises.size and abs(m.margin - want) <= 1.0 / BINS + 1e-9 and m.margin >= want - 1e-9
    assert split.margin("c") == m and whole.method == "reaction" and whole.horizon_s == 22.0
    assert m.source.startswith("raw:")


def test_a_gap_breaks_the_windows() -> None:
    times = np.array([0.0, 10.0, 20.0, 1000.0, 1010.0])
    values = np.array([[0.0], [0.1], [0.2], [0.9], [0.9]])
    h = RiseHistogram(1)
    from harvester.models.reaction_margins import RiseAccumulator
    acc = RiseAccumulator({"a": 0}, 1, horizon_s=10.0)
    acc.add(PrimaryBlock(("a",), times, values))
    assert acc.hist.total(0) == 3  # 0→10, 10→20, 1000→1010; never 20→1000
    assert h.total(0) == 0


def test_few_windows_fall_back_to_the_stated_coarse_rule() -> None:
    coarse = MarginModel(1, 0.0, 0.95, 120.0, (ClassMargin("c", 0.95, 0.02, 5000, 0.01),))
    m = fit_reaction_margins([], {"a": "c"}, ["c", "d"], horizon_s=22.0, quantile=0.95, coarse=coarse,
                             interval_s=10.0, min_windows=1000)
    f = white_noise_factor(0.95, 12.0, 3)
    assert math.isclose(m.margin("c").margin, 0.02 * f) and f > 1.0, "coarse margins scale up to the horizon"
    assert m.margin("c").source.startswith("coarse:") and math.isnan(m.margin("d").margin)


def test_bad_inputs_fail_clearly() -> None:
    with pytest.raises(ValueError, match="quantile"):
        fit_reaction_margins([], {}, [], horizon_s=1, quantile=1.0, interval_s=1)
    with pytest.raises(ValueError, match="positive"):
        horizon_samples(0, 10)
    with pytest.raises(ValueError, match="do not match"):
        PrimaryBlock(("a",), np.zeros(2), np.zeros((3, 1)))


@pytest.mark.parametrize("k", [1, 2, 5])
def test_folding_leaves_the_callers_values_alone(k: int) -> None:
    values = np.random.default_rng(1).random((20, 3)).astype(np.float32)
    before = values.copy()
    RiseHistogram(1).add(values, np.zeros(3, dtype=np.int64), k)
    assert np.array_equal(values, before)


@given(st.integers(2, 30), st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**32 - 1),
       st.sampled_from([8, 64, 1 << 19]), st.sampled_from([1, 2, 64]))
@settings(max_examples=120, deadline=None)
def test_tiles_and_gathers_count_every_window_once(polls, nodes, k, seed, chunk, tile) -> None:
    """Tiles by class and by columns, unsorted classes (gathered) and unknown nodes give the
    counts of the direct definition, whatever the tile sizes."""
    import harvester.models.reaction_margins as rm

    rng = np.random.default_rng(seed)
    values = (rng.integers(0, 2001, (polls, nodes)) / 2000).astype(np.float32)  # rises off the bin edges' float noise
    values[rng.random(values.shape) < 0.1] = np.nan
    class_of = rng.integers(-1, 4, nodes)
    old = rm.CHUNK_VALUES, rm.TILE_CLASSES
    rm.CHUNK_VALUES, rm.TILE_CLASSES = chunk, tile
    try:
        h = RiseHistogram(4)
        h.add(values, class_of, k)
    finally:
        rm.CHUNK_VALUES, rm.TILE_CLASSES = old
    want = np.zeros((4, BINS + 1), dtype=np.int64)
    for t in range(polls - k):
        for j in range(nodes):
            ahead = values[t + 1:t + k + 1, j]
            if class_of[j] < 0 or np.isnan(values[t, j]) or np.all(np.isnan(ahead)):
                continue
            rise = min(1.0, max(0.0, float(np.nanmax(ahead)) - float(values[t, j])))
            want[class_of[j], int(math.ceil(rise * BINS - 1e-4))] += 1
    assert np.array_equal(h.counts, want)

"""C(p, a) precomputed from simulated runs, and the Amdahl alternative (Jockey §4.1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.models.completion_time import (
    AmdahlModel, CTable, allocation_levels, max_parallelism, precompute,
)
from harvester.models.job_model import Edge, JobModel, Quantiles, StageModel


def fixed(name: str, tasks: int, seconds: float, parents: tuple[int, ...] = ()) -> StageModel:
    return StageModel(name, tasks, Quantiles.constant(seconds), Quantiles.constant(0.0), parents,
                      tuple(Edge.BARRIER for _ in parents))


def test_one_fixed_stage_gives_waves_times_task_length() -> None:
    table = precompute(JobModel("j", (fixed("a", 8, 10.0),)), [1, 2, 4, 8], runs=3, samples_per_run=400)
    # at p = 0 the remaining time is the whole makespan: ceil(8 / a) waves of 10 s
    assert table.at_progress(0.0, 1.0) == pytest.approx([80.0, 40.0, 20.0, 10.0], rel=1e-3)
    # with 2 containers p reaches 0.5 at t = 20 s and stays until 30 s: remaining in (10, 20]
    rem = table.at_progress(0.5, 1.0)[1]
    assert 10.0 < rem <= 20.0 + 1e-6
    assert table.at_progress(1.0, 0.9).tolist() == [0.0] * 4
    assert table.failed_runs.tolist() == [0, 0, 0, 0]


def test_quantiles_interpolate_between_stored_levels() -> None:
    rng = np.random.default_rng(0)
    model = JobModel("j", (StageModel("a", 20, Quantiles.from_samples(rng.lognormal(2, 0.6, 500)), Quantiles.constant(1.0)),))
    table = precompute(model, [1, 4], runs=30, quantiles=(0.5, 0.9, 1.0))
    lo, hi = table.at_progress(0.0, 0.5), table.at_progress(0.0, 0.9)
    assert np.all(hi >= lo)
    assert table.at_progress(0.0, 0.7) == pytest.approx((lo + hi) / 2)
    assert table.at_progress(0.0, 0.2) == pytest.approx(lo)  # below the stored range: clamped


def chain_fork_model(seed: int, stages: int, width: int) -> JobModel:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(stages):
        parents = tuple(sorted({int(rng.integers(0, i))})) if i else ()
        out.append(StageModel(f"s{i}", int(rng.integers(1, width + 1)), Quantiles.from_samples(rng.lognormal(2, 0.7, 50)),
                              Quantiles.from_samples(rng.uniform(0, 2, 10)), parents, tuple(Edge.BARRIER for _ in parents),
                              (float(rng.uniform(0, 0.2)), 0.1)))
    return JobModel("j", tuple(out))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), stages=st.integers(1, 6), width=st.integers(1, 12))
def test_c_is_non_increasing_in_the_allocation(seed: int, stages: int, width: int) -> None:
    model = chain_fork_model(seed, stages, width)
    table = precompute(model, allocation_levels(max(2, max_parallelism(model)), 8), runs=6, seed=seed, p_bins=20)
    assert np.all(np.diff(table.values, axis=0) <= 1e-6)
    assert np.all(np.diff(table.values, axis=2) >= -1e-6)  # and non-decreasing in the quantile


def test_envelope_counts_the_cells_it_raised() -> None:
    model = chain_fork_model(7, 6, 12)
    table = precompute(model, allocation_levels(max_parallelism(model), 10), runs=5, seed=3, p_bins=20)
    assert table.raised_cells >= 0
    assert table.values.shape == (table.allocations.size, 20, table.quantiles.size)


def test_table_round_trips_through_npz(tmp_path: Path) -> None:
    table = precompute(chain_fork_model(1, 4, 6), [1, 2, 3], runs=4)
    table.save(tmp_path / "c.npz")
    back = CTable.load(tmp_path / "c.npz")
    assert np.array_equal(back.values, table.values) and np.array_equal(back.allocations, table.allocations)
    assert back.remaining(np.zeros(4), 0.9) == pytest.approx(table.remaining(np.zeros(4), 0.9))


def test_two_processes_give_the_same_table() -> None:
    model = chain_fork_model(5, 5, 8)
    one = precompute(model, [1, 2, 4, 8], runs=4, seed=9)
    two = precompute(model, [1, 2, 4, 8], runs=4, seed=9, workers=2)
    assert np.array_equal(one.values, two.values)


def test_amdahl_is_critical_path_plus_remaining_work_over_a() -> None:
    model = JobModel("j", (fixed("a", 4, 10.0), fixed("b", 1, 20.0, (0,))))
    am = AmdahlModel.fit(model, [1, 2, 4])
    # S = 10 + 20 = 30, P = 4·10 + 20 − 30 = 30
    assert am.remaining(np.array([0, 0]), 0.9).tolist() == pytest.approx([60.0, 45.0, 37.5])
    # a done: S = 20, P = 20 − 20 = 0
    assert am.remaining(np.array([4, 0]), 0.9).tolist() == pytest.approx([20.0, 20.0, 20.0])
    assert am.remaining(np.array([4, 1]), 0.9).tolist() == [0.0, 0.0, 0.0]
    assert "S_t=30s" in am.explain(np.array([0, 0]), 0.9)


@pytest.mark.parametrize(("high", "n", "expected_size"), [(10, 50, 10), (1000, 50, 50), (60, 50, 50), (1, 5, 1)])
def test_allocation_levels_are_distinct_and_span_the_range(high: int, n: int, expected_size: int) -> None:
    lv = allocation_levels(high, n)
    assert lv.size == expected_size and lv[0] == 1 and lv[-1] == high and np.all(np.diff(lv) > 0)


def test_max_parallelism_sums_tasks_per_depth() -> None:
    model = JobModel("j", (fixed("a", 3, 1.0), fixed("b", 5, 1.0), fixed("c", 2, 1.0, (0,)), fixed("d", 7, 1.0, (1,))))
    assert max_parallelism(model) == 9


def _stall_then_wide() -> JobModel:
    """One task that is ~10 s, but 1000 s in about 1 run in 25, then 10 tasks of 10 s."""
    q0 = Quantiles.constant(0.0)
    first = Quantiles(np.array([10.0] * 97 + [1000.0] * 4))
    return JobModel("stall", (StageModel("first", 1, first, q0),
                              StageModel("wide", 10, Quantiles.constant(10.0), q0, (0,), (Edge.BARRIER,))))


def test_each_run_weighs_once_per_progress_bin() -> None:
    """A run stalled in bin 0 for 1000 s gives 100x the time samples of a 10 s run; pooled per
    sample it sets bin 0's upper quantiles, weighted per run it is a few runs of 60 (issue 27)."""
    model = _stall_then_wide()
    per_run = precompute(model, [10], runs=60, seed=3, samples_per_run=50)
    pooled = precompute(model, [10], runs=60, seed=3, samples_per_run=50, per_run_weights=False)
    assert per_run.at_progress(0.0, 0.9)[0] < 30.0  # a typical run: <= 10 s first + 10 s wide
    assert pooled.at_progress(0.0, 0.9)[0] > 200.0  # the stalled run's samples dominate the bin
    # at p past the first stage the stall is behind every run: both agree
    assert per_run.at_progress(0.5, 0.9)[0] == pytest.approx(pooled.at_progress(0.5, 0.9)[0], rel=0.05)

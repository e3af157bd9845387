"""The Resource Estimator's formats (harvester.models.skyline_formats) against the real Estimator's
captures (fixtures resourceestimator-3.3.6) and its own golden sample (tpch_q12)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harvester.models.skyline import SkylineParams, fit_skyline, solve_skyline_lp, usage_matrix
from harvester.models.skyline_formats import (
    EstimatorFormatError,
    from_estimator_json,
    parse_native_log,
    rle_from_units,
    rle_steps,
    rle_sum,
    to_estimator_json,
)

TPCH = Path(__file__).resolve().parents[1] / "data" / "resourceestimator" / "tpch_q12.txt"
TPCH_ANSWER = [1, 1, 1738, 2535, 2484, 2478, 2468]  # Hadoop's lp/answer.txt (TestLpSolver, ±10 %)


@pytest.fixture(scope="module")
def estimator_dir(fixtures_dir) -> Path:
    return fixtures_dir / "resourceestimator-3.3.6"


def test_parsed_runs_equal_the_estimators_stored_history(estimator_dir: Path) -> None:
    log = parse_native_log((estimator_dir / "etl_daily-3runs.txt").read_text().splitlines())
    assert log.problems == ()
    assert [r.skyline.vcores.size for r in log.runs] == [60, 63, 56]
    history = json.loads((estimator_dir / "captures/history-etl_daily-all-runs.json").read_text())
    assert len(history) == 3
    for key, skylines in history:
        mem, vc = from_estimator_json(skylines[0]["skylineList"], 5)
        ours = next(r.skyline for r in log.runs if r.run_id == key["runId"])
        np.testing.assert_array_equal(ours.memory_mb, mem)
        np.testing.assert_array_equal(ours.vcores, vc)
        assert skylines[0]["jobFinishTime"] == ours.vcores.size * 5


def test_our_json_has_the_estimators_shape(estimator_dir: Path) -> None:
    captured = json.loads((estimator_dir / "captures/estimator-etl_daily.json").read_text())
    mem, vc = from_estimator_json(captured, 5)
    assert to_estimator_json(mem, vc, 5) == captured  # byte-for-byte the same keys and values
    assert list(to_estimator_json(mem, vc, 5)["resourceAllocation"])[-1] == "315"


def test_fitted_skyline_serialises_with_the_step_in_seconds() -> None:
    doc = to_estimator_json(np.array([2048, 2048, 1024]), np.array([2, 2, 1]), 60.0)
    assert doc == {"resourceAllocation": {"0": {"memory": 2048, "vcores": 2}, "120": {"memory": 1024, "vcores": 1},
                                          "180": {"memory": 0, "vcores": 0}}}


def test_golden_tpch_q12_sample_matches_the_estimators_answer() -> None:
    log = parse_native_log(TPCH.read_text().splitlines())
    assert len(log.runs) == 13 and log.problems == ()
    c = usage_matrix([r.skyline.vcores for r in log.runs])
    assert c.shape == (13, 7)
    fit = solve_skyline_lp(c, 0.1, beta=0.1)
    for ours, theirs in zip(np.floor(fit.fitted + 1e-6), TPCH_ANSWER):
        assert abs(ours - theirs) <= 0.1 * theirs  # TestLpSolver's tolerance
    np.testing.assert_allclose(log.runs[0].skyline.memory_mb, log.runs[0].skyline.vcores * 1024)


def test_memory_field_reads_memusage_as_a_memory_series() -> None:
    log = parse_native_log(TPCH.read_text().splitlines(), memory_field=True)
    run0 = next(r.skyline for r in log.runs if r.run_id == "tpch_q12_0")
    # memUsage units to t = 420 (+5); the last unit, 0:425, adds nothing (as in the Estimator's RLE)
    assert run0.memory_mb.size == 85
    assert run0.memory_mb[3] == 20791296 and run0.memory_mb[-1] == 16384
    assert run0.vcores[:7].tolist() == [1, 1, 1074, 2538, 2484, 2475, 2468] and run0.vcores[7:].sum() == 0
    model = fit_skyline([r.skyline for r in log.runs], SkylineParams(alpha=0.1))
    assert model.steps == 85 and model.memory_mb.max() >= 20348928


def test_overlapping_units_and_lines_of_one_run_are_summed_and_the_interval_takes_the_max() -> None:
    lines = [
        "p 0 0 0 0 r1 x 2:0|3:5|",
        "p 0 0 0 0 r1 x 1:3|",  # overlaps [3, 8): seconds 3-4 hold 3, seconds 5-7 hold 4
    ]
    run = parse_native_log(lines).runs[0].skyline
    assert run.vcores.tolist() == [3, 4]
    assert run.memory_mb.tolist() == [3072, 4096]


def test_bad_lines_are_reported_and_the_rest_is_kept() -> None:
    lines = ["p 0 0 0 0 r1 x 2:0|", "too short", "", "p 0 0 0 0 r2 x 2:0|abc|"]
    log = parse_native_log(lines)
    assert [r.run_id for r in log.runs] == ["r1"]
    assert [no for no, _ in log.problems] == [2, 4]
    assert "8" in log.problems[0][1] and "value:time" in log.problems[1][1]


@pytest.mark.parametrize("doc", [{}, {"resourceAllocation": []}, {"resourceAllocation": {"0": {"memory": 1}}}])
def test_malformed_estimator_json_is_a_clear_error(doc) -> None:
    with pytest.raises(EstimatorFormatError):
        from_estimator_json(doc, 5)


def test_estimator_form_has_no_key_before_the_first_or_after_the_last_allocation() -> None:
    """RLESparseResourceAllocation holds no leading zero and ends where the last allocation ends."""
    doc = to_estimator_json(np.array([0, 2048, 0, 1024, 0, 0]), np.array([0, 2, 0, 1, 0, 0]), 5)
    assert doc == {"resourceAllocation": {"5": {"memory": 2048, "vcores": 2}, "10": {"memory": 0, "vcores": 0},
                                          "15": {"memory": 1024, "vcores": 1}, "20": {"memory": 0, "vcores": 0}}}
    assert to_estimator_json(np.zeros(3), np.zeros(3), 5) == {"resourceAllocation": {}}


def test_units_become_the_estimators_allocation() -> None:
    # overlapping units add up; a unit of 0 adds nothing (no leading key, the end where the last one ends)
    assert rle_from_units([(0, 0), (5, 2), (8, 3), (13, 2), (30, 0)], 5) == ((5, 2), (8, 5), (10, 3), (13, 2),
                                                                              (18, 0))
    assert rle_from_units([(0, 2), (5, 2)], 5) == ((0, 2), (10, 0))
    assert rle_sum([((0, 2), (10, 0)), ((5, 1), (20, 0))]) == ((0, 2), (5, 3), (10, 1), (20, 0))
    assert rle_from_units([(0, 0)], 5) == () and rle_steps((), 5).size == 0


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 9)), min_size=1, max_size=12), st.integers(1, 7))
def test_steps_are_the_largest_value_at_any_second_of_each_interval(units, interval) -> None:
    rle = rle_from_units(units, interval)
    per_second: dict[int, int] = {}
    for t, v in units:
        for s in range(t, t + interval):
            per_second[s] = per_second.get(s, 0) + v
    held = [s for s, v in per_second.items() if v]
    if not held:
        assert rle == ()
        return
    start, end = min(held), max(held) + 1
    want = [max(per_second.get(s, 0) for s in range(start + k * interval, min(end, start + (k + 1) * interval)))
            for k in range(-(-(end - start) // interval))]
    assert rle_steps(rle, interval).tolist() == want
    assert rle[0][0] == start and rle[-1] == (end, 0)

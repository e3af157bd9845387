"""The §5 skyline LP (harvester.models.skyline): hand-checked instances, an independent direct LP,
the real Resource Estimator's answer on the fixtures' input, multi-resource fitting and rounding."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.sparse import lil_matrix

from harvester.models.skyline import (
    RunSkyline,
    SkylineFitError,
    SkylineParams,
    fit_skyline,
    objective_terms,
    round_up,
    solve_skyline_lp,
    usage_matrix,
)
from harvester.domain import Resources
from harvester.models.skyline_formats import from_estimator_json, parse_native_log


def direct_lp(c: np.ndarray, alpha: float, beta: float) -> float:
    """The Estimator's formulation (oa, ua, uaPredict per run and step; as the fixtures'
    lp-reference.py), solved by scipy's HiGHS: an independent check of our reformulation."""
    n, k = c.shape
    o_oa, o_ua, o_up, o_eps = k, k + n * k, k + 2 * n * k, k + 3 * n * k
    a = lil_matrix((1 + 3 * n * k, o_eps + 1))
    b = [0.0]
    for i in range(n):
        for j in range(k):
            a[0, o_up + i * k + j] = 1.0 / c[i].sum()
    a[0, o_eps] = -n
    r = 1
    for i in range(n):
        for j in range(k):
            a[r, o_oa + i * k + j], a[r, j] = -1, 1
            b.append(c[i, j])
            a[r + 1, o_up + i * k + j], a[r + 1, j] = -1, -1
            b.append(-c[i, j])
            a[r + 2, o_ua + i * k + j], a[r + 2, j] = -1, -1
            if j:
                a[r + 2, o_ua + i * k + j - 1] = 1
            b.append(-c[i, j])
            r += 3
    cost = np.zeros(o_eps + 1)
    cost[o_oa:o_ua] = alpha / n
    for i in range(n):
        cost[o_ua + i * k + k - 1] = (1 - alpha) / n
    cost[o_eps] = beta
    res = linprog(cost, A_ub=a.tocsr(), b_ub=np.array(b), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


# --- hand-checked instances ------------------------------------------------------------------


def test_one_run_is_reproduced_exactly() -> None:
    r = solve_skyline_lp(np.array([[2.0, 5.0, 3.0]]), 0.1)
    np.testing.assert_allclose(r.fitted, [2, 5, 3], atol=1e-9)
    assert r.objective == pytest.approx(0.0, abs=1e-9) and r.v == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(("alpha", "level", "objective"), [(0.1, 4.0, 0.1), (0.9, 2.0, 0.1), (0.3, 4.0, 0.3)])
def test_one_step_two_runs_alpha_picks_the_side(alpha: float, level: float, objective: float) -> None:
    # Runs need 4 and 2. For 2 <= s <= 4: α/2·(s−2) + (1−α)/2·(4−s): s = 4 when α < 1/2 (cost α),
    # s = 2 when α > 1/2 (cost 1−α). β fixed at 0.
    r = solve_skyline_lp(np.array([[4.0], [2.0]]), alpha, beta=0.0)
    assert r.fitted[0] == pytest.approx(level, abs=1e-9)
    assert r.objective == pytest.approx(objective, abs=1e-9)


def test_debt_lets_a_later_step_pay_back_an_earlier_shortage() -> None:
    # Runs (4, 0) and (0, 4), α = 0.1, β = 0. s = (0, 4): run 1's 4 container-steps are served
    # one step late (debt 4 then 0), run 2 exactly; A_o = (4 + 0)/2 = 2, A_u = 0: cost 0.2.
    # Any s2 < 4 leaves debt on run 2 at (1−α) per unit, more than the α/2 it saves.
    c = np.array([[4.0, 0.0], [0.0, 4.0]])
    r = solve_skyline_lp(c, 0.1, beta=0.0)
    np.testing.assert_allclose(r.fitted, [0.0, 4.0], atol=1e-9)
    assert (r.over, r.under, r.objective) == pytest.approx((2.0, 0.0, 0.2), abs=1e-9)


def test_beta_is_a_tenth_of_the_first_optimum() -> None:
    c = np.array([[4.0, 0.0], [0.0, 4.0]])
    r = solve_skyline_lp(c, 0.1)
    assert r.v == pytest.approx(0.2, abs=1e-9)
    assert r.beta == pytest.approx(0.02, abs=1e-12)
    assert r.objective == pytest.approx(direct_lp(c, 0.1, 0.02), abs=1e-9)


# --- against an independent formulation ------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_same_optimum_as_the_direct_formulation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 6)), int(rng.integers(1, 25))
    c = rng.integers(0, 12, (n, k)).astype(float)
    c[:, 0] += 1  # every run uses something
    alpha = float(rng.choice([0.01, 0.1, 0.5, 0.9]))
    fixed = solve_skyline_lp(c, alpha, beta=0.1)
    assert fixed.objective == pytest.approx(direct_lp(c, alpha, 0.1), rel=1e-7, abs=1e-8)
    paper = solve_skyline_lp(c, alpha)
    v = direct_lp(c, alpha, 0.0)
    assert paper.v == pytest.approx(v, rel=1e-7, abs=1e-8)
    assert paper.objective == pytest.approx(direct_lp(c, alpha, 0.1 * v), rel=1e-7, abs=1e-8)
    # The reported objective is recomputed from the definitions at the returned skyline.
    assert paper.objective == pytest.approx(objective_terms(paper.fitted, c, alpha, paper.beta)[0], abs=1e-9)


# --- the real Resource Estimator (fixtures) --------------------------------------------------


def test_same_objective_as_the_resource_estimator_on_its_own_input(fixtures_dir) -> None:
    root = fixtures_dir / "resourceestimator-3.3.6"
    log = parse_native_log((root / "etl_daily-3runs.txt").read_text().splitlines())
    c = usage_matrix([r.skyline.vcores for r in log.runs])
    ours = solve_skyline_lp(c, 0.1, beta=0.1)  # the Estimator's alpha = beta = 0.1
    est_mem, est_vc = from_estimator_json(json.loads((root / "captures/estimator-etl_daily.json").read_text()), 5)
    theirs = objective_terms(est_vc.astype(float), c, 0.1, 0.1)[0]
    # README: "objective 13.06781"; the LP is degenerate, so only the optimum is compared.
    assert ours.objective == pytest.approx(13.06781, abs=5e-6)
    assert ours.objective == pytest.approx(theirs, abs=1e-6)
    assert round_up(ours.fitted, 1).sum() == 838 == est_vc.sum()  # = the largest run's total
    np.testing.assert_array_equal(est_mem, est_vc * 1024)


def test_same_objective_as_the_fixtures_lp_reference_script(fixtures_dir) -> None:
    root = fixtures_dir / "resourceestimator-3.3.6"
    out = subprocess.run([sys.executable, "lp-reference.py", "etl_daily-3runs.txt"], cwd=root, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    reference = float(re.search(r"objective: ([0-9.]+)", out).group(1))  # printed to 6 decimals
    log = parse_native_log((root / "etl_daily-3runs.txt").read_text().splitlines())
    ours = solve_skyline_lp(usage_matrix([r.skyline.vcores for r in log.runs]), 0.1, beta=0.1)
    assert ours.objective == pytest.approx(reference, abs=1e-6)


# --- multi-resource fit and rounding ---------------------------------------------------------


def test_memory_and_vcores_are_fitted_each_on_its_own_series() -> None:
    rng = np.random.default_rng(3)
    runs = []
    for i in range(4):
        mem = rng.integers(0, 8, 30) * 1536.0  # containers of different shapes: not proportional
        vc = rng.integers(0, 12, 30).astype(float)
        mem[0] += 1536
        vc[0] += 1
        runs.append(RunSkyline(f"run{i}", 60.0, mem, vc))
    model = fit_skyline(runs, SkylineParams(alpha=0.1, memory_quantum_mb=512))
    for res, series in (("memory_mb", [r.memory_mb for r in runs]), ("vcores", [r.vcores for r in runs])):
        c = usage_matrix(series)
        fit = model.fits[res]
        assert fit.objective == pytest.approx(direct_lp(c, 0.1, fit.beta), rel=1e-7)
    assert np.all(model.memory_mb % 512 == 0)
    assert np.all(model.memory_mb >= model.fits["memory_mb"].fitted - 1e-6 * 512)
    assert np.all(model.vcores >= model.fits["vcores"].fitted - 1e-6)
    assert model.steps == 30 and model.step_s == 60.0


@pytest.mark.parametrize(("fitted", "quantum", "expected"), [
    ([0.0, 0.2, 1.0, 1.0000000001, 2.5], 1, [0, 1, 1, 1, 3]),
    ([1023.0, 1024.0, 1025.0], 1024, [1024, 1024, 2048]),
    ([4.9999999, 5.0001], 1, [5, 6]),
])
def test_rounding_goes_up_to_the_quantum(fitted, quantum, expected) -> None:
    assert round_up(np.array(fitted), quantum).tolist() == expected


@pytest.mark.parametrize(("runs", "params", "message"), [
    ([RunSkyline("a", 60.0, [1.0], [1.0])], SkylineParams(), "min_runs"),
    ([RunSkyline("a", 60.0, [1.0], [1.0]), RunSkyline("b", 30.0, [1.0], [1.0])], SkylineParams(), "different steps"),
    ([RunSkyline("a", 60.0, [1.0], [1.0]), RunSkyline("b", 60.0, [0.0], [1.0])], SkylineParams(), "no memory_mb"),
])
def test_bad_input_is_a_clear_error(runs, params, message) -> None:
    with pytest.raises(SkylineFitError, match=message):
        fit_skyline(runs, params)


def test_invalid_series_are_rejected() -> None:
    with pytest.raises(SkylineFitError, match="finite"):
        RunSkyline("a", 60.0, [1.0, -1.0], [1.0, 1.0])
    with pytest.raises(SkylineFitError, match="equal length"):
        RunSkyline("a", 60.0, [1.0], [1.0, 1.0])


def test_time_limit_stops_the_solver_with_an_error() -> None:
    c = np.random.default_rng(0).integers(1, 30, (20, 600)).astype(float)
    with pytest.raises(SkylineFitError, match="time limit|Time limit"):
        solve_skyline_lp(c, 0.01, time_limit_s=1e-6)


# --- runs of one container size (the Resource Estimator's case) ------------------------------


def test_one_container_size_gives_memory_equal_to_container_times_the_container_skyline(fixtures_dir) -> None:
    """The Estimator answers <1024 MB, 1 vcore> × x_k: memory is never fitted on its own (with a
    fixed β an LP in MB weighs ε 1,024× less than one in containers and found another skyline
    at 12 of these 63 steps)."""
    root = fixtures_dir / "resourceestimator-3.3.6"
    runs = [r.skyline for r in parse_native_log((root / "etl_daily-3runs.txt").read_text().splitlines()).runs]
    assert {r.container for r in runs} == {Resources(1024, 1)}
    model = fit_skyline(runs, SkylineParams(alpha=0.1, beta=0.1))
    np.testing.assert_array_equal(model.memory_mb, 1024 * model.vcores)
    assert list(model.fits) == ["containers"] and model.container == Resources(1024, 1)
    c = usage_matrix([r.vcores for r in runs])
    assert objective_terms(model.vcores, c, 0.1, 0.1)[0] == pytest.approx(13.06781, abs=5e-6)


def test_a_container_of_several_vcores_scales_both_series() -> None:
    rng = np.random.default_rng(5)
    box = Resources(3072, 2)
    runs = []
    for i in range(3):
        n = rng.integers(0, 9, 40).astype(float)
        n[0] += 1
        runs.append(RunSkyline(f"r{i}", 60.0, n * box.memory_mb, n * box.vcores, container=box))
    model = fit_skyline(runs, SkylineParams(alpha=0.1, beta=0.1))
    containers = model.vcores // 2
    np.testing.assert_array_equal(model.vcores, 2 * containers)
    np.testing.assert_array_equal(model.memory_mb, 3072 * containers)
    c = usage_matrix([r.vcores / 2 for r in runs])
    assert model.fits["containers"].objective == pytest.approx(direct_lp(c, 0.1, 0.1), rel=1e-7)


def test_runs_of_different_container_sizes_are_fitted_per_resource() -> None:
    a = RunSkyline("a", 60.0, [1024.0, 2048.0], [1.0, 2.0], container=Resources(1024, 1))
    b = RunSkyline("b", 60.0, [4096.0, 4096.0], [2.0, 2.0], container=Resources(2048, 1))
    model = fit_skyline([a, b], SkylineParams(alpha=0.1))
    assert set(model.fits) == {"memory_mb", "vcores"} and model.container is None


def test_series_that_do_not_count_the_same_containers_are_refused() -> None:
    with pytest.raises(SkylineFitError, match="not the same number of"):
        RunSkyline("a", 60.0, [1024.0, 1500.0], [1.0, 1.0], container=Resources(1024, 1))

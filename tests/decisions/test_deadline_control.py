"""Jockey's control decision (§4): smallest allocation meeting the deadline, hysteresis, dead zone."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pytest

from harvester.decisions.deadline_control import DeadlineContext, DeadlineParams, Rule, decide
from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.models.completion_time import AmdahlModel
from harvester.models.job_model import JobModel, Quantiles, StageModel

LEVELS = np.array([1, 2, 4, 8, 16, 32])


@dataclass
class FixedPredictor:
    """Remaining seconds per level, whatever the progress (a recording of C at one p)."""

    remaining_s: np.ndarray
    allocations: np.ndarray = field(default_factory=lambda: LEVELS)
    name: str = "fixed"

    def remaining(self, done: np.ndarray, quantile: float) -> np.ndarray:
        return np.asarray(self.remaining_s, dtype=float)

    def explain(self, done: np.ndarray, quantile: float) -> str:
        return "R(a)=fixed table"


# remaining time ~ 3200/a + 100: a=1: 3300, 2: 1700, 4: 900, 8: 500, 16: 300, 32: 200
R = 3200.0 / LEVELS + 100.0
PLAIN = DeadlineParams(quantile=0.9, slack=1.0, early_slack=0.0, dead_zone=0.05, lower_fraction=0.5, knee_tolerance=0.05,
                       cap_to_demand=False)


def ctx(now: float, current: int, deadline: float = 1000.0, *, rem: np.ndarray = R, params: DeadlineParams = PLAIN,
        progress: float = 0.5, demand: int | None = None, utility: DeadlineUtility | None = None) -> DeadlineContext:
    return DeadlineContext(now, 0.0, np.zeros(1), current, FixedPredictor(rem), utility or DeadlineUtility(deadline),
                           params, progress, job_id="job-1", demand=demand)


@pytest.mark.parametrize(("now", "current", "allocation", "rule"), [
    (0.0, 1, 4, Rule.RAISE),      # 0 + 900 <= 1000: 4 is the smallest meeting the deadline
    (0.0, 4, 4, Rule.HOLD),       # the target already
    (600.0, 4, 16, Rule.RAISE),   # 600 + 500 > 1000 at 8; 600 + 300 at 16
    (0.0, 32, 18, Rule.LOWER),    # F(32) = 200 < 950: lower by ⌈0.5·(32−4)⌉ = 14
    (60.0, 4, 4, Rule.HOLD),      # F(4) = 960: on time, in the dead zone [950, 1000]
    (0.0, 5, 4, Rule.LOWER),      # 5 is between levels: F(5) = F(4) = 900 < 950; ⌈0.5·1⌉ = 1
    (100.0, 8, 6, Rule.LOWER),    # F(8) = 600 < 950; target 4 (F = 1000)
    (500.0, 8, 8, Rule.HOLD),     # F(8) = 1000 and 4 would be late: the target
])
def test_rules_table(now: float, current: int, allocation: int, rule: Rule) -> None:
    d = decide(ctx(now, current))
    assert (d.allocation, d.rule) == (allocation, rule), d.reason
    assert d.previous == current and d.changed == (allocation != current)


def test_hold_in_the_dead_zone_even_when_a_smaller_allocation_would_do() -> None:
    flat = np.array([3300.0, 1700.0, 960.0, 955.0, 300.0, 200.0])
    d = decide(ctx(0.0, 8, rem=flat))  # F(8) = 955 in [950, 1000]; 4 would also do (960)
    assert (d.allocation, d.rule, d.target) == (8, Rule.HOLD, 4)
    assert "within dead zone" in d.reason
    d = decide(ctx(0.0, 8, rem=flat, params=replace(PLAIN, dead_zone=0.0)))
    assert (d.allocation, d.rule) == (6, Rule.LOWER)


def run_noisy(dead_zone: float, seed: int = 0) -> list[int]:
    rng = np.random.default_rng(seed)
    base = np.array([3300.0, 1700.0, 990.0, 960.0, 300.0, 200.0])
    current, seen = 8, []
    for _ in range(60):
        noisy = base * (1.0 + rng.uniform(-0.01, 0.01))  # F(4) ∈ [980, 1000], F(8) ∈ [950, 970]
        current = decide(ctx(0.0, current, rem=noisy, params=replace(PLAIN, dead_zone=dead_zone))).allocation
        seen.append(current)
    return seen


def test_dead_zone_stops_oscillation_under_prediction_noise() -> None:
    assert set(run_noisy(0.05)) == {8}
    without = run_noisy(0.0)
    assert len(set(without)) > 1  # without it the allocation moves on noise alone


def test_lowering_is_gradual_and_raising_is_immediate() -> None:
    current, seen = 32, []
    for _ in range(6):
        current = decide(ctx(0.0, current)).allocation
        seen.append(current)
    assert seen == [18, 11, 7, 5, 4, 4]          # ⌈half⌉ the gap to the target (4) each period
    assert decide(ctx(750.0, 4)).allocation == 32  # behind: 750 + 300 > 1000 needs 32 at once


def test_nothing_meets_the_deadline_best_effort_without_chasing_a_flat_tail() -> None:
    flat = np.array([5000.0, 2600.0, 1400.0, 1050.0, 1020.0, 1010.0])
    d = decide(ctx(100.0, 1, rem=flat))
    # no level meets 1000; the shortest remaining is 1010 s, within 5 %: 1050 at 8 containers
    assert (d.allocation, d.rule) == (8, Rule.BEST_EFFORT)
    assert "best effort" in d.reason
    d = decide(ctx(100.0, 32, rem=flat))  # holding more than buys anything: release gradually
    assert (d.allocation, d.rule) == (20, Rule.LOWER)


def test_never_beyond_the_knee_where_more_containers_buy_nothing() -> None:
    # flat from 8 on: 610, 600, 590 s. At 400 s, 16 containers would "meet" 1000 s by 10 s of a
    # 600 s prediction — within the 5 % knee, i.e. within the model's noise: hold 8.
    flat = np.array([3000.0, 1500.0, 800.0, 610.0, 600.0, 590.0])
    d = decide(ctx(400.0, 8, rem=flat))
    assert (d.allocation, d.target, d.rule) == (8, 8, Rule.HOLD) and "knee" in d.reason
    d = decide(ctx(400.0, 8, rem=flat, params=replace(PLAIN, knee_tolerance=0.0)))
    assert (d.allocation, d.rule) == (16, Rule.RAISE)
    d = decide(ctx(400.0, 4, rem=flat))  # below the knee: raise to it, even though it still misses
    assert (d.allocation, d.rule) == (8, Rule.BEST_EFFORT)


def test_early_slack_over_allocates_at_the_start_and_fades() -> None:
    prm = replace(PLAIN, slack=1.0, early_slack=0.2)
    at_start = decide(ctx(0.0, 1, rem=R, params=prm, progress=0.0))   # F(4) = 1.2·900 = 1080 > 1000 -> 8
    at_end = decide(ctx(0.0, 1, rem=R, params=prm, progress=1.0))     # F(4) = 900 -> 4
    assert (at_start.allocation, at_end.allocation) == (8, 4)
    assert "1.200·R(a)" in at_start.reason


def test_demand_caps_the_allocation() -> None:
    prm = replace(PLAIN, cap_to_demand=True)
    d = decide(ctx(600.0, 4, params=prm, demand=10))
    assert d.target == 16 and d.allocation == 10 and "capped to demand 10" in d.reason
    assert decide(ctx(600.0, 4, params=prm, demand=None)).allocation == 16
    assert decide(ctx(600.0, 4, params=prm, demand=0)).allocation == 1  # never below min_allocation


def test_min_and_max_allocation_bound_the_choice() -> None:
    prm = replace(PLAIN, min_allocation=2, max_allocation=8)
    assert decide(ctx(600.0, 4, params=prm)).allocation == 8   # would need 16
    assert decide(ctx(0.0, 16, params=prm)).allocation == 8    # above the cap: back to it
    assert decide(ctx(0.0, 1, params=prm, rem=np.full(6, 10.0))).allocation == 2


def test_soft_deadline_prefers_the_earliest_finish_when_late() -> None:
    soft = DeadlineUtility(1000.0, hard_deadline_s=2000.0, soft_penalty_per_s=0.001, hard_penalty=1.0)
    d = decide(ctx(900.0, 4, utility=soft))  # every level is late (F(32) = 1100); utility falls with lateness
    assert d.rule is Rule.BEST_EFFORT and d.allocation == 32  # 16 leaves 300 s, more than 5 % over 200 s


def test_reason_carries_the_formula_and_inputs() -> None:
    d = decide(ctx(600.0, 4))
    for part in ("raise 4→16", "F(4)=1500s", "p=0.500", "elapsed=600s", "R(a)=fixed table", "hard deadline 1000s"):
        assert part in d.reason
    assert d.predicted_finish_s == pytest.approx(900.0) and d.predicted_finish_current_s == pytest.approx(1500.0)


def test_works_with_the_amdahl_predictor() -> None:
    q0 = Quantiles.constant(0.0)
    model = JobModel("j", (StageModel("a", 100, Quantiles.constant(10.0), q0),))
    am = AmdahlModel.fit(model, [1, 10, 100])  # S = 10, P = 990: a=1: 1000, 10: 109, 100: 19.9
    c = DeadlineContext(0.0, 0.0, np.zeros(1), 1, am, DeadlineUtility(200.0), PLAIN, 0.0)
    d = decide(c)
    assert d.allocation == 10 and "Amdahl" in d.reason


@pytest.mark.parametrize("bad", [
    dict(quantile=0.0), dict(quantile=1.5), dict(slack=0.9), dict(early_slack=-1), dict(dead_zone=1.0),
    dict(lower_fraction=0.0), dict(min_allocation=0), dict(min_allocation=5, max_allocation=2),
    dict(knee_tolerance=-0.1),
])
def test_bad_params_are_rejected(bad: dict) -> None:
    with pytest.raises(ValueError):
        DeadlineParams(**bad)

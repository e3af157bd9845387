"""Verdict rule and reserve-quantile recommendation (harvester/whatif/verdicts.py)."""

from __future__ import annotations

import math

import pytest

from harvester.whatif.verdicts import (MATERIAL, TECHNIQUES, candidate_quantiles, change, recommend_quantile,
                                       verdict, verdicts)

ALG1 = next(t for t in TECHNIQUES if t.candidate == "yarn-h")
GUARD = next(t for t in TECHNIQUES if t.name == "the guard")


def figs(**kw: dict) -> dict:
    return kw


def test_material_gain_turns_it_on_with_the_measured_figure() -> None:
    v = verdict(ALG1, figs(**{"yarn-h": {"job_time_mean_s": 800.0, "unmet_primary_core_hours": 10.0, "task_kills": 5},
                              "yarn-pt": {"job_time_mean_s": 1000.0, "unmet_primary_core_hours": 10.0, "task_kills": 5}}))
    assert v.decision == "turn it on" and v.goal_change == pytest.approx(-0.2)
    assert "-20.0%" in v.line and "turn it on" in v.line


def test_small_gain_leaves_it_off() -> None:
    v = verdict(ALG1, {"yarn-h": {"job_time_mean_s": 990.0, "unmet_primary_core_hours": 1.0, "task_kills": 0},
                       "yarn-pt": {"job_time_mean_s": 1000.0, "unmet_primary_core_hours": 1.0, "task_kills": 0}})
    assert v.decision == "leave it off" and "-1.0%" in v.line


def test_a_worse_guarded_figure_leaves_it_off_even_with_a_gain() -> None:
    v = verdict(ALG1, {"yarn-h": {"job_time_mean_s": 500.0, "unmet_primary_core_hours": 20.0, "task_kills": 5},
                       "yarn-pt": {"job_time_mean_s": 1000.0, "unmet_primary_core_hours": 10.0, "task_kills": 5}})
    assert v.decision == "leave it off" and "unmet primary demand +100.0%" in v.line


def test_missing_policy_is_not_measured() -> None:
    v = verdict(GUARD, {"stock": {"unmet_primary_core_hours": 3.0}})
    assert v.decision == "not measured"
    assert len(verdicts({})) == len(TECHNIQUES)


def test_change_floors_and_zero_base() -> None:
    assert change(0.2, 0.1, "unmet_primary_core_hours") == 0.0        # both under the 0.5 core-hour floor
    assert math.isinf(change(5.0, 0.0, "task_kills"))
    assert change(110.0, 100.0, "job_time_mean_s") == pytest.approx(0.1)
    assert MATERIAL == 0.05


def test_recommended_quantile_harvests_most_without_more_unmet_primary() -> None:
    runs = {0.9: {"harvested_core_hours": 120.0, "unmet_primary_core_hours": 30.0},
            0.95: {"harvested_core_hours": 100.0, "unmet_primary_core_hours": 10.0},
            0.99: {"harvested_core_hours": 105.0, "unmet_primary_core_hours": 9.0}}
    q, why = recommend_quantile(runs, 0.95)
    assert q == 0.99 and "+5.0 core-hours" in why
    runs[0.99]["harvested_core_hours"] = 90.0
    assert recommend_quantile(runs, 0.95)[0] == 0.95
    with pytest.raises(ValueError):
        recommend_quantile(runs, 0.5)


def test_candidates_are_neighbours() -> None:
    assert candidate_quantiles(0.95) == (0.9, 0.95, 0.99)
    assert candidate_quantiles(0.999) == (0.99, 0.999)
    assert candidate_quantiles(0.97) == (0.95, 0.97, 0.99)

"""bench/phoenix_steps.py: which commits are the fidelity review's steps, and a step's figures."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("phoenix_steps", Path(__file__).resolve().parents[2] / "bench" / "phoenix_steps.py")
steps_mod = sys.modules.setdefault("phoenix_steps", importlib.util.module_from_spec(_spec))  # dataclasses look it up
_spec.loader.exec_module(steps_mod)

LOG = [
    "a0 Phoenix evaluation S9: a step before the base does not count",
    "a1 Phoenix simulator: record the busy share of the workers every 5 s (the measured load) in every run",
    "a2 Phoenix evaluation S1: Table II constraints",
    "a3 unrelated commit",
    "a4 Phoenix evaluation S2a: short-only partition 2%",
    "a5 Phoenix evaluation S5: CRV reordering",
    "a6 Phoenix evaluation S2a: short-only partition 2%, fixed",
    "a7 Phoenix evaluation: Hawk-C baseline",
]


def test_steps_are_the_base_and_the_s_commits_oldest_first_a_fix_replacing_its_step() -> None:
    steps = steps_mod.steps_from_log(LOG)
    assert [(s.id, s.commit) for s in steps] == [("base", "a1"), ("S1", "a2"), ("S2a", "a6"), ("S5", "a5")]
    assert steps[2].subject == "short-only partition 2%, fixed"
    assert steps[1].policies == ("Eagle-C", "Phoenix") and steps[3].policies == ("Phoenix",)


def test_a_log_without_the_base_is_refused() -> None:
    with pytest.raises(ValueError, match="no commit"):
        steps_mod.steps_from_log(LOG[2:])


def _row(policy: str, load: float, p99: float, p50: float = 1.0, relaxed: int = 0) -> dict:
    pct = {"p50": p50, "p90": p99, "p99": p99, "n": 10}
    return {"trace": "YH1_sub", "load": load, "seed": 1, "policy": policy, "short": pct, "constrained": pct,
            "relaxed_jobs": relaxed}


def test_step_figures_by_hand() -> None:
    rows = [_row("Eagle-C", 1.5, 200.0), _row("Phoenix", 1.5, 100.0, relaxed=4),
            _row("Eagle-C", 3.0, 50.0), _row("Phoenix", 3.0, 100.0)]
    f = steps_mod.step_figures(rows)
    assert f["p99_ratio_vs_eagle_c"] == pytest.approx(math.sqrt(2.0 * 0.5)) and f["runs"] == 2
    assert f["eagle_c_short_p99_s"] == 125.0 and f["phoenix_short_p99_s"] == 100.0 and f["phoenix_relaxed_jobs"] == 2


def test_a_phoenix_only_step_uses_the_previous_steps_eagle_c() -> None:
    f = steps_mod.step_figures([_row("Phoenix", 1.5, 50.0)], carried=[_row("Eagle-C", 1.5, 200.0)])
    assert f["p99_ratio_vs_eagle_c"] == 4.0 and f["eagle_c_short_p99_s"] == 200.0
    # a step that re-ran Eagle-C ignores the carried rows
    f = steps_mod.step_figures([_row("Phoenix", 1.5, 50.0), _row("Eagle-C", 1.5, 100.0)], carried=[_row("Eagle-C", 1.5, 200.0)])
    assert f["p99_ratio_vs_eagle_c"] == 2.0


def test_the_table_shows_each_steps_effect_alone() -> None:
    steps = steps_mod.steps_from_log(LOG[1:3])
    figs = {"base": {"p99_ratio_vs_eagle_c": 0.8, "eagle_c_short_p99_s": 200.0, "phoenix_short_p99_s": 250.0},
            "S1": {"p99_ratio_vs_eagle_c": 1.2, "eagle_c_short_p99_s": 300.0, "phoenix_short_p99_s": 250.0}}
    lines = steps_mod.table(steps, figs).splitlines()
    assert lines[2].endswith("| 200 | 250 | 0.80 | — | — | — |")
    assert lines[3].endswith("| 300 | 250 | 1.20 | 1.50 | 1.50 | 1.00 |")

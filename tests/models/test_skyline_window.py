"""A skyline fitted for its SLO window: the §5 LP on the runs that fit it (models/skyline_window.py)."""

from __future__ import annotations

import numpy as np

from harvester.models.skyline import RunSkyline, SkylineParams
from harvester.models.skyline_window import fit_in_window, needed_steps, run_steps


def run(name: str, containers: list[int]) -> RunSkyline:
    c = np.asarray(containers, dtype=float)
    return RunSkyline(name, 60.0, c * 1024, c)


def test_a_skyline_that_fits_is_the_lp_over_every_run() -> None:
    w = fit_in_window([run("a", [4, 4, 2]), run("b", [4, 2])], room=5)
    assert w.model is not None and (w.used, w.longer) == (2, 0) and "over 2 runs" in w.how
    assert w.model.vcores.tolist() == [4, 4, 2]


def test_the_runs_longer_than_the_window_are_left_out() -> None:
    """Before: the LP over all three is as long as the slow run (6 steps) and LowCost rejected it
    in a 3-step window whatever the plan held."""
    runs = [run("a", [4, 4, 2]), run("b", [4, 3, 1]), run("slow", [4, 2, 2, 2, 1, 1])]
    full = fit_in_window(runs, room=None)
    assert full.model is not None and needed_steps(full.model.memory_mb.tolist(), full.model.vcores.tolist()) == 6
    w = fit_in_window(runs, room=3)
    assert w.model is not None and (w.used, w.longer) == (2, 1) and w.model.steps == 3
    assert "over the 2 of 3 runs no longer than the window's 3 steps" in w.how and "1 longer run(s) left out" in w.how


def test_a_window_shorter_than_the_typical_run_has_no_skyline() -> None:
    runs = [run("a", [1, 1, 1, 1]), run("b", [1, 1, 1, 1, 1]), run("c", [2])]
    w = fit_in_window(runs, room=2, params=SkylineParams(min_runs=1))
    assert w.model is None and "only 1 of the 3 runs were that short (need 2: the median run must fit)" in w.why
    assert run_steps(run("x", [0, 3, 0, 1, 0])) == 4

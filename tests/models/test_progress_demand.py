"""The demand look-ahead of the deadline control (models/progress.py: demand, drains_within)."""

from __future__ import annotations

import numpy as np

from harvester.models.job_model import Edge, JobModel, Quantiles, StageModel
from harvester.models.progress import demand, drains_within


def narrow_then_wide() -> JobModel:
    q0 = Quantiles.constant(0.0)
    return JobModel("nw", (StageModel("one", 1, Quantiles(np.linspace(900.0, 1100.0, 101)), q0),
                           StageModel("wide", 400, Quantiles.constant(60.0), q0, (0,), (Edge.BARRIER,))))


def test_a_young_long_task_does_not_drain_within_a_period() -> None:
    m = narrow_then_wide()
    assert not drains_within(m, [np.array([10.0]), np.array([])], 60.0)[0]  # ~990 s to go
    assert drains_within(m, [np.array([1000.0]), np.array([])], 60.0)[0]  # median end 1050: 50 s to go
    assert drains_within(m, [np.array([5000.0]), np.array([])], 60.0)[0]  # past the fitted max: ends now
    assert drains_within(m, [np.array([]), np.array([])], 60.0).all()  # nothing running


def test_demand_counts_the_next_wave_only_when_its_parents_end_soon() -> None:
    m = narrow_then_wide()
    done, running, pending = np.array([0, 0]), np.array([1, 0]), np.array([0, 0])
    assert demand(m, done, running, pending) == 401  # age unknown: the next wave counts (as before)
    assert demand(m, done, running, pending, np.array([False, True])) == 1
    assert demand(m, done, running, pending, np.array([True, True])) == 401

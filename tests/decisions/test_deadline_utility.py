"""Deadline utility with soft and hard penalties (Jockey §2.2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harvester.decisions.deadline_utility import DeadlineUtility

SOFT = DeadlineUtility(100.0, hard_deadline_s=200.0, value=1.0, soft_penalty_per_s=0.01, hard_penalty=2.0)


@pytest.mark.parametrize(("utility", "t", "expected"), [
    (DeadlineUtility(100.0), 50.0, 1.0),
    (DeadlineUtility(100.0), 100.0, 1.0),        # on the deadline is on time
    (DeadlineUtility(100.0), 100.001, -1.0),     # hard: the penalty at once
    (SOFT, 150.0, 0.5),                          # 1 − 0.01 · 50
    (SOFT, 200.0, 0.0),
    (SOFT, 200.5, -2.0),                         # past the hard deadline
    (DeadlineUtility(10.0, value=5.0, hard_penalty=0.0), 11.0, 0.0),
])
def test_utility_table(utility: DeadlineUtility, t: float, expected: float) -> None:
    assert float(utility(t)) == pytest.approx(expected)


def test_vectorised_over_finishing_times() -> None:
    assert SOFT(np.array([0.0, 150.0, 300.0])).tolist() == pytest.approx([1.0, 0.5, -2.0])


@pytest.mark.parametrize("kwargs", [
    dict(deadline_s=0.0), dict(deadline_s=float("inf")), dict(deadline_s=10.0, hard_deadline_s=5.0),
    dict(deadline_s=10.0, soft_penalty_per_s=-1.0), dict(deadline_s=10.0, hard_penalty=-1.0),
    dict(deadline_s=10.0, hard_deadline_s=20.0, soft_penalty_per_s=1.0, hard_penalty=0.0),  # would jump up at 20 s
])
def test_bad_utilities_are_rejected(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        DeadlineUtility(**kwargs)


@given(d=st.floats(1, 1e5), extra=st.floats(0, 1e5), pen=st.floats(0, 1e-3), ts=st.lists(st.floats(0, 3e5), min_size=2))
def test_utility_never_rises_with_later_finishing(d: float, extra: float, pen: float, ts: list[float]) -> None:
    u = DeadlineUtility(d, hard_deadline_s=d + extra, soft_penalty_per_s=pen, hard_penalty=1.0 + pen * extra)
    t = np.sort(np.array(ts))
    assert np.all(np.diff(u(t)) <= 1e-12)


def test_describe_names_the_kind() -> None:
    assert "hard deadline 100s" in DeadlineUtility(100.0).describe()
    assert "soft deadline 100s" in SOFT.describe() and "hard at 200s" in SOFT.describe()

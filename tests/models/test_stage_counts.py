"""Tasks per stage of a running YARN job from what the RM shows (models/stage_counts.py)."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.models.job_model import Edge, JobModel, Quantiles, StageModel
from harvester.models.stage_counts import MAPREDUCE_PRIORITIES, stage_counts, stage_priorities

Q = Quantiles.constant(10.0)


def job(*stages: tuple[str, int, tuple[int, ...], tuple[Edge, ...]]) -> JobModel:
    return JobModel("j", tuple(StageModel(n, t, Q, Q, p, e) for n, t, p, e in stages))


MR = job(("map", 8, (), ()), ("reduce", 2, (0,), (Edge.BARRIER,)))
PRIO = stage_priorities(MR, None)


@pytest.mark.parametrize(("running", "pending", "seen", "done"), [
    ({}, {}, (), [0, 0]),                        # before the AM's first ask: nothing started
    ({20: 2}, {20: 6}, (), [0, 0]),              # recurring-reservation-update: AM + 2 maps, 6 pending
    ({20: 6}, {}, (), [2, 0]),                   # ... later: 6 running, nothing pending
    ({20: 5, 10: 1}, {10: 0}, (), [3, 0]),       # slow start: a reduce runs, maps unfinished: 0 reduces done
    ({10: 2}, {}, (), [8, 0]),                   # both reduces run: every map is done (the reduce started it)
    ({10: 1}, {}, (True, True), [8, 1]),
    ({}, {}, (True, True), [8, 2]),              # all done, nothing alive (seen before)
    ({20: 3, 5: 1}, {5: 1}, (), [3, 0]),         # re-runs of failed maps ask at priority 5: still maps
])
def test_mapreduce_counts(running: dict, pending: dict, seen: tuple, done: list) -> None:
    out = stage_counts(MR, PRIO, running, pending, seen)
    assert out.done.tolist() == done


def test_a_one_to_one_child_is_done_at_most_as_far_as_its_parent() -> None:
    m = job(("a", 4, (), ()), ("b", 4, (0,), (Edge.ONE_TO_ONE,)))
    out = stage_counts(m, {"a": (1,), "b": (2,)}, {1: 2, 2: 1}, {}, ())
    assert out.done.tolist() == [2, 2] and out.started == (True, True)


def test_priorities_default_to_mapreduce_and_are_checked() -> None:
    assert PRIO == {"map": MAPREDUCE_PRIORITIES["map"], "reduce": (10,)}
    one = job(("work", 3, (), ()))
    assert stage_counts(one, stage_priorities(one, None), {0: 1, 7: 1}, {0: 1}, ()).done.tolist() == [0]
    with pytest.raises(ValueError, match="stage_priorities"):
        stage_priorities(job(("x", 1, (), ()), ("y", 1, (0,), (Edge.BARRIER,))), None)
    with pytest.raises(ValueError, match="no entry"):
        stage_priorities(MR, {"map": [20]})
    with pytest.raises(ValueError, match="priority 20"):
        stage_priorities(MR, {"map": [20], "reduce": [20]})
    assert np.array_equal(stage_counts(MR, stage_priorities(MR, {"map": [7], "reduce": [8]}), {7: 1}, {}, ()).running,
                          [1, 0])

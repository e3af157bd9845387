"""Invariants of Jockey's live pure parts (hypothesis): a reservation resize keeps the window and
everything before the cut, and holds exactly the new size after it; tasks per stage never exceed
a stage's tasks and never count a stage behind an unfinished barrier."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.decisions.deadline_reservation import max_per_step, resized
from harvester.decisions.reservation_actions import ReservationSpec, SpecStage
from harvester.domain import Resources
from harvester.models.job_model import Edge, JobModel, Quantiles, StageModel
from harvester.models.stage_counts import stage_counts, stage_priorities

C = Resources(1024, 1)
A = 1_795_504_820_000

stages = st.lists(st.tuples(st.integers(1, 20), st.integers(1, 30)), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(stages, st.integers(1, 40), st.data())
def test_resize_keeps_window_and_past(shape: list[tuple[int, int]], n: int, data: st.DataObject) -> None:
    spec = ReservationSpec("r", A, A + sum(s for _, s in shape) * 1000,
                           tuple(SpecStage(C, c, c, s * 1000) for c, s in shape))
    cut = A + data.draw(st.integers(0, spec.length_ms - 1))
    out = resized(spec, cut, n)
    assert out is not None
    assert (out.arrival_ms, out.deadline_ms) == (spec.arrival_ms, spec.deadline_ms)
    assert sum(s.duration_ms for s in out.stages) == spec.length_ms and all(s.duration_ms > 0 for s in out.stages)
    for t in range(spec.arrival_ms, spec.deadline_ms, 997):
        assert out.containers_at(t) == (spec.containers_at(t) if t < cut else n)
    steps = -(-spec.length_ms // 5000)
    assert all(a >= b for a, b in zip(max_per_step(out, 5000, steps),
                                       [out.containers_at(A + i * 5000) for i in range(steps)]))


Q = Quantiles.constant(5.0)
MR = JobModel("mr", (StageModel("map", 10, Q, Q), StageModel("reduce", 3, Q, Q, (0,), (Edge.BARRIER,))))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([20, 19, 5, 10, 0, 7]), st.integers(0, 12), max_size=4),
       st.dictionaries(st.sampled_from([20, 19, 5, 10, 0, 7]), st.integers(0, 12), max_size=4),
       st.tuples(st.booleans(), st.booleans()))
def test_counts_stay_within_the_stages(running: dict, pending: dict, seen: tuple) -> None:
    out = stage_counts(MR, stage_priorities(MR, None), running, pending, seen)
    assert all(0 <= d <= s.tasks for d, s in zip(out.done.tolist(), MR.stages))
    assert out.done[1] == 0 or out.done[0] == MR.stages[0].tasks, "no reduce done before every map"
    assert out.started[0] or not out.started[1], "a started reduce means started maps"

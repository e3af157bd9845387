"""Jockey's event simulator (§4.1) on DAGs whose schedule can be worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harvester.models.job_model import Edge, JobModel, Quantiles, StageModel
from harvester.models.job_sim import CompiledJob, DagRun, Disturbance, Draws, draw, simulate


def stage(name: str, tasks: int, seconds: float, parents: tuple[int, ...] = (), *, edge: Edge = Edge.BARRIER,
          failures: tuple[float, ...] = (0.0,), init: float = 0.0) -> StageModel:
    return StageModel(name, tasks, Quantiles.constant(seconds), Quantiles.constant(init), parents,
                      tuple(edge for _ in parents), failures)


def finish(model: JobModel, allocation: int, seed: int = 0) -> float:
    job = CompiledJob(model)
    return simulate(job, draw(job, np.random.default_rng(seed)), allocation).run_to_end()


def hand_draws(job: CompiledJob, occupy: list[list[float]], failed: list[list[bool]]) -> Draws:
    cols = job.draw_columns
    pad = [row + [row[-1]] * (cols - len(row)) for row in occupy]
    fpad = [row + [False] * (cols - len(row)) for row in failed]
    return Draws(pad, fpad, [[1.0] * cols for _ in occupy], np.zeros((len(occupy), cols)))


@pytest.mark.parametrize(("tasks", "containers", "expected"), [
    (4, 2, 20.0),   # two waves of 10 s
    (4, 4, 10.0),
    (4, 3, 20.0),   # the fourth task waits for a container
    (5, 2, 30.0),
    (4, 1, 40.0),
    (4, 8, 10.0),   # spare containers do not help
])
def test_one_stage_of_fixed_tasks(tasks: int, containers: int, expected: float) -> None:
    assert finish(JobModel("j", (stage("a", tasks, 10.0),)), containers) == pytest.approx(expected)


@pytest.mark.parametrize(("containers", "expected"), [(2, 25.0), (4, 15.0), (1, 50.0)])
def test_barrier_waits_for_every_parent_task(containers: int, expected: float) -> None:
    # a: 4 × 10 s, then b: 2 × 5 s after ALL of a
    model = JobModel("j", (stage("a", 4, 10.0), stage("b", 2, 5.0, (0,))))
    assert finish(model, containers) == pytest.approx(expected)


def test_initialization_holds_the_container() -> None:
    model = JobModel("j", (stage("a", 4, 10.0, init=2.0),))
    assert finish(model, 2) == pytest.approx(24.0)


def test_independent_stages_share_the_containers_in_ready_order() -> None:
    # a (2 × 10 s) and c (2 × 10 s) are both ready at 0; b (1 × 10 s) needs a. 2 containers:
    # a takes both at 0 (stage order breaks the tie); at 10 c (ready since 0) goes before b
    # (ready at 10) and takes both; b runs [20, 30).
    model = JobModel("j", (stage("a", 2, 10.0), stage("b", 1, 10.0, (0,)), stage("c", 2, 10.0)))
    job = CompiledJob(model)
    run = simulate(job, draw(job, np.random.default_rng(0)), 2)
    assert run.finish_s == pytest.approx(30.0)
    assert run.done_by(20.0).tolist() == [2, 0, 2]


def test_one_to_one_edge_starts_a_child_task_when_its_own_parent_task_ends() -> None:
    model = JobModel("j", (stage("a", 2, 10.0), stage("b", 2, 5.0, (0,), edge=Edge.ONE_TO_ONE)))
    barrier = JobModel("j", (stage("a", 2, 10.0), stage("b", 2, 5.0, (0,))))
    for m, b_done_at_17 in ((model, 1), (barrier, 0)):
        job = CompiledJob(m)
        # a's tasks take 10 s and 30 s; b's 5 s; 3 containers
        d = hand_draws(job, [[10.0], [30.0], [5.0], [5.0]], [[False]] * 4)
        run = DagRun(job, d, 3)
        assert run.run_to_end() == pytest.approx(35.0)
        assert run.done_by(17.0)[1] == b_done_at_17


def test_failed_attempt_reruns_then_succeeds() -> None:
    model = JobModel("j", (stage("a", 1, 10.0, failures=(1.0, 0.0)),))
    job = CompiledJob(model)
    d = hand_draws(job, [[4.0, 10.0]], [[True, False]])  # fails 4 s in, the re-run succeeds
    run = DagRun(job, d, 1)
    assert run.run_to_end() == pytest.approx(14.0)
    assert [(k, bad) for _, k, _, _, _, bad in run.attempts_log] == [(0, True), (1, False)]


def test_failure_probability_one_then_zero_costs_a_partial_attempt() -> None:
    model = JobModel("j", (stage("a", 1, 10.0, failures=(1.0, 0.0)),))
    job = CompiledJob(model)
    run = simulate(job, draw(job, np.random.default_rng(3)), 1)
    (_, _, _, s0, e0, bad0), (_, _, r1, s1, e1, bad1) = run.attempts_log
    assert bad0 and not bad1
    assert 0 < e0 - s0 < 10.0 and r1 == e0 == s1  # the re-run is ready the instant the attempt failed
    assert run.finish_s == pytest.approx(e0 + 10.0)


def test_a_task_failing_max_attempts_times_fails_the_job() -> None:
    model = JobModel("j", (stage("a", 2, 10.0, failures=(1.0,)),))
    job = CompiledJob(model, max_attempts=4)
    run = DagRun(job, draw(job, np.random.default_rng(0)), 1)
    assert run.run_to_end() == math.inf
    assert math.isfinite(run.failed_at) and run.ended_by(run.failed_at)
    assert max(k for t, k, *_ in run.attempts_log if t == 0) == 3


def test_more_containers_apply_at_once() -> None:
    job = CompiledJob(JobModel("j", (stage("a", 4, 10.0),)))
    run = DagRun(job, draw(job, np.random.default_rng(0)), 1)
    run.advance(10.0)
    run.set_allocation(3)
    assert run.run_to_end() == pytest.approx(20.0)  # [0,10) one task, then three at 10


def test_fewer_containers_never_kill_running_tasks() -> None:
    job = CompiledJob(JobModel("j", (stage("a", 8, 10.0),)))
    run = DagRun(job, draw(job, np.random.default_rng(0)), 4)
    run.advance(5.0)
    assert run.running_at(5.0).tolist() == [4]
    run.set_allocation(1)
    assert run.run_to_end() == pytest.approx(50.0)  # four end at 10, then one at a time
    assert run.done_by(10.0)[0] == 4


def test_pending_counts_ready_tasks_waiting_for_a_container() -> None:
    job = CompiledJob(JobModel("j", (stage("a", 6, 10.0),)))
    run = DagRun(job, draw(job, np.random.default_rng(0)), 2)
    run.advance(5.0)
    assert (run.running_at(5.0).tolist(), run.pending_at(5.0).tolist()) == ([2], [4])


def test_kill_event_reruns_without_counting_as_a_failure() -> None:
    model = JobModel("j", (stage("a", 1, 10.0),))
    job = CompiledJob(model, max_attempts=1)
    run = DagRun(job, draw(job, np.random.default_rng(0)), 1, disturbance=Disturbance((4.0,), 1.0))
    assert run.run_to_end() == pytest.approx(14.0)  # killed at 4 s, re-run 10 s; no job failure


def test_slow_window_stretches_attempts_that_start_inside_it() -> None:
    model = JobModel("j", (stage("a", 2, 10.0),))
    job = CompiledJob(model)
    run = DagRun(job, draw(job, np.random.default_rng(0)), 1, disturbance=Disturbance(slow_from_s=0.0, slow_to_s=5.0,
                                                                                    slow_factor=2.0))
    assert run.run_to_end() == pytest.approx(30.0)  # first task 20 s (started in the window), second 10 s


def test_same_draws_same_run_and_the_record_round_trips() -> None:
    model = JobModel("j", (stage("a", 3, 10.0, failures=(0.5, 0.5)), stage("b", 2, 4.0, (0,))))
    job = CompiledJob(model)
    d = draw(job, np.random.default_rng(11))
    r1, r2 = simulate(job, d, 2), simulate(job, d, 2)
    assert r1.finish_s == r2.finish_s and r1.attempts_log == r2.attempts_log
    rec = r1.record("run-1")
    assert [s.name for s in rec.stages] == ["a", "b"] and rec.stages[1].parents == ("a",)
    assert len(rec.attempts) == len(r1.attempts_log)
    assert sum(not a.failed for a in rec.attempts) == 5


def test_allocation_must_be_positive() -> None:
    job = CompiledJob(JobModel("j", (stage("a", 1, 1.0),)))
    with pytest.raises(ValueError, match=">= 1"):
        DagRun(job, draw(job, np.random.default_rng(0)), 0)

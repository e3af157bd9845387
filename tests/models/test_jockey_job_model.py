"""Jockey's job model from prior runs (§4.1) and its progress indicator (§4.2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harvester.models.job_model import (
    AttemptRecord, Edge, FitError, JobModel, Quantiles, RunRecord, StageModel, StageRecord, fit_job_model,
    load_runs_json, runs_from_dict, runs_to_dict,
)
from harvester.models.progress import ProgressIndicator, demand, total_work_with_queue
from harvester.sim.jockey.truth import run_from_jobspec
from harvester.sim.traces import load_jobs

MAP_REDUCE = (StageRecord("map", 3), StageRecord("reduce", 1, ("map",), (Edge.BARRIER,)))


def attempts(*rows: tuple) -> tuple[AttemptRecord, ...]:
    return tuple(AttemptRecord(*r) for r in rows)


def mr_run(run_id: str, map_seconds: list[float], reduce_seconds: float = 20.0) -> RunRecord:
    rows = [("map", i, 0, 1.0, 1.0 + d, 1.0, False, 0.0) for i, d in enumerate(map_seconds)]
    end = 1.0 + max(map_seconds)
    rows.append(("reduce", 0, 0, end + 3.0, end + 3.0 + reduce_seconds, 2.0, False, end))
    return RunRecord(run_id, MAP_REDUCE, attempts(*rows))


def test_fit_takes_runtime_minus_init_and_queueing_from_the_records() -> None:
    runs = [mr_run("r1", [11.0, 21.0, 31.0]), mr_run("r2", [11.0, 21.0, 31.0])]
    model = fit_job_model(runs, min_stage_samples=1)
    m, r = model.stages
    assert (m.name, m.tasks, m.parents, r.parents, r.edges) == ("map", 3, (), (0,), (Edge.BARRIER,))
    assert m.runtime.values[0] == pytest.approx(10.0) and m.runtime.max == pytest.approx(30.0)
    assert m.init.mean == pytest.approx(1.0)
    assert m.queue_s == pytest.approx(1.0)  # ready at 0, started at 1
    assert r.runtime.max == pytest.approx(18.0) and r.queue_s == pytest.approx(3.0)
    assert m.failure_probs == (0.0, 0.0)


def test_failure_probabilities_separate_first_attempts_from_reruns() -> None:
    rows = [("a", i, 0, 0.0, 5.0, 0.0, i < 2) for i in range(4)]      # 2 of 4 first attempts fail
    rows += [("a", 0, 1, 5.0, 15.0, 0.0, True), ("a", 0, 2, 15.0, 25.0, 0.0, False),
             ("a", 1, 1, 5.0, 15.0, 0.0, False)]                      # 1 of 3 re-runs fails
    run = RunRecord("r", (StageRecord("a", 4),), attempts(*rows))
    st = fit_job_model([run], min_stage_samples=1).stages[0]
    assert st.failure_probs == pytest.approx((0.5, 1 / 3))
    assert st.failure_prob(0) == 0.5 and st.failure_prob(7) == pytest.approx(1 / 3)
    assert st.expected_attempts == pytest.approx(1 + 0.5 / (1 - 1 / 3))
    assert st.runtime.values[[0, -1]].tolist() == [5.0, 10.0]  # successful attempts only: 5, 5, 10, 10 s


def test_small_stages_borrow_the_jobs_shape_and_failure_rate() -> None:
    rng = np.random.default_rng(0)
    big = rng.lognormal(np.log(10.0), 0.5, 200)
    rows = [("wide", i, 0, 0.0, float(d)) for i, d in enumerate(big)]
    rows += [("one", 0, 0, 0.0, 100.0)]
    run = RunRecord("r", (StageRecord("wide", 200), StageRecord("one", 1, ("wide",))), attempts(*rows))
    wide, one = fit_job_model([run], min_stage_samples=30).stages
    # the one-task stage keeps its median (100 s) but takes the job's spread: its tail is 100 × (wide max / wide median)
    assert np.median(one.runtime.values) == pytest.approx(100.0, rel=0.02)
    assert one.runtime.max == pytest.approx(100.0 * big.max() / np.median(big), rel=1e-6)
    alone = fit_job_model([run], min_stage_samples=1).stages[1]
    assert alone.runtime.max == pytest.approx(100.0)


def test_structure_comes_from_the_latest_run_and_older_runs_add_samples() -> None:
    old = RunRecord("r0", (StageRecord("map", 2), StageRecord("gone", 1)),
                    attempts(("map", 0, 0, 0.0, 50.0), ("map", 1, 0, 0.0, 50.0), ("gone", 0, 0, 0.0, 1.0)))
    new = mr_run("r1", [10.0, 10.0, 10.0])
    model = fit_job_model([old, new], min_stage_samples=1)
    assert [s.name for s in model.stages] == ["map", "reduce"] and model.stages[0].tasks == 3
    assert model.stages[0].runtime.max == pytest.approx(50.0)


@pytest.mark.parametrize(("runs", "message"), [
    ([], "no prior runs"),
    ([RunRecord("r", (StageRecord("a", 1),), attempts(("b", 0, 0, 0.0, 1.0)))], "unknown stage"),
    ([RunRecord("r", (StageRecord("a", 1),), attempts(("a", 0, 0, 5.0, 1.0)))], "start <= end"),
    ([RunRecord("r", (StageRecord("a", 1),), attempts(("a", 0, 0, 0.0, 1.0, 0.0, True)))], "no successful attempt"),
    ([RunRecord("r", (StageRecord("a", 1, ("b",)), StageRecord("b", 1, ("a",))), ())], "cycle"),
    ([RunRecord("r", (StageRecord("a", 1, ("x",)),), ())], "unknown parents"),
])
def test_bad_history_is_a_clear_error(runs: list[RunRecord], message: str) -> None:
    with pytest.raises(FitError, match=message):
        fit_job_model(runs)


def test_one_to_one_needs_equal_task_counts() -> None:
    q = Quantiles.constant(1.0)
    with pytest.raises(FitError, match="equal task counts"):
        JobModel("j", (StageModel("a", 2, q, q), StageModel("b", 3, q, q, (0,), (Edge.ONE_TO_ONE,))))


def test_runs_json_round_trip_and_bad_files(tmp_path: Path) -> None:
    runs = [mr_run("r1", [11.0, 21.0, 31.0])]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs_to_dict("daily", runs)))
    job, back = load_runs_json(path)
    assert job == "daily" and back == runs
    assert runs_from_dict({"runs": [{"run_id": "x", "stages": [{"name": "a", "tasks": 1}],
                                     "attempts": [{"stage": "a", "task": 0, "start_s": 0, "end_s": 2}]}]})[0].attempts[0].end_s == 2
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(FitError, match="bad.json"):
        load_runs_json(tmp_path / "bad.json")
    (tmp_path / "missing.json").write_text(json.dumps({"runs": [{"run_id": "x"}]}))
    with pytest.raises(FitError, match="KeyError"):
        load_runs_json(tmp_path / "missing.json")


def test_model_json_round_trip() -> None:
    model = fit_job_model([mr_run("r1", [11.0, 21.0, 31.0])], min_stage_samples=1)
    back = JobModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert [(s.name, s.tasks, s.parents, s.edges, s.failure_probs, s.queue_s) for s in back.stages] == \
        [(s.name, s.tasks, s.parents, s.edges, s.failure_probs, s.queue_s) for s in model.stages]
    assert np.array_equal(back.stages[0].runtime.values, model.stages[0].runtime.values)


def test_quantiles_sample_and_mean() -> None:
    q = Quantiles(np.array([0.0, 10.0, 20.0]))
    assert q.sample(np.array([0.0, 0.25, 0.5, 1.0])).tolist() == [0.0, 5.0, 10.0, 20.0]
    assert q.mean == pytest.approx(10.0) and q.max == 20.0
    with pytest.raises(FitError):
        Quantiles(np.array([3.0, 1.0]))


def test_a_trace_job_is_one_prior_run(traces_dir: Path) -> None:
    spec = load_jobs("alibaba-2018-dags", traces_dir / "alibaba-2018-batch-dags" / "batch_task_selected_2119_DAG_jobs.csv.gz",
                     limit=400)[3]
    model = fit_job_model([run_from_jobspec(spec)], name=spec.job_id)
    assert [s.tasks for s in model.stages] == [s.tasks for s in spec.stages]
    assert [s.parents for s in model.stages] == [s.parents for s in spec.stages]
    assert model.stages[0].runtime.mean == pytest.approx(float(np.median(spec.stages[0].durations_s)), rel=0.5)


# --- progress indicator: totalworkWithQ (§4.2) ----------------------------------------------


def test_total_work_with_queue_weights_by_task_time_plus_queueing() -> None:
    q0 = Quantiles.constant(0.0)
    a = StageModel("a", 10, Quantiles.constant(10.0), q0)                       # 10 × 10 s, no queue: w = 100
    b = StageModel("b", 1, Quantiles.constant(100.0), q0, (0,), (Edge.BARRIER,), queue_s=50.0)  # w = 100 + 50
    ind = total_work_with_queue(JobModel("j", (a, b)))
    assert ind.weights.tolist() == pytest.approx([0.4, 0.6])
    assert ind.of(np.array([10, 0])) == pytest.approx(0.4)
    assert ind.of(np.array([5, 0])) == pytest.approx(0.2)
    assert ind.of(np.array([10, 1])) == pytest.approx(1.0)
    assert ind.of(np.array([99, 5])) == pytest.approx(1.0)  # clipped to the task counts


def test_failures_add_their_expected_partial_attempts_to_the_weight() -> None:
    q0 = Quantiles.constant(0.0)
    a = StageModel("a", 1, Quantiles.constant(10.0), q0, failure_probs=(0.5, 0.0))  # 1.5 attempts, the failed half-length
    b = StageModel("b", 1, Quantiles.constant(10.0), q0)
    assert total_work_with_queue(JobModel("j", (a, b))).weights.tolist() == pytest.approx([12.5 / 22.5, 10 / 22.5])


def test_progress_indicator_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError):
        ProgressIndicator(np.array([0.0, 0.0]), np.array([1, 1]))
    ind = ProgressIndicator(np.array([1.0]), np.array([2]))
    with pytest.raises(ValueError, match="per-stage"):
        ind.of(np.array([1, 1]))


def test_demand_counts_the_next_wave_behind_a_draining_stage() -> None:
    q = Quantiles.constant(1.0)
    model = JobModel("j", (StageModel("a", 4, q, q), StageModel("b", 10, q, q, (0,), (Edge.BARRIER,)), StageModel("c", 3, q, q)))
    # a: 2 done, 2 running (its last wave) -> b's 10 tasks count; c: 1 running, 2 ready
    assert demand(model, np.array([2, 0, 0]), np.array([2, 0, 1]), np.array([0, 0, 2])) == 2 + 1 + 2 + 10
    # a still has a task waiting for a container: b is more than one step away
    assert demand(model, np.array([1, 0, 0]), np.array([2, 0, 1]), np.array([1, 0, 2])) == 2 + 1 + 1 + 2
    # b started: its own counts, nothing upcoming
    assert demand(model, np.array([4, 3, 3]), np.array([0, 5, 0]), np.array([0, 2, 0])) == 7

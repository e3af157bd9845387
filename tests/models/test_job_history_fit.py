"""Algorithm 1 lines 3-4: job type thresholds, last run, DAG breadth-first demand (§4.1)."""

from __future__ import annotations

import math

import pytest

from harvester.models.job_history import (
    DemandError, JobRun, JobType, LengthThresholds, Stage, capacity_thresholds, classify_job, fit_job_history,
    max_concurrent_from_dag, required_containers,
)

FALLBACK = LengthThresholds(300.0, 3600.0, "defaults")


def run(job: str, app: str, start: float, seconds: float, peak: int = 10, work: float | None = None) -> JobRun:
    return JobRun(job, app, start, start + seconds, peak, work)


def test_quantile_thresholds_split_runs_into_thirds() -> None:
    runs = [run(f"j{i}", f"app_{i}", 0, d) for i, d in enumerate([10, 20, 30, 100, 200, 300, 1000, 2000, 3000])]
    model = fit_job_history(runs, short_quantile=1 / 3, long_quantile=2 / 3, min_runs=3)
    th = model.thresholds
    # linear interpolation over 9 sorted durations: q=1/3 sits at index 8/3, between 30 and 100
    assert th.short_below_s == pytest.approx(30 + (8 / 3 - 2) * 70)
    assert th.long_from_s == pytest.approx(300 + (16 / 3 - 5) * 700)
    assert th.classify(30) is JobType.SHORT and th.classify(250) is JobType.MEDIUM and th.classify(2500) is JobType.LONG
    assert sum(th.classify(r.duration_s) is JobType.SHORT for r in runs) == 3


def test_type_comes_from_the_last_run_and_unknown_jobs_are_medium() -> None:
    runs = [run("etl", "app_1", 0, 5000), run("etl", "app_2", 10000, 60), run("other", "app_3", 0, 1000)]
    model = fit_job_history(runs, min_runs=100)  # too few runs: no fitted thresholds
    assert model.thresholds is None
    t, why = classify_job(model, "etl", fallback=FALLBACK)
    assert t is JobType.SHORT and "app_2" in why and "defaults" in why
    t, why = classify_job(model, "never-ran", fallback=FALLBACK)
    assert t is JobType.MEDIUM and "no past run" in why
    assert classify_job(model, "etl", fallback=FALLBACK, last_run_s=7200)[0] is JobType.LONG


def test_dag_breadth_first_levels_sum_their_tasks() -> None:
    dag = [Stage("m1", 8), Stage("m2", 469), Stage("r3", 113, ("m1", "m2")), Stage("m4", 20),
           Stage("r5", 138, ("r3", "m4")), Stage("r6", 1, ("r5",))]
    n, why = max_concurrent_from_dag(dag)
    assert n == 8 + 469 + 20 and "level 0" in why
    assert max_concurrent_from_dag([Stage("a", 2), Stage("b", 50, ("a",)), Stage("c", 1, ("b",))])[0] == 50


@pytest.mark.parametrize(
    ("dag", "message"),
    [
        ([Stage("a", 1, ("b",)), Stage("b", 1, ("a",))], "cycle"),
        ([Stage("a", 1, ("zzz",))], "unknown parents"),
        ([Stage("a", 1), Stage("a", 2)], "twice"),
        ([Stage("", 1)], "needs a name"),
        ([Stage("a", -1)], "negative"),
    ],
)
def test_bad_dags_are_refused(dag: list[Stage], message: str) -> None:
    with pytest.raises(DemandError, match=message):
        max_concurrent_from_dag(dag)


def test_demand_override_then_dag_then_peak_of_past_runs() -> None:
    model = fit_job_history([run("etl", "app_1", 0, 10, peak=40), run("etl", "app_2", 20, 10, peak=70)])
    assert required_containers(model, "etl", override=5)[0] == 5
    assert required_containers(model, "etl", dag=[Stage("a", 9)])[0] == 9
    n, why = required_containers(model, "etl")
    assert n == 70 and "peak of past runs" in why
    with pytest.raises(DemandError, match="no past run"):
        required_containers(model, "new-job")
    with pytest.raises(DemandError, match="no tasks"):
        required_containers(model, "etl", dag=[Stage("a", 0)])


def test_capacity_thresholds_give_long_jobs_the_constant_share_of_work() -> None:
    # work = duration × peak(1): 100, 200, 300, 400 → total 1000
    runs = [run(f"j{d}", f"a{d}", 0, d, peak=1) for d in (100, 200, 300, 400)]
    th = capacity_thresholds(runs, short_share=0.1, long_share=0.4)
    assert th.long_from_s == 400 and th.short_below_s == 200  # longest run alone = 40%; shortest = 10%
    assert th.classify(100) is JobType.SHORT and th.classify(300) is JobType.MEDIUM and th.classify(400) is JobType.LONG
    none_long = capacity_thresholds(runs, short_share=0.0, long_share=0.1)
    assert math.isinf(none_long.long_from_s)
    assert capacity_thresholds([], short_share=0.1, long_share=0.1) is None
    with pytest.raises(ValueError):
        capacity_thresholds(runs, short_share=0.7, long_share=0.7)


def test_fit_thresholds_can_be_supplied() -> None:
    th = LengthThresholds(1, 2, "given")
    assert fit_job_history([], thresholds=th).thresholds is th
    with pytest.raises(ValueError):
        fit_job_history([], short_quantile=0.7, long_quantile=0.3)

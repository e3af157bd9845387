"""Recurring identities of trace jobs (harvester/sim/traces/identity.py) and what each loader keeps."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from harvester.sim.morpheus.workload import load_recurring
from harvester.sim.scenario import Scenario
from harvester.sim.setup import build_workload
from harvester.sim.traces import load_jobs
from harvester.sim.traces.identity import Recurrence, app_name, keyed, magnitude, recurrence, signature
from harvester.sim.traces.recurrence import evidence, main as recurrence_main
from harvester.sim.workload import build_job

A18 = "alibaba-2018-batch-dags/batch_task_selected_2119_DAG_jobs.csv.gz"
A17 = "alibaba-2017-batch-task/batch_task.csv.gz"
SWIM_PATHS = "swim-facebook/FB-2010_samples_24_times_1hr_withInputPaths_0.tsv.gz"


@pytest.mark.parametrize("name,expected", [
    ("sales-report-2026-11-24", "sales-report"),
    ("sales-report-20261124", "sales-report"),
    ("etl_1795504820", "etl"),                      # epoch seconds
    ("etl.1795504820123", "etl"),                   # epoch milliseconds
    ("hourly-2026-11-24T07:00", "hourly"),
    ("job12", "job12"),                             # a short number is part of the name
    ("report-v2", "report-v2"),
    ("2026-11-24", "2026-11-24"),                   # nothing left: the name is its own job
])
def test_app_name_strips_dates_and_timestamps(name: str, expected: str) -> None:
    assert app_name(name) == expected


@pytest.mark.parametrize("count,expected", [(0, 0), (0.5, 0), (1, 0), (9, 0), (9.99, 0), (10, 1), (99, 1), (100, 2),
                                            (12846, 4)])
def test_magnitude(count: float, expected: int) -> None:
    assert magnitude(count) == expected


@pytest.mark.parametrize("key,expected", [("inputPath21", "swim-inputPath21"), (" inputPath3 ", "swim-inputPath3"),
                                          ("", None), ("  ", None), (float("nan"), None), (None, None)])
def test_keyed(key: object, expected: str | None) -> None:
    assert keyed("swim-", key) == expected


def test_signature_is_a_stable_digest_of_the_multiset() -> None:
    a = signature("p-", ["M1 x0", "R2_1 x2"])
    assert a == signature("p-", ["R2_1 x2", "M1 x0"]) and a.startswith("p-") and len(a) == 2 + 12
    assert a == "p-" + hashlib.sha1(b"M1 x0\nR2_1 x2").hexdigest()[:12]  # stable across processes
    assert a != signature("p-", ["M1 x0", "R2_1 x1"]) != signature("p-", ["M1 x0"])
    assert signature("p-", ["M1 x0", "M1 x0"]) != signature("p-", ["M1 x0"])


@pytest.mark.parametrize("names,expected,share,repeat", [
    ([], Recurrence(0, 0, 0, 0), 0.0, 0.0),
    (["a", "b", "c"], Recurrence(3, 3, 0, 0), 0.0, 0.0),
    (["a", "a", "b", "a"], Recurrence(4, 2, 1, 3), 0.75, 0.5),
    (["a", "b", "a", "b"], Recurrence(4, 2, 2, 4), 1.0, 0.5),
])
def test_recurrence(names: list[str], expected: Recurrence, share: float, repeat: float) -> None:
    r = recurrence(names)
    assert (r, r.share, r.repeat_share) == (expected, share, repeat)


def test_alibaba_2018_recurring_dags_share_a_name(traces_dir: Path) -> None:
    jobs = load_jobs("alibaba-2018-dags", traces_dir / A18)
    by_id = {j.meta["trace_job"]: j for j in jobs}
    assert by_id["j_2"].name == "j_2" and len(by_id["j_2"].stages) == 2  # small DAG: its own id
    big = [j for j in jobs if len(j.stages) >= 10]
    assert all(j.name.startswith("alibaba18-dag-") for j in big)
    assert all(j.name == j.meta["trace_job"] for j in jobs if len(j.stages) < 10)
    # the daily jobs found independently (exact DAG + time of day, morpheus/workload.py)
    daily = load_recurring(traces_dir)
    names = [{by_id[r.meta["trace_job"]].name for r in job.runs.values()} for job in daily]
    assert [len(n) for n in names] == [1, 1, 1, 1, 2, 2, 1, 1, 1, 2]  # 3 split where a count crossed 10^k
    assert len(set().union(*names)) == sum(len(n) for n in names), "no two daily jobs share a name"
    j = by_id["j_2877605"]
    other = by_id[next(r.meta["trace_job"] for r in daily[5].runs.values() if by_id[r.meta["trace_job"]].name != j.name)]
    assert sorted(s.name for s in j.stages) == sorted(s.name for s in other.stages)
    assert sorted(magnitude(s.tasks) for s in j.stages) != sorted(magnitude(s.tasks) for s in other.stages)
    r = recurrence(j.name for j in jobs)
    assert (r.runs, r.names, r.recurring_names) == (2065, 1683, 166)  # the loader docstring's numbers


def test_alibaba_2018_min_stages_is_the_rule(traces_dir: Path) -> None:
    every = load_jobs("alibaba-2018-dags", traces_dir / A18, recurring_min_stages=1)
    by_id = {j.meta["trace_job"]: j for j in every}
    assert by_id["j_2"].name.startswith("alibaba18-dag-")
    shapes = Counter(j.name for j in every if [(s.name, magnitude(s.tasks)) for s in j.stages] == [("M1", 0), ("R2_1", 0)])
    assert list(shapes.values()) == [120], "one generic signature: why small DAGs keep their id"


def test_alibaba_2017_same_requests_share_a_name(traces_dir: Path) -> None:
    jobs = load_jobs("alibaba-2017-batch", traces_dir / A17)
    by_id = {j.meta["trace_job"]: j for j in jobs}
    a = {by_id[i].name for i in ("2312", "3122", "3129", "3147")}   # 23 tasks each, same requests
    b = {by_id[i].name for i in ("2314", "3120", "3127", "3149")}   # 15 tasks each
    assert len(a) == 1 and len(b) == 1 and a != b and next(iter(a)).startswith("alibaba17-req-")
    single = [j for j in jobs if len(j.stages) == 1]
    assert single and all(j.name == f"alibaba17-{j.meta['trace_job']}" for j in single)
    r = recurrence(j.name for j in jobs)
    assert (r.runs, r.names, r.recurring_names, r.recurring_runs) == (10776, 6208, 494, 5062)


def test_swim_input_paths_are_the_identity(traces_dir: Path) -> None:
    jobs = load_jobs("swim", traces_dir / SWIM_PATHS, max_tasks_per_stage=100)
    hot = [j for j in jobs if j.name == "swim-inputPath21"]
    assert len(hot) == 721 and len({j.job_id for j in hot}) == 721
    assert recurrence(j.name for j in jobs) == Recurrence(25428, 17158, 1375, 9645)
    plain = load_jobs("swim", traces_dir / "swim-facebook/FB-2009_samples_24_times_1hr_0.tsv.gz", limit=2000)
    assert recurrence(j.name for j in plain).recurring_names == 0, "jobN is a row number, not an identity"


def test_hawk_eagle_jobs_stay_unique(traces_dir: Path) -> None:
    jobs = load_jobs("hawk-eagle", traces_dir / "hawk-eagle-shortjob-subtraces/YH1_sub.tr.gz", limit=500)
    assert recurrence(j.name for j in jobs) == Recurrence(500, 500, 0, 0)


def test_jobs_csv_normalizes_job_names(tmp_path: Path) -> None:
    f = tmp_path / "j.csv"
    f.write_text("job_id,submit_s,stage,tasks,duration_s,job_name\n"
                 "a1,0,s,1,5,etl-2026-11-24\n"
                 "a2,86400,s,1,5,etl-2026-11-25\n"
                 "b1,10,s,1,5,report-v2\n"
                 "c-2026-11-24,20,s,1,5,\n", encoding="utf-8")
    jobs = {j.job_id: j.name for j in load_jobs("jobs-csv", f)}
    assert jobs == {"a1": "etl", "a2": "etl", "b1": "report-v2", "c-2026-11-24": "c-2026-11-24"}


def test_evidence_measures_consecutive_runs() -> None:
    def job(i: int, name: str, t: float, dur: float):  # type: ignore[no-untyped-def]
        return build_job(f"x{i}", t, [("s", np.full(2, dur), 1, 512, [])], name=name)

    jobs = [job(0, "a", 0, 10), job(1, "a", 86400 + 600, 11), job(2, "a", 87000 + 90120, 500),
            job(3, "b", 0, 500), job(4, "c", 3600, 100000), job(5, "d", 10, 100001)]
    e = evidence(jobs)
    assert (e.pairs, e.same_third) == (2, 0.5)  # a: 10 s -> 11 s same third; 11 s -> 500 s not
    # gaps 24 h 10 min (a whole day, not a whole hour) and 25 h 2 min (a whole hour, not a day)
    assert (e.day_gaps, e.whole_days, e.hour_gaps, e.whole_hours) == (2, 0.5, 2, 0.5)


def test_recurrence_command(traces_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert recurrence_main(["hawk-eagle", str(traces_dir / "hawk-eagle-shortjob-subtraces/YH1_sub.tr.gz"),
                            "--limit", "50"]) == 0
    assert "recurrence 0% of runs (0 of 50 names" in capsys.readouterr().out
    assert recurrence_main(["swim", str(traces_dir / "missing.tsv")]) == 2
    assert "no such trace file" in capsys.readouterr().err


def test_run_summary_reports_a_trace_workloads_recurrence(tmp_path: Path) -> None:
    f = tmp_path / "j.csv"
    f.write_text("job_id,submit_s,stage,tasks,duration_s,job_name\n"
                 + "".join(f"r{i},{i * 60},s,1,5,etl-2026-11-2{i}\n" for i in range(3))
                 + "".join(f"u{i},{i * 60 + 30},s,1,5,\n" for i in range(2)), encoding="utf-8")
    sc = Scenario.model_validate({"name": "t", "duration_s": 3600, "workload": {
        "source": "trace", "target_basis": "cluster", "trace": {"format": "jobs-csv", "path": str(f)}}})
    sources: dict[str, str] = {}
    jobs = build_workload(sc, None, np.random.default_rng(0), None, None, sources, 1.0)  # type: ignore[arg-type]
    assert len(jobs) == 5
    assert sources["workload"] == ("trace jobs-csv:j.csv (5 jobs in the window; recurrence 60% of runs (1 of 3 names "
                                   "run twice or more; 40% of runs follow an earlier run of their name))")

"""Every staged trace format loads (bounded rows), and the generic formats round-trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harvester.sim.formats import JOB_FORMAT_NAMES, UTILIZATION_FORMAT_NAMES
from harvester.sim.traces import (
    JOB_FORMATS,
    UTILIZATION_FORMATS,
    TraceError,
    load_alibaba_machine_meta,
    load_alibaba_server_events,
    load_backblaze,
    load_jobs,
    load_utilization,
)
from harvester.sim.traces.utilization import resample


def test_format_names_match_the_registries() -> None:
    assert tuple(UTILIZATION_FORMATS) == UTILIZATION_FORMAT_NAMES
    assert tuple(JOB_FORMATS) == JOB_FORMAT_NAMES


def test_bitbrains(traces_dir: Path) -> None:
    s = load_utilization("bitbrains", traces_dir / "bitbrains-rnd-7d/bitbrains_rnd_2013-08_7days_500vms.csv.gz", limit=6000)
    assert len(s) == 3 and s[0].name == "bitbrains-vm1"
    assert s[0].origin_s == 1375308176.0 and s[0].times_s[0] == 0.0
    assert np.median(np.diff(s[0].times_s)) == 300.0
    assert 0.12 < s[0].util[0] < 0.13, "12.77 % of provisioned CPU"
    assert all(0.0 <= x.util.min() and x.util.max() <= 1.0 for x in s)
    grid = resample(s[0], 120.0)
    assert grid.shape[0] == int(s[0].span_s // 120) + 1


def test_alibaba_machine_usage(traces_dir: Path) -> None:
    s = load_utilization("alibaba-machines", traces_dir / "alibaba-2018-machines/machine_usage_first100000rows.csv.gz",
                         limit=20000)
    assert [x.name for x in s][:2] == ["alibaba-m_1932", "alibaba-m_1933"]
    assert all(np.all(np.diff(x.times_s) > 0) for x in s)
    assert 0.3 < float(np.mean(s[0].util)) < 0.5


def test_alibaba_machine_meta_and_server_events(traces_dir: Path) -> None:
    meta = load_alibaba_machine_meta(traces_dir / "alibaba-2018-machines/machine_meta.csv.gz")
    assert len(meta) == 4034 and meta[0].machine_id == "m_1" and meta[0].cpus == 96
    assert len({m.failure_domain_1 for m in meta}) == 292
    events = load_alibaba_server_events(traces_dir / "alibaba-2017-server-event/server_event.csv.gz")
    kinds = [e.kind for e in events]
    assert len(events) == 1352 and kinds.count("add") == 1313 and kinds.count("softerror") == 39


def test_backblaze(traces_dir: Path) -> None:
    stats = load_backblaze(traces_dir / "backblaze-2013/drive_stats_2013-04-10_to_2013-05-19_10cols.csv.gz", limit=100000)
    assert stats.drive_days == 100000 and stats.drives > 1000 and stats.days >= 1
    assert 0.0 <= stats.annualized_failure_rate < 1.0


def test_alibaba_2018_dags(traces_dir: Path) -> None:
    jobs = load_jobs("alibaba-2018-dags", traces_dir / "alibaba-2018-batch-dags/batch_task_selected_2119_DAG_jobs.csv.gz",
                     limit=3000)
    assert jobs and jobs[0].submit_s == 0.0
    j2 = next(j for j in jobs if j.name == "j_2")  # rows: M1 (1 instance, 7 s), R2_1 depends on M1 (10 s)
    assert [(s.name, s.tasks, list(s.durations_s), s.parents) for s in j2.stages] == [("M1", 1, [7.0], ()), ("R2_1", 1, [10.0], (0,))]
    assert all(s.vcores >= 1 for j in jobs for s in j.stages)
    wide = load_jobs("alibaba-2018-dags", traces_dir / "alibaba-2018-batch-dags/batch_task_selected_2119_DAG_jobs.csv.gz",
                     limit=3000, max_tasks_per_stage=10)
    assert max(s.tasks for j in wide for s in j.stages) <= 10
    assert sum(j.task_seconds() for j in wide) == pytest.approx(sum(j.task_seconds() for j in jobs))


def test_alibaba_2017_batch(traces_dir: Path) -> None:
    jobs = load_jobs("alibaba-2017-batch", traces_dir / "alibaba-2017-batch-task/batch_task.csv.gz", limit=2000,
                     max_tasks_per_stage=50)
    assert len(jobs) > 50 and all(s.parents == () for j in jobs for s in j.stages)
    assert min(j.submit_s for j in jobs) == 0.0


@pytest.mark.parametrize("name", ["FB-2009_samples_24_times_1hr_0.tsv.gz", "FB-2009_samples_24_times_1hr_1.tsv.gz",
                                  "FB-2010_samples_24_times_1hr_0.tsv.gz",
                                  "FB-2010_samples_24_times_1hr_withInputPaths_0.tsv.gz"])
def test_swim(traces_dir: Path, name: str) -> None:
    jobs = load_jobs("swim", traces_dir / "swim-facebook" / name, limit=500, max_tasks_per_stage=100)
    assert len(jobs) == 500 and jobs[0].stages[0].name == "map"
    assert all(len(j.stages) in (1, 2) for j in jobs)
    if "withInputPaths" in name:
        assert len({j.name for j in jobs}) < len(jobs), "jobs re-reading one input path share a name"


@pytest.mark.parametrize("name,first_tasks", [("YH1_sub.tr.gz", 34), ("YH2_sub.tr.gz", 1651)])
def test_hawk_eagle(traces_dir: Path, name: str, first_tasks: int) -> None:
    jobs = load_jobs("hawk-eagle", traces_dir / "hawk-eagle-shortjob-subtraces" / name, limit=50)
    assert len(jobs) == 50 and jobs[0].tasks == first_tasks and jobs[0].submit_s == 0.0


def test_generic_utilization_csv(tmp_path: Path) -> None:
    f = tmp_path / "u.csv"
    f.write_text("timestamp,server,cpu_util,tenant\n0,a,0.5,web\n120,a,0.7,web\n0,b,0.1,\n240,b,0.3,\n", encoding="utf-8")
    s = load_utilization("utilization-csv", f)
    assert [(x.name, x.tenant, list(x.util.round(2))) for x in s] == [("a", "web", [0.5, 0.7]), ("b", None, [0.1, 0.3])]
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,server,cpu_util\n0,a,55\n", encoding="utf-8")
    with pytest.raises(TraceError, match="cpu_util_percent"):
        load_utilization("utilization-csv", bad)


def test_generic_jobs_csv(tmp_path: Path) -> None:
    f = tmp_path / "j.csv"
    f.write_text("job_id,submit_s,stage,tasks,duration_s,parents,vcores,job_name,period_s\n"
                 "j1,100,reduce,2,30,map,2,daily,86400\n"
                 "j1,100,map,3,60,,1,daily,86400\n"
                 "j2,160,only,1,5,,,,\n", encoding="utf-8")
    jobs = load_jobs("jobs-csv", f)
    j1, j2 = jobs
    assert [s.name for s in j1.stages] == ["map", "reduce"] and j1.stages[1].parents == (0,)
    assert (j1.name, j1.period_s, j1.submit_s, j1.stages[1].vcores) == ("daily", 86400.0, 0.0, 2)
    assert (j2.submit_s, j2.tasks, j2.name, j2.period_s) == (60.0, 1, "j2", None)
    f.write_text("job_id,submit_s,stage,tasks,duration_s,parents\nj1,0,a,1,5,zz\n", encoding="utf-8")
    with pytest.raises(TraceError, match="unknown parent"):
        load_jobs("jobs-csv", f)


def test_unknown_format_and_missing_file_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="unknown job format"):
        load_jobs("nope", tmp_path / "x")
    with pytest.raises(TraceError, match="no such trace file"):
        load_utilization("bitbrains", tmp_path / "missing.csv")
    with pytest.raises(TraceError, match="unexpected keyword"):
        load_jobs("swim", tmp_path / "x", bogus=1)

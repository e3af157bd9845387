"""A finished run read twice keeps what its first sighting knew (issue 28's validation found it:
the jobs loop re-reads a minute of overlap, telemetry/rm_jobs.py pops a run's peak, skyline and
launch when it first reports it, so the second report carried peak 0 and replaced the row: 20 %
of an emulated day's runs (a 300-s poll), and every run with a 60-s poll, were stored with peak 0,
and whatif replayed each as ONE container of the whole skyline — 17 vCores, bigger than a node)."""

from __future__ import annotations

from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.job_history import JobRun, RunUsage


def test_a_second_report_without_the_peak_does_not_erase_it() -> None:
    store = SqliteHistoryStore(":memory:")
    usage = RunUsage(60.0, 1000.0, (2048, 4096), (2, 4), 0.0, 60.0)
    first = JobRun("demo-ds", "application_1_0008", 990.0, 1200.0, 5, 800.0, launched_at=1000.0,
                   final_status="SUCCEEDED", queue="default", usage=usage)
    again = JobRun("demo-ds", "application_1_0008", 990.0, 1200.0, 0, None, launched_at=None,
                   final_status="SUCCEEDED", queue="default")
    store.append_job_runs([first])
    store.append_job_runs([again])
    (row,) = store.job_runs(since=0.0, with_usage=True)
    assert row.peak_containers == 5 and row.container_seconds == 800.0 and row.launched_at == 1000.0
    assert row.usage == usage
    bigger = JobRun("demo-ds", "application_1_0008", 990.0, 1200.0, 7, 900.0, final_status="FAILED")
    store.append_job_runs([bigger])  # what a later report does know still wins
    (row,) = store.job_runs(since=0.0)
    assert (row.peak_containers, row.container_seconds, row.final_status) == (7, 900.0, "FAILED")
    store.close()

"""Job runs with their polled skylines (telemetry/rm_jobs.py; Morpheus §5's telemetry history),
read from the emulated RM over HTTP, and the recurring-name rule (models/job_names.py)."""

from __future__ import annotations

import pytest

from harvester.config_morpheus import DEFAULT_NAME_RULES
from harvester.domain import Resources
from harvester.models.job_history import RunUsage
from harvester.models.job_names import NameNormalizer
from harvester.telemetry.rm_jobs import RMJobRuns

from emu_cluster import EmuCluster

RULE = NameNormalizer((r.pattern, r.replace) for r in DEFAULT_NAME_RULES)


@pytest.mark.parametrize(("name", "job"), [
    ("sales-report-2026-11-24", "sales-report"),
    ("sales-report-20261124T0710", "sales-report"),
    ("sales_report_2026-11-24T07:10:00", "sales_report"),
    ("etl.1795504820", "etl"),
    ("etl-1795504820123", "etl"),
    ("nightly etl", "nightly etl"),
    ("20261124", "20261124"),          # nothing left: the name is its own job
    ("q12-v2", "q12-v2"),              # short numbers are part of the name
])
def test_the_default_rule(name: str, job: str) -> None:
    assert RULE(name) == job


def test_a_runs_skyline_is_the_allocation_per_minute_from_its_launch() -> None:
    with EmuCluster() as c:
        jobs = RMJobRuns(c.client, RULE, step_s=60.0)
        app = c.work.distributed_shell(3, Resources(1024, 1), duration_s=150.0, name="etl-2026-11-24")
        t0 = c.clock.now()
        done = []
        while not done:                                  # poll every 20 s, as the jobs loop does with Morpheus on
            c.advance(20)
            done = jobs.poll(t0 - 60)
        (run,) = done
        got = c.client.get_app(app.app_id)
        assert run.job_name == "etl" and run.app_id == app.app_id and run.final_status == got.final_status
        assert run.launched_at == got.launch_time_ms / 1000 and run.started_at == got.started_time_ms / 1000
        u = run.usage
        assert isinstance(u, RunUsage) and u.step_s == 60.0 and u.origin == run.launched_at
        assert max(u.memory_mb) == 4 * 1024 and max(u.vcores) == 4, "AM (512 MB normalized to 1024) + 3 workers"
        assert u.memory_mb[0] > 0 and u.memory_mb[-1] <= max(u.memory_mb)
        assert u.coverage(run.finished_at) > 0.8, "polled all along"


def test_a_step_between_polls_holds_what_the_earlier_poll_saw() -> None:
    from harvester.telemetry.rm_jobs import _Usage

    u = _Usage(origin=0.0)
    u.add(10.0, 1000, 1, 60.0)
    u.add(50.0, 3000, 3, 60.0)
    u.add(200.0, 2000, 2, 60.0)    # nothing polled in steps 1 and 2: they hold 3000 (the last seen)
    u.add(200.0, 9000, 9, 60.0)    # the same instant again is ignored
    frozen = u.freeze(60.0)
    assert frozen is not None and frozen.memory_mb == (3000, 3000, 3000, 2000) and (frozen.first_s, frozen.last_s) == (10.0, 200.0)
    partial = RunUsage(60.0, 0.0, (1000,) * 10, (1,) * 10, 540.0, 600.0)
    assert partial.coverage(600.0) <= 0.2, "first polled 9 minutes in: a restart mid-run"

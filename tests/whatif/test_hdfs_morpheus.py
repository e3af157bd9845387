"""HDFS-H and Morpheus comparisons on recorded inputs (harvester/whatif/hdfs.py, morpheus.py)."""

from __future__ import annotations

import numpy as np

from harvester.models.reimage_detection import ReimageEvent
from harvester.whatif import hdfs, morpheus
from harvester.whatif.inputs import build_inputs
from harvester.whatif.recorded import read_recorded
from tests.whatif.builders import DAY, START, build


def test_hdfs_grid_vs_stock_on_recorded_reimages() -> None:
    b = build(nodes_per_tenant=4, tenants=3, jobs_per_hour=1.0)
    hosts = [n.rsplit(":", 1)[0] for n in b.ids]
    rng = np.random.default_rng(5)
    events = [ReimageEvent(START + float(rng.uniform(0, 2 * DAY)), hosts[int(i)]) for i in rng.integers(0, 4, 12)]
    events += [ReimageEvent(START + 1.5 * DAY, h) for h in hosts[4:6]]
    b.store.append_hdfs_reimages(sorted(events, key=lambda e: (e.time, e.hostname)))
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    given, _ = build_inputs(rec)
    out = hdfs.compare(rec, given)
    assert out["measured"] and out["datanodes"] == 12
    assert out["reimages_past"] + out["reimages_replay"] == len(events)
    for k in ("grid", "stock"):
        assert out[k]["blocks_written"] > 0 and out[k]["blocks_lost"] >= 0


def test_hdfs_without_reimages_is_not_measured() -> None:
    b = build(jobs_per_hour=1.0)
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    given, _ = build_inputs(rec)
    assert hdfs.compare(rec, given)["measured"] is False


def test_recurring_jobs_from_recorded_runs() -> None:
    b = build(days=3.0, jobs_per_hour=2.0)
    rec = read_recorded(b.store, b.harvesting, days=3.0)
    jobs = morpheus.recurring_jobs(rec.jobs, {})
    names = {j.name for j, _ in jobs}
    assert names <= {"daily-0", "daily-1", "daily-2"} and names
    for j, origin in jobs:
        assert len(j.runs) <= morpheus.MAX_PERIODS
        for k, spec in j.runs.items():
            assert k * j.period_s <= spec.submit_s < (k + 1) * j.period_s  # period k's run, in the job's frame


def test_morpheus_against_the_stores_contracts() -> None:
    import dataclasses

    from harvester.models.job_history import JobRun, RunUsage
    from harvester.models.slo_contract import Terms, new_contract

    b = build(days=1.5, jobs_per_hour=0.5)
    runs = []
    for h in range(30):
        submit = START + h * 3600.0 + 300.0
        usage = RunUsage(60.0, submit, tuple([4096] * 10), tuple([4] * 10), 0.0, 540.0)
        runs.append(JobRun("hourly", f"application_2_{h:04d}", submit, submit + 600.0, 4, 2400.0, submit, "SUCCEEDED",
                           "default", "rm", usage))
    b.store.append_job_runs(runs)
    terms = Terms(3600.0, 0.0, 1800.0, START, 60.0, tuple([4096] * 30), tuple([4] * 30))
    b.store.save_slo_contract(dataclasses.replace(new_contract("hourly", START), accepted=terms))
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    out = morpheus.compare(rec)
    assert out["measured"] and "contracts" in out["slo_source"]
    assert out["static"]["runs"] == out["morpheus"]["runs"] == morpheus.MAX_PERIODS
    assert out["static"]["slo_misses"] == 0  # 10-minute runs, due 30 minutes after each hour
    assert out["morpheus"]["footprint_peak_vcores"] > 0

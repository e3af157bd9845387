"""Scenario from the store (harvester/whatif/recorded.py, inputs.py): nodes, loads and jobs round-trip."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.whatif.inputs import build_inputs, fill_gaps, job_of, periods, scenario_data, with_drain
from harvester.whatif.recorded import WhatifInputError, read_recorded
from harvester.sim.scenario import parse_scenario
from tests.whatif.builders import DAY, STEP, build


def test_nodes_tenants_and_sizes_round_trip() -> None:
    b = build()
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    assert [n.node_id for n in rec.nodes] == sorted(b.ids)
    assert {n.tenant for n in rec.nodes} == {"t0", "t1"}
    assert all(n.total.vcores == 16 and n.total.memory_mb == 32768 and n.physical_cores == 8.0 for n in rec.nodes)
    assert rec.replay_slots == int(DAY / STEP)
    assert rec.history_slots == int(DAY / STEP)


def test_primary_load_is_the_recorded_vectors() -> None:
    b = build()
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    order = [b.ids.index(n.node_id) for n in rec.nodes]
    np.testing.assert_allclose(rec.util, b.util[:, order].T, atol=1e-6)
    assert rec.from_vectors.all() and not rec.from_slots.any()
    given, cov = build_inputs(rec)
    h = given.load.history_steps
    np.testing.assert_allclose(given.load.util_at(5), b.util[h + 5, order], atol=1e-6)
    np.testing.assert_allclose(given.load.util_at(-3), b.util[h - 3, order], atol=1e-6)
    assert cov.from_vectors == rec.util.size and cov.gap_slots == 0


def test_tenant_slots_fill_where_no_vectors() -> None:
    b = build(vector_days=0.5)
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    k = 10  # an early slot: only the tenant's average server is known
    assert not rec.from_vectors[:, k].any() and rec.from_slots[:, k].all()
    t0 = [i for i, n in enumerate(rec.nodes) if n.tenant == "t0"]
    cols = [b.ids.index(rec.nodes[i].node_id) for i in t0]
    np.testing.assert_allclose(rec.util[t0, k], b.util[k, cols].mean(), atol=1e-6)


def test_jobs_keep_arrivals_work_and_recurring_identity() -> None:
    b = build()
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    given, cov = build_inputs(rec)
    want = [r for r in b.jobs if r.started_at >= rec.replay_start]
    assert cov.jobs == len(want) == len(given.jobs)
    for spec, run in zip(given.jobs, want):
        assert spec.submit_s == pytest.approx(run.started_at - rec.replay_start)
        assert spec.name == run.job_name
        assert spec.task_seconds() == pytest.approx(run.container_seconds, rel=0.07)  # skyline steps of 60 s
        assert spec.stages[0].tasks == run.peak_containers
    assert {j.name for j in given.jobs if j.recurring} <= {"daily-0", "daily-1", "daily-2"}
    assert any(j.recurring for j in given.jobs)


def test_job_without_skyline_keeps_its_work() -> None:
    b = build()
    run = b.jobs[0]
    from dataclasses import replace

    bare = replace(run, usage=None)
    spec = job_of(bare, origin=run.started_at, period_s=None)
    assert spec.task_seconds() == pytest.approx(run.container_seconds)
    assert spec.submit_s == 0.0 and not spec.recurring


def test_periods_are_median_gaps() -> None:
    b = build()
    per = periods(b.jobs)
    assert set(per) == {"daily-0", "daily-1", "daily-2"}


def test_fill_gaps_and_drain() -> None:
    u = np.array([[np.nan, 0.2, np.nan, 0.4], [np.nan] * 4, [0.1, np.nan, np.nan, np.nan]], dtype=np.float32)
    out, gaps, empty = fill_gaps(u, np.array([0, 0, 1]))
    np.testing.assert_allclose(out[0], [0.2, 0.2, 0.2, 0.4])
    np.testing.assert_allclose(out[1], out[0])            # no data: its tenant's mean
    np.testing.assert_allclose(out[2], [0.1] * 4)
    assert gaps == 9 and empty == 1
    rows = np.arange(2 * 720, dtype=np.float32)[None, :]
    d = with_drain(rows, 5, STEP)
    np.testing.assert_allclose(d[0, -5:], rows[0, 720:725])  # the last day again, same times of day


def test_scenario_validates_and_errors() -> None:
    b = build()
    rec = read_recorded(b.store, b.harvesting, days=1.0)
    given, cov = build_inputs(rec)
    sc = parse_scenario(scenario_data(given, rec, cov.drain_s, {}, period_s=STEP))
    assert sc.cluster.servers == 6 and sc.tenant_count == 2 and sc.start_time == rec.replay_start
    short = build(days=0.02, job_seconds=60.0)
    with pytest.raises(WhatifInputError, match="at least one hour"):
        read_recorded(short.store, short.harvesting, days=1.0)
    from harvester.history.sqlite import SqliteHistoryStore

    with pytest.raises(WhatifInputError, match="no primary load"):
        read_recorded(SqliteHistoryStore(":memory:"), b.harvesting, days=1.0)


def test_nodes_without_a_tenant_are_left_out_and_said() -> None:
    b = build()
    h = b.harvesting.model_copy(update={"tenants": b.harvesting.tenants[:1], "unmatched_nodes": "ignore"})
    rec = read_recorded(b.store, h, days=1.0)
    assert {n.tenant for n in rec.nodes} == {"t0"} and len(rec.nodes) == 3
    assert rec.notes and rec.notes[0].startswith("3 NodeManagers left out")
    _, cov = build_inputs(rec)
    assert cov.notes == tuple(rec.notes)

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest
from prometheus_client import CollectorRegistry

from harvester.clock import RealClock, SimClock
from harvester.domain import DecisionRecord, NodeSample, Resources
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.record_telemetry import RecordTelemetry
from harvester.loop.retention import PruneHistory
from harvester.loop.runner import ControlLoop, TickResult
from harvester.models.job_history import JobRun
from harvester.models.tenant_slots import TenantSlot
from harvester.observability.metrics import Metrics
from harvester.telemetry.memory import InMemoryTelemetrySource
from harvester.telemetry.source import TelemetryError


def metric(m: Metrics, name: str, **labels: str) -> float | None:
    return m.registry.get_sample_value(name, labels)


def test_run_once_records_success_and_failure_as_data() -> None:
    clock, metrics = SimClock(100.0), Metrics(CollectorRegistry())
    outcomes = iter([TickResult({"n": 1}), RuntimeError("rm said no")])

    def tick(now: float) -> TickResult:
        o = next(outcomes)
        if isinstance(o, Exception):
            raise o
        return o

    loop = ControlLoop("t", 10, tick, clock, metrics)
    assert loop.run_once() == TickResult({"n": 1})
    assert loop.healthy(clock.now()) == (True, "ok")
    clock.advance(10)
    assert loop.run_once() is None
    st = loop.status()
    assert st["ticks"] == 2 and st["failures"] == 1 and st["last_error"] == "RuntimeError: rm said no"
    assert st["last_summary"] == {"n": 1}, "the last good summary is kept"
    assert metric(metrics, "harvester_loop_ticks_total", loop="t", outcome="error") == 1
    assert metric(metrics, "harvester_loop_last_tick_timestamp_seconds", loop="t") == 100.0
    ok, why = loop.healthy(clock.now())
    assert not ok and "rm said no" in why


def test_health_goes_stale_after_three_intervals() -> None:
    clock = SimClock(0.0)
    loop = ControlLoop("t", 5, lambda now: TickResult(), clock, Metrics(CollectorRegistry()))
    assert loop.healthy(0)[0] is False
    loop.run_once()
    clock.advance(15)
    assert loop.healthy(clock.now())[0] is True
    clock.advance(1)
    assert loop.healthy(clock.now())[0] is False


def test_thread_ticks_on_interval_and_stops_promptly() -> None:
    ticked = threading.Event()
    count = []

    def tick(now: float) -> TickResult:
        count.append(now)
        if len(count) >= 3:
            ticked.set()
        return TickResult()

    loop = ControlLoop("fast", 0.02, tick, RealClock(), Metrics(CollectorRegistry()))
    loop.start()
    assert ticked.wait(2)
    started = time.monotonic()
    assert loop.stop(timeout_s=1)
    assert time.monotonic() - started < 0.5
    assert loop.status()["state"] == "stopped"
    with pytest.raises(RuntimeError):
        loop.start()


def test_interval_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ControlLoop("t", 0, lambda now: TickResult(), SimClock(), Metrics(CollectorRegistry()))


def _node(nid: str) -> NodeSample:
    return NodeSample(nid, 0.0, "RUNNING", "/r", nid, Resources(8192, 8), Resources(0, 0), 0, 0.5, 0.0, 100.0, 0.0, 2.0)


def test_record_telemetry_stores_samples_and_tracks_age() -> None:
    clock, metrics, store = SimClock(50.0), Metrics(CollectorRegistry()), SqliteHistoryStore(":memory:")
    source = InMemoryTelemetrySource(nodes=[_node("a:1"), _node("b:1")])
    rec = RecordTelemetry(source, store, metrics)
    assert rec.tick(clock.now()).summary["rows_written"] == 2
    assert [s.time for s in store.node_samples(since=0)] == [50.0, 50.0], "samples carry the clock's time"
    clock.advance(25)
    source.fail_with("connection refused")
    with pytest.raises(TelemetryError):
        rec.tick(clock.now())
    assert rec.age(clock.now()) == 25.0
    assert metric(metrics, "harvester_telemetry_age_seconds") == 25.0
    assert metric(metrics, "harvester_telemetry_polls_total", outcome="error") == 1
    assert metric(metrics, "harvester_telemetry_nodes", state="RUNNING") == 2


def test_prune_history_uses_the_retention_window() -> None:
    store, metrics = SqliteHistoryStore(":memory:"), Metrics(CollectorRegistry())
    store.append_node_samples([replace(_node("a:1"), time=t) for t in (0.0, 100.0, 200.0)])
    result = PruneHistory(store, retention_s=150, metrics=metrics).tick(250.0)
    assert result.summary["pruned"] == {"node_samples": 1, "primary_vectors": 0, "tenant_slots": 0, "job_runs": 0,
                                        "decision_log": 0}
    assert metric(metrics, "harvester_store_rows_pruned_total", table="node_samples") == 1


def test_raw_samples_and_tenant_slots_have_their_own_retention() -> None:
    store, metrics = SqliteHistoryStore(":memory:"), Metrics(CollectorRegistry())
    store.append_node_samples([replace(_node("a:1"), time=t) for t in (0.0, 100.0, 200.0)])
    store.add_tenant_slots([TenantSlot("web", t, 0.5, 1, 1) for t in (0.0, 120.0, 240.0)])
    store.append_job_runs([JobRun("etl", f"app_{t:.0f}", t - 10, t, 4, 40.0) for t in (20.0, 90.0, 230.0)])
    store.append_decisions([DecisionRecord(t, "guard", "set_capacity", "a:1", "formula", "sent") for t in (10.0, 200.0)])
    result = PruneHistory(store, retention_s=200, metrics=metrics, raw_retention_s=60, job_runs_retention_s=100,
                          decisions_retention_s=100).tick(250.0)
    assert result.summary["pruned"] == {"node_samples": 2, "primary_vectors": 0, "tenant_slots": 1, "job_runs": 2,
                                        "decision_log": 1}
    assert [d.at for d in store.decisions()] == [200.0]
    assert [r.app_id for r in store.job_runs(since=0)] == ["app_230"]
    assert [s.start for s in store.tenant_slots(since=0)] == [120.0, 240.0]
    assert metric(metrics, "harvester_store_rows_pruned_total", table="tenant_slots") == 1

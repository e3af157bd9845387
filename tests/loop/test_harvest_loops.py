"""The harvesting loops at tick level: node baselines, the slot fold, the refit schedule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.clock import SimClock
from harvester.config_harvesting import HarvestingSettings
from harvester.domain import ClusterSnapshot, Resources
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.harvest_nodes import FoldTenantSlots, NodeRegistry
from harvester.loop.refit import Refit
from harvester.models.tenant_slots import TenantSlot
from harvester.observability.metrics import Metrics

from harvesting_builders import sample

T0 = 1_800_000_000.0  # a multiple of 120 s
H = HarvestingSettings.model_validate({
    "tenants": [{"tenant": "web", "hostname_pattern": "^w"}, {"tenant": "db", "hostname_pattern": "^d"}],
    "node_resources": {"physical_cores": 16},
    "refit_interval_s": 86400,
})


def snap(t: float, *nodes) -> ClusterSnapshot:  # type: ignore[no-untyped-def]
    return ClusterSnapshot(t, "test", tuple(nodes))


def test_baselines_are_recorded_before_any_update_and_survive_a_restart(tmp_path: Path) -> None:
    store = SqliteHistoryStore(tmp_path / "h.db")
    reg = NodeRegistry(store, H)
    assert reg.observe(snap(T0, sample("w1:1", total=Resources(65536, 16)), sample("w2:1", state="NEW"))) == {"new_nodes": 1}
    # Harvester then cut w1 to 4 vcores: the RM's total is now our own number
    reg.observe(snap(T0 + 10, sample("w1:1", total=Resources(65536, 4))))
    nodes, left_out = reg.resolve(snap(T0 + 10, sample("w1:1", total=Resources(65536, 4)), sample("x9:1")))
    assert nodes["w1:1"].capacity == Resources(65536, 16) and nodes["w1:1"].tenant == "web"
    assert "x9:1" in left_out, "a node first seen after a cut-like total would be wrong; one never seen RUNNING has no size"
    store.close()
    again = NodeRegistry(SqliteHistoryStore(tmp_path / "h.db"), H)
    assert again.baselines()["w1:1"].resources == Resources(65536, 16), "persisted: a restart does not take our cut"


def test_every_poll_is_folded_into_its_tenants_slot() -> None:
    store, metrics = SqliteHistoryStore(":memory:"), Metrics(CollectorRegistry())
    reg = NodeRegistry(store, H)
    fold = FoldTenantSlots(reg, store, metrics, step_s=120.0)
    for dt, cpu in ((0.0, 4.0), (10.0, 8.0), (130.0, 16.0)):
        s = snap(T0 + dt, sample("w1:1", t=T0 + dt, node_cpu=cpu), sample("d1:1", t=T0 + dt, node_cpu=2.0))
        reg.observe(s)
        assert fold(s) == {"tenant_slots": 2}
    rows = {(r.start - T0, r.tenant): r for r in store.tenant_slots(since=0)}
    assert rows[(0.0, "web")].utilization == pytest.approx((4 + 8) / 2 / 16) and rows[(0.0, "web")].polls == 2
    assert rows[(120.0, "web")].utilization == pytest.approx(1.0)
    assert rows[(0.0, "db")].utilization == pytest.approx(2 / 16)


def _history(store: SqliteHistoryStore, end: float, days: float = 20.0) -> None:
    t = np.arange(end - days * 86400, end, 120.0)
    web = 0.4 + 0.3 * np.sin(2 * np.pi * t / 86400)
    rng = np.random.default_rng(1)
    db = 0.3 + rng.normal(0, 0.005, t.size)
    store.add_tenant_slots([TenantSlot("web", float(a), float(u), 1, 2) for a, u in zip(t, web)]
                           + [TenantSlot("db", float(a), float(u), 1, 1) for a, u in zip(t, db)])


def _refit(store: SqliteHistoryStore) -> tuple[Refit, HarvestingBoard, Metrics]:
    state, metrics = HarvestingBoard(Board()), Metrics(CollectorRegistry())
    return Refit(store, state, metrics, H, nodes=lambda: {}), state, metrics


def test_refit_fits_persists_publishes_then_waits_for_the_interval_or_a_request() -> None:
    store = SqliteHistoryStore(":memory:")
    refit, state, metrics = _refit(store)
    clock = SimClock(T0)
    assert refit.tick(clock.now()).summary["refit"] is False, "no history: nothing to fit"
    assert state.view().model is None and store.class_model() is None
    _history(store, T0)
    first = refit.tick(clock.now()).summary
    assert first["refit"] is True and first["model_version"] == 1 and first["tenants"] == 2
    model = state.view().model
    assert model is not None and {a.tenant: a.pattern.value for a in model.tenants} == {"web": "periodic", "db": "constant"}
    assert store.class_model().version == 1 and store.margin_model(1) is not None
    assert set(state.view().reserves.by_class) == {c.class_id for c in model.classes}
    clock.advance(3600)
    assert refit.tick(clock.now()).summary["refit"] is False, "a day between scheduled refits"
    refit.request()
    assert refit.tick(clock.now()).summary["model_version"] == 2, "on demand"
    clock.advance(86400)
    assert refit.tick(clock.now()).summary["model_version"] == 3, "due again after refit_interval_s"


def test_a_restart_publishes_the_stored_model_without_refitting() -> None:
    store = SqliteHistoryStore(":memory:")
    _history(store, T0)
    _refit(store)[0].tick(T0)
    refit, state, _ = _refit(store)  # a new sidecar on the same store
    summary = refit.tick(T0 + 600).summary
    assert summary["refit"] is False and state.view().model is not None and state.view().model.version == 1


def test_the_refit_window_ignores_slots_outside_it_and_the_current_slot() -> None:
    store = SqliteHistoryStore(":memory:")
    _history(store, T0)
    store.add_tenant_slots([TenantSlot("ghost", T0 - 40 * 86400, 0.5, 1, 1), TenantSlot("late", T0, 0.5, 1, 1)])
    refit, state, _ = _refit(store)
    refit.tick(T0 + 60)
    assert {a.tenant for a in state.view().model.tenants} == {"web", "db"}


@pytest.mark.parametrize("days, web", [(6.0, "periodic"), (2.0, "unpredictable")])
def test_a_history_younger_than_the_window_starts_the_window_at_its_first_slot(days: float, web: str) -> None:
    # 6 days in a 30-day window: counted as 24 days missing, the periodicity test (at most half
    # missing) would never run; from the first slot on, 6 days are enough (3 needed), 2 are not
    store = SqliteHistoryStore(":memory:")
    _history(store, T0, days=days)
    refit, state, _ = _refit(store)
    refit.tick(T0 + 60)
    web_row = state.view().model.assignment("web")
    assert web_row is not None and web_row.pattern.value == web and web_row.samples == days * 720

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


def test_the_reaction_reserve_folds_only_new_raw_samples_and_equals_a_fit_from_scratch() -> None:
    """Issue 29: each refit reads the primary vectors since the last fold; the summaries after three
    refits equal those of one fold over the same samples, and reading them stays bounded."""
    from harvester.decisions.strategy import NodeStrategy

    nodes = {f"{'w' if i % 2 else 'd'}{i}:1": NodeStrategy(f"{'w' if i % 2 else 'd'}{i}:1", f"h{i}",
                                                            "web" if i % 2 else "db", "prod", 16.0, Resources(65536, 16))
             for i in range(6)}
    ids = tuple(nodes)
    rng = np.random.default_rng(7)
    t = T0 - 86400 + 10.0 * np.arange(3 * 8640)  # three days of 10-s polls
    u = np.clip(0.4 + np.cumsum(rng.normal(0, 0.02, (t.size, len(ids))), axis=0), 0, 1).astype(np.float32)
    u[rng.random(u.shape) < 0.01] = np.nan

    def run(ends: list[float]) -> tuple[dict, list[float]]:
        store, metrics = SqliteHistoryStore(":memory:"), Metrics(CollectorRegistry())
        refit = Refit(store, HarvestingBoard(Board()), metrics, H, nodes=lambda: nodes, horizon_s=22.0, poll_interval_s=10.0)
        read, written = [], 0
        for end in ends:
            keep = t < end
            store.append_primary_vectors(t[keep][written:].tolist(), ids, u[keep][written:])
            written = int(keep.sum())
            before = store.rise_fold_state()
            refit.fold_rises(end, keep_from_day=0)
            read.append(before.folded_until if before else -1.0)
        rows = {(r.day, r.tenant): (r.bins.tolist(), r.counts.tolist()) for r in store.rise_summaries(from_day=0)}
        return rows, read

    end = float(t[-1]) + 10.0
    scratch, _ = run([end])
    steps, read = run([T0 - 40000.0, T0 + 3.0, end])
    assert steps == scratch and sum(sum(c) for _, c in scratch.values()) > 3 * 8000 * len(ids)
    assert read[1] >= T0 - 40000.0 - 30 and read[2] >= T0 - 30, "each refit reads from the last one's incomplete tail (k = 3 polls)"


def test_prefetched_keeps_order_hands_over_errors_and_stops_with_its_consumer() -> None:
    from harvester.loop.refit import prefetched

    assert list(prefetched(iter(range(50)), depth=2)) == list(range(50))

    def failing():  # type: ignore[no-untyped-def]
        yield 1
        raise ValueError("store gone")

    got = []
    with pytest.raises(ValueError, match="store gone"):
        for x in prefetched(failing()):
            got.append(x)
    assert got == [1]
    produced = []

    def counting():  # type: ignore[no-untyped-def]
        for i in range(1000):
            produced.append(i)
            yield i

    it = prefetched(counting(), depth=2)
    assert next(it) == 0
    it.close()  # the consumer stops early: the reader stops too, within depth + 2 items
    assert len(produced) <= 5

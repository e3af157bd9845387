"""Per-tenant 2-minute slots folded in poll by poll (§3.2 "average server")."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harvester.domain import Resources
from harvester.models.tenant_series import build_tenant_series
from harvester.models.tenant_slots import TenantSlot, aggregate_poll, series_from_slots, slot_start

from harvesting_builders import sample

TENANT = {"a:1": "web", "b:1": "web", "c:1": "db"}
CORES = {"a:1": 16.0, "b:1": 16.0, "c:1": 16.0}
VCORES = {"a:1": 16, "b:1": 16, "c:1": 16}


def test_one_poll_is_the_mean_of_its_nodes_per_tenant() -> None:
    polled = [
        sample("a:1", t=250, node_cpu=4.0),                                     # 0.25
        sample("b:1", t=250, node_cpu=12.0, containers_vcores=4.0),             # (12 - 4) / 16 = 0.5
        sample("c:1", t=250, node_cpu=None),                                     # no utilization: no row
        sample("x:1", t=250, node_cpu=8.0),                                      # no tenant
    ]
    rows = aggregate_poll(polled, TENANT, CORES, VCORES, time=250.0, step_s=120.0)
    assert rows == [TenantSlot("web", 240.0, pytest.approx(0.375), 1, 2)]


def test_unit_correction_uses_the_configured_vcores_when_the_node_was_cut() -> None:
    # configured 16 vcores, cut to 4: 8 vcores of containers are 8 cores at most (16/16), not 32
    cut = sample("a:1", t=0, total=Resources(65536, 4), node_cpu=12.0, containers_vcores=8.0)
    (row,) = aggregate_poll([cut], {"a:1": "web"}, CORES, VCORES, time=0.0)
    assert row.utilization == pytest.approx((12.0 - 8.0) / 16.0)


def test_nodes_not_running_and_nodes_without_cores_do_not_count() -> None:
    polled = [sample("a:1", node_cpu=4.0, state="LOST"), sample("b:1", node_cpu=4.0)]
    assert aggregate_poll(polled, TENANT, {"a:1": 16.0}, VCORES, time=0.0) == []


def test_series_from_slots_places_rows_and_keeps_gaps() -> None:
    slots = [TenantSlot("web", 0.0, 1.0, 2, 3), TenantSlot("web", 240.0, 0.2, 1, 2), TenantSlot("db", 120.0, 0.3, 1, 1),
             TenantSlot("db", 360.0, 0.9, 1, 1)]  # outside the window
    series, nodes = series_from_slots(slots, start=0.0, end=360.0, step_s=120.0)
    assert series.tenants == ("db", "web") and series.matrix.shape == (2, 3)
    assert np.isnan(series.matrix[0, 0]) and series.matrix[0, 1] == pytest.approx(0.3)
    assert series.matrix[1].tolist()[0] == pytest.approx(0.5) and math.isnan(series.matrix[1, 1])
    assert nodes == {"web": 3, "db": 1}


def test_folding_polls_equals_averaging_raw_samples_when_every_node_reports() -> None:
    rng = np.random.default_rng(4)
    raw, slots = [], []
    for t in np.arange(0.0, 1200.0, 10.0):
        poll = [sample(n, t=float(t), node_cpu=float(rng.uniform(0, 16))) for n in TENANT]
        raw += poll
        slots += aggregate_poll(poll, TENANT, CORES, VCORES, time=float(t))
    summed: dict[tuple[float, str], TenantSlot] = {}
    for s in slots:
        old = summed.get((s.start, s.tenant))
        summed[(s.start, s.tenant)] = s if old is None else TenantSlot(
            s.tenant, s.start, old.util_sum + s.util_sum, old.polls + s.polls, max(old.nodes, s.nodes))
    folded, _ = series_from_slots(summed.values(), start=0.0, end=1200.0)
    direct = build_tenant_series(raw, TENANT, CORES, start=0.0, end=1200.0)
    assert folded.tenants == direct.tenants
    np.testing.assert_allclose(folded.matrix, direct.matrix)


def test_slot_start_is_epoch_aligned() -> None:
    assert slot_start(1_000_000_123.0, 120.0) == 1_000_000_080.0

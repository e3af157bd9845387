"""Per-tenant history for the grid (models/hdfs_tenant_stats.py) and the fitted grid model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harvester.models.hdfs_grid_model import fit_grid_model
from harvester.models.hdfs_tenant_stats import (
    DEFAULT,
    MEASURED,
    TenantHistory,
    TenantPeak,
    count_reimages,
    merge_peaks,
    observed_server_days,
    tenant_peaks,
    tenant_stats,
)
from harvester.models.reimage_detection import ReimageEvent
from harvester.models.tenant_series import TenantSeries

DAY = 86400.0


def test_peaks_are_the_quantile_of_valid_slots() -> None:
    m = np.array([np.linspace(0, 1, 101), [np.nan] * 101, [0.2] * 50 + [np.nan] * 51])
    peaks = tenant_peaks(TenantSeries(("web", "ghost", "db"), m, 120.0, 0.0), 0.99)
    assert peaks["web"] == TenantPeak(pytest.approx(0.99), 101)
    assert "ghost" not in peaks, "no valid slot: no measured peak"
    assert peaks["db"] == TenantPeak(pytest.approx(0.2), 50)
    assert merge_peaks([{"web": [0.1, 0.5]}, {"web": [0.3], "db": []}], 1.0) == {"web": TenantPeak(0.5, 3)}


def test_reimage_counts_use_the_events_tenant_else_the_datanodes() -> None:
    events = [ReimageEvent(10.0, "h1", datanode_id="10.0.0.1:9866"), ReimageEvent(20.0, "h2", tenant="db"),
              ReimageEvent(30.0, "h9", datanode_id="10.0.0.9:9866"), ReimageEvent(-5.0, "h1", datanode_id="10.0.0.1:9866"),
              ReimageEvent(100.0, "h1", datanode_id="10.0.0.1:9866"),
              ReimageEvent(40.0, "h1", datanode_id="10.0.0.1:9867"), ReimageEvent(50.0, "h1")]
    tenant_of = {"10.0.0.1:9866": "web", "10.0.0.1:9867": "db", "10.0.0.2:9866": "web"}
    assert count_reimages(events, tenant_of, since=0.0, until=100.0) == {"web": 1, "db": 2}, \
        "two DataNodes of host h1 count for their own tenants; a host-wide line without a tenant is not guessed"


def test_observation_span_is_the_window_with_a_log_else_since_first_seen() -> None:
    hosts = {"h1": "web", "h2": "web", "h3": "db"}
    first = {"h1": 0.0, "h2": 25 * DAY}
    now, window = 40 * DAY, 30 * DAY
    assert observed_server_days(first, hosts, now=now, window_s=window, log_covers_window=False) == \
        {"web": pytest.approx(30 + 15), "db": 0.0}
    assert observed_server_days(first, hosts, now=now, window_s=window, log_covers_window=True) == \
        {"web": pytest.approx(60), "db": pytest.approx(30)}


def test_rates_per_server_month_and_the_default_row() -> None:
    rows = tenant_stats(
        [TenantHistory("web", "e1", 10, 500, reimage_events=6, observed_server_days=300.0, peak=TenantPeak(0.7, 1000)),
         TenantHistory("new", "e2", 2, 100, reimage_events=1, observed_server_days=3.0, peak=None)],
        min_observed_days=7, default_reimages_per_server_month=1.0, default_peak_cpu=1.0,
    )
    new, web = rows  # sorted by tenant
    assert (web.reimages_per_server_month, web.peak_cpu, web.reimage_source, web.cpu_source) == \
        (pytest.approx(6 / 10), 0.7, MEASURED, MEASURED)
    assert (new.reimages_per_server_month, new.peak_cpu, new.reimage_source, new.cpu_source) == (1.0, 1.0, DEFAULT, DEFAULT)
    assert new.reimage_events == 1 and new.observed_server_days == 3.0, "the evidence is kept even when not used"


def test_grid_model_keeps_cells_and_stats_and_rebuilds_the_same_grid() -> None:
    hist = [TenantHistory(f"t{i}", f"e{i}", 1, 100 + i, i % 4, 60.0, TenantPeak(0.1 * (i % 9) + 0.05, 99))
            for i in range(18)]
    rows = tenant_stats(hist, min_observed_days=7, default_reimages_per_server_month=1, default_peak_cpu=1)
    model = fit_grid_model(rows, version=3, fitted_at=1000.0, window_s=30 * DAY)
    grid = model.grid()
    assert model.version == 3 and len(model.tenants) == 18
    assert {t: (c.row, c.col) for t, c in grid.tenant_cells.items()} == {t.stats.tenant: (t.row, t.col) for t in model.tenants}
    assert sum(grid.cell_tenants) == 18 and math.isclose(grid.total_bytes, sum(100 + i for i in range(18)))
    # rows are reimage bands: a tenant in a higher row never reimages less than one in a lower row
    rate = {t.stats.tenant: t.stats.reimages_per_server_month for t in model.tenants}
    for a in model.tenants:
        for b in model.tenants:
            if a.row < b.row:
                assert rate[a.stats.tenant] <= rate[b.stats.tenant]
    assert model.summary()["tenants_per_cell"] == list(grid.cell_tenants)

"""Reimage generator: determinism, correlation, and OSDI'16 §3.3's published percentiles."""

from __future__ import annotations

import numpy as np
import pytest

from hdfs_placement.reimage import MONTH_S, ReimageLog, check_against_paper, generate_reimages, monthly_tenant_rates


def reference_cluster(seed: int, n_tenants: int = 200) -> np.ndarray:
    """Heavy-tailed tenant sizes of >= 10 servers (the generator's calibration domain)."""
    sizes = (np.random.default_rng(seed).pareto(1.5, n_tenants) * 30).astype(int) + 10
    return np.repeat(np.arange(n_tenants), sizes)


@pytest.mark.parametrize("seed", [0, 1])
def test_three_years_match_the_published_percentiles(seed: int) -> None:
    servers = reference_cluster(100 + seed)
    log = generate_reimages(servers, 36 * MONTH_S, seed)
    calibration = check_against_paper(log, servers)
    by_name = {c.name: c for c in calibration.checks}
    assert set(by_name) == {"servers_at_most_1_per_month", "tenants_at_most_1_per_server_month",
                            "tenant_rate_p90_minus_p10", "tenants_changing_group_rarely", "reimages_in_group_events"}
    assert calibration.passed, calibration.failures()


def test_check_fails_for_a_log_that_reimages_everything_often() -> None:
    servers = reference_cluster(7, n_tenants=20)
    n = len(servers)
    months = 6
    times = np.repeat(np.arange(3 * months) * MONTH_S / 3 + 1.0, 1)
    log = ReimageLog(times, np.arange(len(times) + 1) * n, np.tile(np.arange(n, dtype=np.int32), len(times)),
                     np.zeros(len(times), dtype=np.int32), n, months * MONTH_S)
    calibration = check_against_paper(log, servers)
    failed = {c.name for c in calibration.failures()}
    assert {"servers_at_most_1_per_month", "tenants_at_most_1_per_server_month"} <= failed


def test_deterministic_and_well_formed() -> None:
    servers = reference_cluster(3, n_tenants=60)
    a = generate_reimages(servers, 2 * MONTH_S, 42)
    b = generate_reimages(servers, 2 * MONTH_S, np.random.default_rng(42))
    assert np.array_equal(a.times_s, b.times_s) and np.array_equal(a.servers, b.servers)
    assert np.all(np.diff(a.times_s) >= 0) and a.times_s[0] >= 0 and a.times_s[-1] < 2 * MONTH_S
    assert a.offsets[0] == 0 and a.offsets[-1] == len(a.servers)
    # Every event stays inside one tenant and never names a server twice.
    for i in range(len(a)):
        _, srv = a.event(i)
        assert set(servers[srv].tolist()) == {int(a.tenants[i])}
        assert len(set(srv.tolist())) == len(srv)
    assert not np.array_equal(generate_reimages(servers, 2 * MONTH_S, 43).times_s[:50], a.times_s[:50])


def test_reimages_are_correlated_within_tenants() -> None:
    servers = reference_cluster(5, n_tenants=100)
    log = generate_reimages(servers, 12 * MONTH_S, 5)
    sizes = np.diff(log.offsets)
    assert sizes.max() >= 10  # some events wipe many servers of a tenant at once
    assert (sizes == 1).any()


def test_window_keeps_tenant_rates_and_shifts_time() -> None:
    servers = reference_cluster(9, n_tenants=80)
    log = generate_reimages(servers, 2 * MONTH_S, 9)
    first, second = log.window(0, MONTH_S), log.window(MONTH_S, 2 * MONTH_S)
    assert len(first) + len(second) == len(log)
    assert second.horizon_s == MONTH_S and np.all(second.times_s >= 0) and np.all(second.times_s < MONTH_S)
    assert np.array_equal(np.concatenate((first.servers, second.servers)), log.servers)
    # History predicts the next month: tenant ranks correlate strongly.
    r1 = monthly_tenant_rates(first, servers)[:, 0]
    r2 = monthly_tenant_rates(second, servers)[:, 0]
    assert np.corrcoef(np.argsort(np.argsort(r1)), np.argsort(np.argsort(r2)))[0, 1] > 0.8


def test_empty_horizon_and_tenants_without_servers() -> None:
    log = generate_reimages(np.array([0, 0, 1]), 0.0, 1)
    assert len(log) == 0 and log.per_server_counts().tolist() == [0, 0, 0]
    sparse = np.repeat(np.array([0, 5, 9]), 20)  # tenant ids 1-4 and 6-8 own no server
    log = generate_reimages(sparse, 24 * MONTH_S, 2)
    assert len(log) > 0 and set(log.tenants.tolist()) <= {0, 5, 9}

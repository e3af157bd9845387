"""Primary tenants: sizes, the OSDI'16 pattern mix, pattern fitting/generation, server series."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harvester.sim.fit import load_patterns
from harvester.sim.tenants import DEFAULT_MIX, PATTERNS
from harvester.sim.tenants.layout import assign_patterns, build_primary_load, tenant_sizes, trace_rows
from harvester.sim.tenants.patterns import PatternFit, classify, fit_series, generate
from harvester.sim.traces.utilization import UtilSeries

DAY = 86400.0
STEP = 120.0


def test_tenant_sizes_sum_to_servers_and_are_positive() -> None:
    sizes = tenant_sizes(10000, 500, 1.0, np.random.default_rng(1))
    assert sizes.sum() == 10000 and sizes.min() >= 1 and sizes.shape == (500,)
    with pytest.raises(ValueError):
        tenant_sizes(5, 6, 1.0, np.random.default_rng(1))


def test_pattern_mix_is_by_servers_and_periodic_tenants_are_few_and_large() -> None:
    rng = np.random.default_rng(2)
    sizes = tenant_sizes(10000, 500, 1.0, rng)
    pats = np.array(assign_patterns(sizes, DEFAULT_MIX, rng))
    for p, share in DEFAULT_MIX.items():
        assert abs(sizes[pats == p].sum() / 10000 - share) < 0.03, p
    assert (pats == "periodic").sum() < (pats == "constant").sum()
    assert sizes[pats == "periodic"].mean() > sizes[pats != "periodic"].mean()


def _week(fn: object, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(0, 7 * DAY, STEP)
    return fn(t, rng)  # type: ignore[operator]


def test_classify_the_three_patterns() -> None:
    rng = np.random.default_rng(3)
    periodic = _week(lambda t, r: 0.4 + 0.2 * np.cos(2 * math.pi * t / DAY) + r.normal(0, 0.02, t.size), rng)
    constant = _week(lambda t, r: 0.3 + r.normal(0, 0.005, t.size), rng)
    spiky = _week(lambda t, r: 0.2 + np.where(r.random(t.size) < 0.05, 0.5, 0.0) + r.normal(0, 0.01, t.size), rng)
    assert [classify(u, STEP) for u in (periodic, constant, spiky)] == ["periodic", "constant", "unpredictable"]


def test_fit_recovers_a_daily_cycle_against_utc_midnight_and_generate_reproduces_it() -> None:
    start = 1375315200.0 + 3 * 3600  # a trace starting at 03:00 UTC
    t = start + np.arange(0, 7 * DAY, STEP)
    u = 0.4 + 0.2 * np.cos(2 * math.pi * t / DAY - 1.0)
    f = fit_series(u, STEP, start_s=start)
    assert f.pattern == "periodic" and f.mean == pytest.approx(0.4, abs=1e-6)
    assert f.a1 == pytest.approx(0.2, abs=1e-3) and f.phi1 == pytest.approx(-1.0, abs=1e-3)
    g = generate(f, 2, 720, STEP, 1375315200.0, np.random.default_rng(0))
    expect = 0.4 + 0.2 * np.cos(2 * math.pi * (1375315200.0 + np.arange(720) * STEP) / DAY - 1.0)
    assert g.shape == (2, 720) and np.allclose(g, expect, atol=1e-3)


def test_generate_is_bounded_and_shares_spikes_across_members() -> None:
    f = PatternFit("unpredictable", 0.2, ar_phi=0.9, ar_sigma=0.01, spike_rate_per_h=1.0, spike_height=0.3, spike_len_s=600)
    g = generate(f, 3, 2000, STEP, 0.0, np.random.default_rng(5))
    assert g.min() >= 0.0 and g.max() <= 1.0
    high = g > 0.45
    assert high.any() and np.corrcoef(g[0], g[1])[0, 1] > 0.5, "the tenant's spikes hit all its servers"


def test_shipped_pattern_fits_cover_every_pattern() -> None:
    fits = load_patterns()
    assert set(fits) == set(PATTERNS) and all(len(fits[p]) >= 10 for p in PATTERNS)
    assert all(f.pattern == p for p in PATTERNS for f in fits[p])


def test_primary_load_from_generators_has_history_jitter_and_targets() -> None:
    load = build_primary_load(servers=300, tenants=20, step_s=STEP, horizon_s=DAY, history_s=3 * 3600,
                              start_s=1375315200.0, rng=np.random.default_rng(6), fits=load_patterns(),
                              mean_utilization={"periodic": 0.5, "constant": 0.3, "unpredictable": 0.2})
    assert load.servers == 300 and load.steps == 720 and load.history_steps == 90
    u = load.util_at(0)
    assert u.shape == (300,) and u.min() >= 0 and u.max() <= 1
    load.util_at(-90)
    with pytest.raises(IndexError):
        load.util_at(720)
    pats = np.array([t.pattern for t in load.tenants])[load.tenant_of]
    means = np.mean([load.util_at(k) for k in range(0, 720, 15)], axis=0)
    assert abs(means[pats == "periodic"].mean() - 0.5) < 0.05
    assert abs(means[pats == "constant"].mean() - 0.3) < 0.05
    assert load.tenant_means(u).shape == (20,)


def test_primary_load_from_traces_groups_labelled_servers(tmp_path: object) -> None:
    rng = np.random.default_rng(7)
    t = np.arange(0, 3 * DAY, 300.0)
    series = [UtilSeries(f"web{i}", t, (0.5 + 0.3 * np.cos(2 * math.pi * t / DAY + i * 0.05)).astype(np.float32), "web")
              for i in range(3)]
    series += [UtilSeries(f"batch{i}", t, np.full(t.size, 0.2 + 0.001 * i, np.float32), None) for i in range(4)]
    rows = trace_rows(series, STEP, members=2, rng=rng)
    assert rows.groups["periodic"] == [[0, 1, 2]]
    assert sorted(map(len, rows.groups["constant"])) == [2, 2]
    load = build_primary_load(servers=40, tenants=4, step_s=STEP, horizon_s=DAY / 2, history_s=0, start_s=0.0, rng=rng,
                              fits=load_patterns(), traces=rows, mix={"periodic": 0.5, "constant": 0.5},
                              phase_jitter_s=0.0)
    from_trace = [x for x in load.tenants if x.source.startswith("trace:")]
    assert len(from_trace) == 4
    u = np.stack([load.util_at(k) for k in range(load.steps)])
    periodic = np.array([x.pattern == "periodic" for x in load.tenants])[load.tenant_of]
    assert np.all((u[:, periodic] > 0.15) & (u[:, periodic] < 0.85))
    assert np.allclose(u[:, ~periodic], 0.2, atol=0.01)

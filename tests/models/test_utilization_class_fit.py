"""k-means within patterns, class tags and the tenant → class map (OSDI'16 §4.1)."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.models.patterns import Pattern
from harvester.models.tenant_series import TenantSeries, stack_series
from harvester.models.utilization_classes import ClassParams, fit, predict

DAY = 720


def _tenants(seed: int = 0) -> dict[str, np.ndarray]:
    """Three daily-periodic tenants around 0.2, three around 0.6, four flat at two levels, two random walks."""
    rng = np.random.default_rng(seed)
    t = np.arange(30 * DAY) * 120.0
    day = np.sin(2 * np.pi * t / 86400)
    out = {}
    for i, mean in enumerate([0.2, 0.21, 0.19, 0.6, 0.61, 0.59]):
        out[f"web-{i}"] = mean + 0.15 * day + rng.normal(0, 0.02, t.size)
    for i, level in enumerate([0.1, 0.11, 0.7, 0.71]):
        out[f"crawl-{i}"] = level + rng.normal(0, 0.003, t.size)
    for i in range(2):
        w = np.cumsum(rng.normal(0, 0.004, t.size))
        out[f"test-{i}"] = 0.5 + w - w.mean()
    return out


def test_patterns_then_levels_become_classes_with_tags() -> None:
    model = fit(_tenants(), version=3, fitted_at=1234.5)
    assert model.version == 3 and model.fitted_at == 1234.5
    by_pattern: dict[Pattern, list] = {}
    for c in model.classes:
        by_pattern.setdefault(c.pattern, []).append(c)
    periodic = by_pattern[Pattern.PERIODIC]
    assert [c.class_id for c in periodic] == ["periodic-0", "periodic-1"]
    assert periodic[0].average == pytest.approx(0.2, abs=0.01) and periodic[1].average == pytest.approx(0.6, abs=0.01)
    assert periodic[0].peak > periodic[0].average + 0.1, "a periodic class peaks well above its average"
    constant = by_pattern[Pattern.CONSTANT]
    assert [round(c.average, 1) for c in constant] == [0.1, 0.7]
    assert all(c.peak - c.average < 0.02 for c in constant)
    assert {a.tenant for a in model.tenants if a.pattern is Pattern.UNPREDICTABLE} == {"test-0", "test-1"}
    # tenant → class map
    assert model.tenant_class_map()["web-4"] == "periodic-1"
    assert predict(model, "crawl-0").class_id == "constant-0"
    assert predict(model, "nobody") is None
    assert set(model.members("periodic-0")) == {"web-0", "web-1", "web-2"}
    assert sum(c.tenants for c in model.classes) == len(model.tenants) == 12


def test_fit_is_deterministic_with_a_seed() -> None:
    data = _tenants()
    a = fit(data, version=1, fitted_at=0.0, params=ClassParams(seed=7))
    b = fit(data, version=1, fitted_at=0.0, params=ClassParams(seed=7))
    assert a == b


def test_max_k_bounds_classes_per_pattern() -> None:
    model = fit(_tenants(), version=1, fitted_at=0.0, params=ClassParams(max_k=1))
    assert sorted(c.class_id for c in model.classes) == ["constant-0", "periodic-0", "unpredictable-0"]


def test_node_weights_shape_the_class_tags() -> None:
    data = {"a": np.full(3 * DAY, 0.1), "b": np.full(3 * DAY, 0.12)}
    even = fit(data, version=1, fitted_at=0.0)
    heavy = fit(data, version=1, fitted_at=0.0, tenant_weights={"b": 3})
    assert [c.class_id for c in even.classes] == ["constant-0"], "two tenants: one class"
    assert even.classes[0].average == pytest.approx(0.11)
    assert heavy.classes[0].average == pytest.approx(0.115) and heavy.classes[0].weight == 4


def test_tenants_without_samples_are_skipped_and_short_ones_fall_back() -> None:
    data = {"empty": np.full(DAY, np.nan), "short": np.array([0.2, 0.9, 0.1, 0.8] * 10), "ok": np.full(DAY, 0.3)}
    model = fit(data, version=1, fitted_at=0.0)
    assert model.skipped == (("empty", "no samples"),)
    assert model.assignment("empty") is None
    short = model.assignment("short")
    assert short.pattern is Pattern.UNPREDICTABLE and short.fallback == "too little history for the periodicity test"
    assert model.assignment("ok").pattern is Pattern.CONSTANT


def test_series_step_must_match_the_parameters() -> None:
    ts = TenantSeries(("a",), np.zeros((1, 10)), 60.0, 0.0)
    with pytest.raises(ValueError, match="differs"):
        fit(ts, version=1, fitted_at=0.0)


def test_stack_series_aligns_on_the_last_sample() -> None:
    ts = stack_series({"long": np.array([1.0, 2.0, 3.0]), "short": np.array([9.0])}, step_s=120.0, end=360.0)
    assert ts.start == 0.0 and ts.end == 360.0
    np.testing.assert_array_equal(ts.matrix[1], [np.nan, np.nan, 9.0])

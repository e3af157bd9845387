"""Margins from the distribution of utilization change (paper 004 §4) with known inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harvester.models.margins import fit_margins
from harvester.models.tenant_series import TenantSeries


def _series(rows: dict[str, list[float]]) -> TenantSeries:
    return TenantSeries(tuple(rows), np.array(list(rows.values()), dtype=float), 120.0, 0.0)


def test_margin_is_the_quantile_of_absolute_consecutive_changes_pooled_per_class() -> None:
    ts = _series({"a": [0.0, 0.1, 0.1, 0.3], "b": [0.5, 0.4, 0.4, 0.4], "c": [0.2, 0.9, 0.2, 0.9]})
    m = fit_margins(ts, {"a": "k1", "b": "k1", "c": "k2"}, quantile=0.5, version=2, fitted_at=9.0)
    k1 = m.margin("k1")
    # |Δ| of a: .1 0 .2 and of b: .1 0 0 → pooled median 0.05
    assert k1.changes == 6 and k1.margin == pytest.approx(0.05) and k1.mean_change == pytest.approx(0.4 / 6)
    assert m.margin("k2").margin == pytest.approx(0.7)
    assert (m.version, m.fitted_at, m.quantile, m.step_s) == (2, 9.0, 0.5, 120.0)
    assert m.margin("nope") is None


def test_pairs_with_a_gap_are_skipped_and_tenants_without_class_ignored() -> None:
    ts = _series({"a": [0.1, np.nan, 0.5, 0.6], "z": [0.0, 1.0, 0.0, 1.0]})
    m = fit_margins(ts, {"a": "k"}, quantile=0.95)
    assert m.margin("k").changes == 1 and m.margin("k").margin == pytest.approx(0.1)
    assert [x.class_id for x in m.margins] == ["k"]


def test_a_class_without_any_change_has_no_margin() -> None:
    m = fit_margins(_series({"a": [0.1, np.nan, 0.2, np.nan]}), {"a": "k"})
    assert m.margin("k").changes == 0 and math.isnan(m.margin("k").margin)


def test_google_trace_like_changes_give_a_narrow_margin() -> None:
    # paper 004 Figure 10: > 90% of moments change < 20%. Magnitudes 92% in [0, 0.2), 8% in [0.2, 0.5).
    rng = np.random.default_rng(0)
    mags = np.where(rng.random(20000) < 0.92, rng.uniform(0, 0.2, 20000), rng.uniform(0.2, 0.5, 20000))
    u = 0.5 + np.concatenate([[0.0], np.cumsum(np.where(rng.random(20000) < 0.5, -mags, mags))])
    ts = _series({"t": list(u)})
    assert fit_margins(ts, {"t": "k"}, quantile=0.9).margin("k").margin < 0.2
    assert 0.2 < fit_margins(ts, {"t": "k"}, quantile=0.95).margin("k").margin < 0.5


@pytest.mark.parametrize("q", [0.0, 1.0, -0.1])
def test_quantile_must_be_inside_zero_one(q: float) -> None:
    with pytest.raises(ValueError, match="quantile"):
        fit_margins(_series({"a": [0.1, 0.2]}), {"a": "k"}, quantile=q)

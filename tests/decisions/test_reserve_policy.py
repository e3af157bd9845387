"""Reserve per class: fitted margin clamped, cold start for thin history (policy, principle 9)."""

from __future__ import annotations

import math

import pytest

from harvester.decisions.reserve import ReservePolicy, resolve_reserves
from harvester.models.margins import ClassMargin, MarginModel


def margins(*ms: ClassMargin) -> MarginModel:
    return MarginModel(1, 0.0, 0.95, 120.0, ms)


def test_fitted_margins_are_clamped_and_thin_ones_use_cold_start() -> None:
    m = margins(ClassMargin("flat", 0.95, 0.01, 5000, 0.004), ClassMargin("wild", 0.95, 0.8, 5000, 0.2),
                ClassMargin("ok", 0.95, 0.12, 5000, 0.05), ClassMargin("thin", 0.95, 0.3, 10, 0.1),
                ClassMargin("none", 0.95, math.nan, 0, math.nan))
    t = resolve_reserves(m, ["flat", "wild", "ok", "thin", "none", "unfitted"], ReservePolicy())
    assert t.fraction("flat") == 0.05 and t.fraction("wild") == 0.5 and t.fraction("ok") == pytest.approx(0.12)
    assert t.fraction("thin") == t.fraction("none") == t.fraction("unfitted") == 0.2
    assert "q0.95" in t.reason("ok") and "cold start" in t.reason("thin")
    assert t.fraction(None) == 0.2 and t.fraction("never-seen") == 0.2 and "no class" in t.reason(None)


def test_no_margin_model_is_all_cold_start() -> None:
    t = resolve_reserves(None, ["a"], ReservePolicy(cold_start=0.3))
    assert t.fraction("a") == 0.3


def test_policy_validation() -> None:
    with pytest.raises(ValueError):
        ReservePolicy(floor=0.6, cap=0.5)

"""FFT pattern test (OSDI'16 §3.2, Figure 1) with known inputs."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.models.patterns import Pattern, PatternParams, periodic_band, profile_patterns

STEP = 120.0
DAY = int(86400 / STEP)  # 720 samples


def _t(days: float) -> np.ndarray:
    return np.arange(int(days * DAY)) * STEP


def sine(days: float = 30, *, mean: float = 0.5, amp: float = 0.3, noise: float = 0.05, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = _t(days)
    return mean + amp * np.sin(2 * np.pi * t / 86400) + rng.normal(0, noise, t.size)


def flat(days: float = 30, *, level: float = 0.4, noise: float = 0.005, seed: int = 2) -> np.ndarray:
    return level + np.random.default_rng(seed).normal(0, noise, int(days * DAY))


def random_walk(days: float = 30, *, step: float = 0.004, seed: int = 3) -> np.ndarray:
    w = np.cumsum(np.random.default_rng(seed).normal(0, step, int(days * DAY)))
    return 0.5 + w - w.mean()


def _one(series: np.ndarray, params: PatternParams = PatternParams()):
    p = profile_patterns(series[None, :], params)
    return p.pattern_of(0), p


def test_a_sine_tenant_is_periodic() -> None:
    pattern, p = _one(sine())
    assert pattern is Pattern.PERIODIC
    assert p.periodic_share[0] > 0.8 and p.fallback_of(0) == ""


def test_a_flat_tenant_is_constant() -> None:
    pattern, p = _one(flat())
    assert pattern is Pattern.CONSTANT
    assert p.average[0] == pytest.approx(0.4, abs=0.001)


def test_a_random_walk_tenant_is_unpredictable() -> None:
    pattern, p = _one(random_walk())
    assert pattern is Pattern.UNPREDICTABLE
    assert p.periodic_share[0] < 0.05


def test_white_noise_is_unpredictable_not_periodic() -> None:
    pattern, p = _one(0.5 + np.random.default_rng(4).normal(0, 0.15, 30 * DAY))
    assert pattern is Pattern.UNPREDICTABLE and p.periodic_share[0] < 0.01


def test_figure_1b_a_31_day_month_peaks_at_frequency_31() -> None:
    params = PatternParams()
    band = periodic_band(31 * DAY, params)
    assert {30, 31, 32, 62, 93} <= set(band.tolist())
    assert _one(sine(31))[0] is Pattern.PERIODIC


def test_share_threshold_separates_signal_from_noise_at_one_to_four() -> None:
    # daily sine of variance a²/2 plus noise of 4x that: share ≈ 0.2 (the documented edge)
    strong = sine(amp=0.2, noise=0.2 / np.sqrt(2) * np.sqrt(3), seed=5)  # noise var 3x signal var
    weak = sine(amp=0.2, noise=0.2 / np.sqrt(2) * np.sqrt(6), seed=6)    # noise var 6x signal var
    assert _one(strong)[0] is Pattern.PERIODIC
    assert _one(weak)[0] is Pattern.UNPREDICTABLE


def test_a_trend_does_not_hide_a_daily_cycle() -> None:
    t = _t(30)
    trended = sine(amp=0.2, noise=0.03) - 0.5 + 0.3 + 0.3 * t / t[-1]
    assert _one(trended)[0] is Pattern.PERIODIC


def test_missing_samples_are_tolerated() -> None:
    s = sine()
    s[np.random.default_rng(7).random(s.size) < 0.2] = np.nan
    pattern, p = _one(s)
    assert pattern is Pattern.PERIODIC
    assert p.valid[0] == int(np.sum(~np.isnan(s)))


def test_fallbacks_for_short_or_empty_history() -> None:
    rows = np.full((4, 30 * DAY), np.nan)
    rows[1, -10:] = 0.5                      # 10 samples < min_samples
    rows[2, -2 * DAY:] = sine(2)             # 2 days < min_days_periodic, not flat
    rows[3, -2 * DAY:] = flat(2)             # 2 days but flat: the constant test still applies
    p = profile_patterns(rows, PatternParams())
    assert [p.pattern_of(i) for i in range(4)] == [
        Pattern.UNPREDICTABLE, Pattern.UNPREDICTABLE, Pattern.UNPREDICTABLE, Pattern.CONSTANT]
    assert [p.fallback_of(i) for i in range(4)] == [
        "no samples", "too few samples", "too little history for the periodicity test", ""]
    assert np.isnan(p.average[0]) and p.average[1] == 0.5


def test_average_and_peak_quantile_ignore_missing_values() -> None:
    row = np.array([np.nan, 0.0, 0.1, 0.2, 0.3, 0.4, np.nan, 1.0])
    p = profile_patterns(row[None, :], PatternParams(min_samples=2, peak_quantile=0.5))
    assert p.average[0] == pytest.approx(2.0 / 6)
    assert p.peak[0] == pytest.approx(0.25)  # median of the 6 valid values
    p = profile_patterns(row[None, :], PatternParams(min_samples=2, peak_quantile=1.0))
    assert p.peak[0] == pytest.approx(1.0)


def test_low_idle_tenant_is_constant_by_absolute_std() -> None:
    pattern, p = _one(flat(level=0.03, noise=0.01))
    assert pattern is Pattern.CONSTANT and p.std[0] / p.average[0] > 0.1


def test_chunking_and_dtype_do_not_change_the_answer() -> None:
    rows = np.stack([sine(), flat(), random_walk(), sine(seed=9)])
    a = profile_patterns(rows, PatternParams(chunk_tenants=1))
    b = profile_patterns(rows.astype(np.float32), PatternParams(chunk_tenants=256))
    assert a.pattern.tolist() == b.pattern.tolist() == [0, 1, 2, 0]
    np.testing.assert_allclose(a.average, b.average, rtol=1e-5)


@pytest.mark.parametrize("bad", [{"step_s": 0}, {"periodic_min_share": 0}, {"peak_quantile": 1.5}, {"min_samples": 1}])
def test_invalid_parameters_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError, match="invalid pattern parameters"):
        PatternParams(**bad)


def test_input_must_be_a_matrix() -> None:
    with pytest.raises(ValueError, match="2-D"):
        profile_patterns(np.zeros(10))

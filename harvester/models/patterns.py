"""Utilization patterns from a tenant's spectrum (OSDI'16 §3.2, Figure 1) — pure, vectorized.

The paper runs the FFT on each primary tenant's month of 2-minute CPU utilization (the
"average server" of the tenant) and sorts tenants into three patterns: periodic, (roughly)
constant and unpredictable. Figure 1b: a periodic month shows a spike at frequency 31 because
there are 31 daily peaks; Figure 1d: an unpredictable month's signal strength decays as the
frequency grows (most of its energy comes from rare, low-frequency events). The transcription
gives no numeric thresholds, so this module states its own, with the reasoning:

1. **Constant** when the raw series barely moves: standard deviation ≤ `constant_max_std`
   (default 0.02, i.e. 2 % of the server — the noise floor of a 2-minute CPU sample) OR
   coefficient of variation std/mean ≤ `constant_max_cv` (default 0.10). Checked first:
   when the total variance is this small its spectral shape is irrelevant to harvesting
   (average ≈ peak, so every headroom definition of §4.1 agrees).
2. **Periodic** when the daily harmonics hold a large share of the spectral energy:
   mean-removed, linearly detrended series → `rfft` → power |X_k|², k ≥ 1 (DC excluded).
   The daily fundamental sits at k_d = window / 1 day (= 30 for 30 days, Figure 1b's spike);
   the band is harmonics h·k_d for h = 1..`harmonics` (default 3: a day shape is rarely a pure
   sine), each ± `bin_tolerance` bins (default 1, for leakage when the window is not a whole
   number of days). Periodic when band energy / total AC energy ≥ `periodic_min_share`
   (default 0.20). Why 0.20: white noise puts ~(2·tol+1)·h / (N/2) ≈ 0.1 % of its energy in
   that band and a random walk (1/f², Figure 1d's decay) ≈ 0.2 %, so 0.20 is ~100× above both,
   while a daily sine still qualifies with noise variance up to 4× its own (share = 1/(1+4)).
   The linear detrend keeps a slow month-long growth from masking a daily cycle.
   Weekly harmonics (`weekly`, default off): a 30-day window holds only ~4.3 weekly cycles,
   which lands the weekly bin among the lowest frequencies where a random walk concentrates
   its energy (bins 3–5 hold ~13 % of a 1/f² spectrum on average, often more), so a weekly
   test cannot separate "weekly" from "unpredictable" reliably at this window length.
3. **Unpredictable** otherwise.

Missing data (NaN) and short history — documented fallbacks:
- no valid sample: unpredictable, fallback "no samples" (callers usually drop such tenants);
- fewer than `min_samples` valid samples (default 30 = 1 hour): unpredictable, "too few
  samples" — nothing about the tenant is known well enough to trust its history;
- the constant test runs on whatever valid samples exist (variance needs no frequency
  resolution); the periodic test needs ≥ `min_days_periodic` days of valid samples (default 3:
  at least three daily peaks, and k_d ≥ 3 keeps the daily band clear of the lowest, red-noise
  bins) and at most `max_missing_fraction` of the window missing (default 0.5); otherwise the
  tenant is unpredictable with fallback "too little history for the periodicity test".
  Unpredictable is the conservative answer: Algorithm 1 ranks it last for medium and long jobs.
- Missing samples are filled with the tenant's mean before the FFT, which adds no energy at
  any frequency after mean removal (gaps only dilute the spectrum).

Average and peak are over valid samples; peak is the `peak_quantile` (default 0.99) rather
than the maximum so one bad 2-minute sample does not define a tenant for a month.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum

import numpy as np

DAY_S = 86400.0
WEEK_S = 7 * DAY_S


class Pattern(str, Enum):
    """A primary tenant's utilization pattern (§3.2); values match the proto's names."""

    PERIODIC = "periodic"
    CONSTANT = "constant"
    UNPREDICTABLE = "unpredictable"


#: Pattern by code in `PatternProfiles.pattern`.
PATTERNS: tuple[Pattern, ...] = (Pattern.PERIODIC, Pattern.CONSTANT, Pattern.UNPREDICTABLE)
_PERIODIC, _CONSTANT, _UNPREDICTABLE = 0, 1, 2

#: Fallback reason by code in `PatternProfiles.fallback` ("" = the full test ran).
FALLBACKS: tuple[str, ...] = ("", "no samples", "too few samples", "too little history for the periodicity test")


@dataclass(frozen=True, slots=True)
class PatternParams:
    """Thresholds of the pattern test (module docstring says why each default)."""

    step_s: float = 120.0
    periodic_min_share: float = 0.20
    harmonics: int = 3
    bin_tolerance: int = 1
    weekly: bool = False
    constant_max_std: float = 0.02
    constant_max_cv: float = 0.10
    min_samples: int = 30
    min_days_periodic: float = 3.0
    max_missing_fraction: float = 0.5
    peak_quantile: float = 0.99
    chunk_tenants: int = 256

    def __post_init__(self) -> None:
        checks = {
            "step_s": self.step_s > 0,
            "periodic_min_share": 0 < self.periodic_min_share <= 1,
            "harmonics": self.harmonics >= 1,
            "bin_tolerance": self.bin_tolerance >= 0,
            "constant_max_std": self.constant_max_std >= 0,
            "constant_max_cv": self.constant_max_cv >= 0,
            "min_samples": self.min_samples >= 2,
            "min_days_periodic": self.min_days_periodic > 0,
            "max_missing_fraction": 0 <= self.max_missing_fraction < 1,
            "peak_quantile": 0 < self.peak_quantile <= 1,
            "chunk_tenants": self.chunk_tenants >= 1,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"invalid pattern parameters: {', '.join(bad)}")


@dataclass(frozen=True, slots=True, eq=False)
class PatternProfiles:
    """Per-tenant columns (row i = tenant i of the input matrix)."""

    pattern: np.ndarray          # int8 code into PATTERNS
    average: np.ndarray          # mean utilization over valid samples (NaN when none)
    peak: np.ndarray             # peak_quantile of valid samples (NaN when none)
    std: np.ndarray
    periodic_share: np.ndarray   # daily-band energy / total AC energy (0 when not tested)
    valid: np.ndarray            # valid sample count
    fallback: np.ndarray         # int8 code into FALLBACKS

    def pattern_of(self, i: int) -> Pattern:
        return PATTERNS[int(self.pattern[i])]

    def fallback_of(self, i: int) -> str:
        return FALLBACKS[int(self.fallback[i])]


def periodic_band(n_samples: int, params: PatternParams) -> np.ndarray:
    """rfft bin indices of the daily harmonics (and weekly, when enabled) for this window."""
    window_s = n_samples * params.step_s
    top = n_samples // 2
    centres = [h * window_s / DAY_S for h in range(1, params.harmonics + 1)]
    if params.weekly and window_s >= 2 * WEEK_S:
        centres.append(window_s / WEEK_S)
    bins: set[int] = set()
    for c in centres:
        k = int(round(c))
        bins.update(range(max(1, k - params.bin_tolerance), min(top, k + params.bin_tolerance) + 1))
    return np.array(sorted(bins), dtype=np.intp)


def profile_patterns(matrix: np.ndarray, params: PatternParams = PatternParams()) -> PatternProfiles:
    """Classify every row of `matrix` (tenants × samples at `params.step_s`, NaN = missing).

    Rows are processed in chunks of `chunk_tenants` with one batched `rfft` per chunk, so
    memory stays bounded for thousands of month-long series.
    """
    import scipy.fft  # imported where used: SciPy costs a CLI call ~0.5 s

    x_all = np.asarray(matrix)
    if x_all.ndim != 2:
        raise ValueError(f"expected a 2-D tenants × samples matrix, got shape {x_all.shape}")
    n, m = x_all.shape
    out_pattern = np.full(n, _UNPREDICTABLE, dtype=np.int8)
    out_fallback = np.zeros(n, dtype=np.int8)
    average = np.full(n, np.nan)
    peak = np.full(n, np.nan)
    std = np.full(n, np.nan)
    share = np.zeros(n)
    valid = np.zeros(n, dtype=np.int64)
    if m == 0 or n == 0:
        out_fallback[:] = 1
        return PatternProfiles(out_pattern, average, peak, std, share, valid, out_fallback)
    band = periodic_band(m, params)
    t = np.arange(m, dtype=np.float64) - (m - 1) / 2.0
    t_norm = float(t @ t) or 1.0
    workers = os.cpu_count() or 1
    for lo in range(0, n, params.chunk_tenants):
        hi = min(n, lo + params.chunk_tenants)
        x = x_all[lo:hi]
        dtype = np.float32 if x.dtype == np.float32 else np.float64
        x = x.astype(dtype, copy=False)
        ok = ~np.isnan(x)
        cnt = ok.sum(axis=1)
        valid[lo:hi] = cnt
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(ok, x, 0).sum(axis=1, dtype=np.float64) / cnt
        centred = np.where(ok, x - mean[:, None].astype(dtype), 0).astype(dtype, copy=False)
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = np.sqrt((centred.astype(np.float64) ** 2).sum(axis=1) / cnt)
        average[lo:hi], std[lo:hi] = mean, sd
        peak[lo:hi] = _row_quantile(x, ok, cnt, params.peak_quantile)

        # detrend (least-squares line through the mean-filled, mean-removed series), then FFT
        slope = (centred @ t.astype(dtype)) / t_norm
        detrended = centred - slope[:, None].astype(dtype) * t.astype(dtype)
        spectrum = scipy.fft.rfft(detrended, axis=1, workers=workers)
        power = spectrum.real.astype(np.float64) ** 2 + spectrum.imag.astype(np.float64) ** 2
        total = power[:, 1:].sum(axis=1)
        in_band = power[:, band].sum(axis=1) if band.size else np.zeros(hi - lo)
        with np.errstate(invalid="ignore", divide="ignore"):
            chunk_share = np.where(total > 0, in_band / total, 0.0)

        pat = np.full(hi - lo, _UNPREDICTABLE, dtype=np.int8)
        fb = np.zeros(hi - lo, dtype=np.int8)
        enough = cnt >= params.min_samples
        with np.errstate(invalid="ignore", divide="ignore"):
            cv = np.where(mean > 0, sd / mean, np.inf)
        constant = enough & ((sd <= params.constant_max_std) | (cv <= params.constant_max_cv))
        testable = (
            enough
            & (cnt * params.step_s >= params.min_days_periodic * DAY_S)
            & ((m - cnt) <= params.max_missing_fraction * m)
        )
        periodic = testable & ~constant & (chunk_share >= params.periodic_min_share)
        pat[constant] = _CONSTANT
        pat[periodic] = _PERIODIC
        fb[cnt == 0] = 1
        fb[(cnt > 0) & ~enough] = 2
        fb[enough & ~constant & ~testable] = 3
        out_pattern[lo:hi], out_fallback[lo:hi] = pat, fb
        share[lo:hi] = np.where(testable, chunk_share, 0.0)
    return PatternProfiles(out_pattern, average, peak, std, share, valid, out_fallback)


def _row_quantile(x: np.ndarray, ok: np.ndarray, cnt: np.ndarray, q: float) -> np.ndarray:
    """Per-row linear-interpolated quantile of the valid entries (NaN for empty rows).

    Missing entries are set to -inf and sorted to the front, so row i's valid values occupy
    the last cnt[i] positions; one sort serves rows with any number of gaps.
    """
    m = x.shape[1]
    s = np.sort(np.where(ok, x, -np.inf), axis=1)
    pos = (m - cnt) + q * np.maximum(cnt - 1, 0)
    lo_i = np.clip(np.floor(pos).astype(np.intp), 0, m - 1)
    hi_i = np.clip(np.ceil(pos).astype(np.intp), 0, m - 1)
    lo_v = np.take_along_axis(s, lo_i[:, None], axis=1)[:, 0].astype(np.float64)
    hi_v = np.take_along_axis(s, hi_i[:, None], axis=1)[:, 0].astype(np.float64)
    frac = pos - np.floor(pos)
    with np.errstate(invalid="ignore"):
        out = lo_v + (hi_v - lo_v) * frac
    return np.where(cnt > 0, out, np.nan)

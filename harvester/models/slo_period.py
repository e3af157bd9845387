"""The period of a recurring job or pipeline from its submission times — Morpheus §4 (paper 002) — pure.

§4: "We derive the period P_j of a job j based on the submission times"; §6 places recurring
reservations over the LCM of the periods (a day), and jobs whose period does not divide it get
one-off reservations. A period is any regular spacing, found at one-second resolution or finer;
dividing the LCM is a separate property (`lcm_aligned`), never a condition for being periodic.

1. `base_spacing`: the spacing of which the gaps between consecutive submissions are near-whole
   multiples (a skipped run leaves a 2P gap, it does not make the job aperiodic): the median
   gap, or when that fails (a daily job with a missing day has gaps of 1 and 2 days, median
   1.5) each smaller gap, largest first. Regular: MAD/median of the per-period gaps at most
   `max_gap_cv`, at least half the gaps single periods, every multiple within `max_gap_cv` of a
   whole number — or, with its neighbour, summing to one (a late run between them).
2. `period_index`: each submission's period number n, gap by gap (the previous one's plus the
   gap's whole number of base spacings; a retry less than half a spacing after is in the same
   period), so an error in the base spacing never accumulates over a long history.
3. `fit_period`: one least-squares line t = φ_s + n·P through each series s (a job's submits; a
   pipeline's stages and its consumer's reads share P, each with its own φ_s): the series'
   slopes weighted by the inverse of their variances, σ from the MAD of the residuals (so a
   stage whose start inherits its upstream's jitter counts less). Robust: it starts from the
   median of the consecutive slopes, drops points further than 3σ from their series' line and
   refits until the kept points stop changing (a late run is not a change of period). The
   standard error of P shrinks with n^1.5: 240 hourly runs with ±2 s jitter give SE ≈ 1 ms
   (per series; the joint SE is their weighted mean, as the series share jitter).
4. `snap`: P becomes the nearest divisor of the LCM when it lies within `snap_sigmas` standard
   errors (as Student's t: with few runs σ is itself uncertain; +1 ms, the log's resolution):
   `lcm_aligned`. Else the nearest whole second within that; else the fit as is. So 90 s stays
   90 s (not a whole minute, but it divides a day), 3,598 s measured over ten days is not an
   hour, and a daily job whose submit time wanders by minutes, whose P is known only to ±30 s,
   is daily.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from harvester.models.morpheus_params import SloParams

RESOLUTION_S = 1e-3  # audit-log and RM timestamps are whole milliseconds
MAD_SIGMA = 1.4826  # MAD × this estimates σ for normal noise
OUTLIER_SIGMAS = 3.0
MAX_ROUNDS = 8


@dataclass(frozen=True)
class PeriodFit:
    period_s: float  # after snapping
    lcm_aligned: bool
    fitted_s: float  # the least-squares slope
    se_s: float  # its standard error
    used: int  # points kept (after dropping outliers)
    points: int


def _cv(values: np.ndarray) -> float:
    med = float(np.median(values))
    mad = float(np.median(np.abs(values - med)))
    return mad / med if med > 0 else (0.0 if mad == 0 else math.inf)


def base_spacing(submits: Sequence[float], params: SloParams) -> tuple[float | None, str]:
    """(the base spacing, "") or (None, why the submissions are not periodic) — module doc, 1."""
    gaps = np.diff(np.asarray(submits, dtype=float))
    raw = float(np.median(gaps)) if gaps.size else 0.0
    if raw <= 0:
        return None, "submissions are not spread in time"
    base, why = _regular(gaps, raw, params)
    for smaller in sorted({float(g) for g in gaps if 0 < g < raw}, reverse=True):
        if base is not None:
            break
        base, _ = _regular(gaps, smaller, params)
    return (base, "") if base is not None else (None, f"not periodic: {why}")


def _regular(gaps: np.ndarray, base: float, params: SloParams) -> tuple[float | None, str]:
    """(median per-period gap, "") or (None, why the gaps are not whole multiples of `base`).

    A run submitted late (or early) leaves a long gap and a short one whose SUM is a whole
    number of periods: such a pair is the exception, not irregularity."""
    k = np.maximum(1, np.round(gaps / base))
    per = gaps / k
    period = float(np.median(per))
    gap_cv = _cv(per)
    if gap_cv > params.max_gap_cv:
        return None, f"gaps between submissions vary (MAD/median {gap_cv:.2f} > {params.max_gap_cv})"
    if np.mean(k == 1) < 0.5:
        return None, f"fewer than half the gaps are one period ({period:.1f}s)"
    tol = params.max_gap_cv * period

    def whole(g: float) -> bool:
        return abs(g - max(1.0, round(g / period)) * period) <= tol

    for i in np.flatnonzero((k > 1) & (np.abs(gaps - k * period) > tol)):
        if not ((i + 1 < gaps.size and whole(gaps[i] + gaps[i + 1])) or (i > 0 and whole(gaps[i - 1] + gaps[i]))):
            return None, f"a gap of {gaps[i]:.1f}s is no whole number of periods ({period:.1f}s)"
    return period, ""


def period_index(submits: Sequence[float], base: float) -> np.ndarray:
    """Period numbers from 0, gap by gap (module doc, 2)."""
    gaps = np.diff(np.asarray(submits, dtype=float))
    return np.concatenate([[0], np.cumsum(np.floor(gaps / base + 0.5))]).astype(np.int64)


def fit_period(series: Sequence[tuple[np.ndarray, np.ndarray]], params: SloParams) -> PeriodFit | None:
    """One P through every (period numbers, epoch times) series (module doc, 3-4); None when no
    series spans two periods."""
    data = [(np.asarray(n, dtype=float), np.asarray(t, dtype=float) - float(t[0])) for n, t in series if len(t)]
    steps = [np.diff(t)[np.diff(n) > 0] / np.diff(n)[np.diff(n) > 0] for n, t in data]
    if not any(s.size for s in steps):
        return None
    slope = float(np.median(np.concatenate(steps)))  # a robust start: one late run moves no median
    keep: list[np.ndarray] | None = None
    for _ in range(MAX_ROUNDS):
        masks, var = _inliers(data, slope)
        weights = _weights(data, masks, var)
        if not weights.any():
            return None
        slope = float(sum(w * _series_slope(n[m], t[m]) for (n, t), m, w in zip(data, masks, weights) if w > 0)
                      / weights.sum())
        if keep is not None and all(np.array_equal(a, b) for a, b in zip(keep, masks)):
            break
        keep = masks
    if slope <= 0:
        return None
    # The series are not independent (a stage is submitted when the one before ends, so it
    # carries that one's jitter): the standard error is the weighted mean of theirs, the bound
    # for fully correlated series, not the smaller one independence would give.
    used = weights > 0
    se = float(np.sum(np.sqrt(weights[used])) / weights.sum())
    dof = min(int(m.sum()) - 2 for m, u in zip(masks, used) if u)
    period, aligned = snap(slope, se, params, dof)
    return PeriodFit(period, aligned, slope, se, sum(int(m.sum()) for m in masks), sum(t.size for _, t in data))


def _inliers(data: list[tuple[np.ndarray, np.ndarray]], slope: float) -> tuple[list[np.ndarray], list[float]]:
    """Per series: the points within 3 σ of its line at `slope`, and σ², σ from the MAD of all
    its residuals (robust, and it does not collapse when outliers leave few points)."""
    masks, var = [], []
    for n, t in data:
        r = t - slope * n
        r = r - np.median(r)
        sigma = MAD_SIGMA * float(np.median(np.abs(r)))
        masks.append(np.abs(r) <= OUTLIER_SIGMAS * sigma + RESOLUTION_S)
        var.append(max(sigma, RESOLUTION_S) ** 2)
    return masks, var


def _weights(data: list[tuple[np.ndarray, np.ndarray]], masks: list[np.ndarray], var: list[float]) -> np.ndarray:
    """Per series Sxx / σ² = 1 / its slope's variance; 0 for a series with fewer than 3 points
    kept (two points always lie on a line: they say nothing about the noise)."""
    out = []
    for (n, _), m, v in zip(data, masks, var):
        nc = n[m] - n[m].mean()
        out.append(float(nc @ nc) / v if m.sum() >= 3 else 0.0)
    return np.array(out)


def _series_slope(n: np.ndarray, t: np.ndarray) -> float:
    nc = n - n.mean()
    return float(nc @ (t - t.mean())) / float(nc @ nc)


@lru_cache(maxsize=8)
def _divisors(lcm_s: int) -> np.ndarray:
    small = [d for d in range(1, math.isqrt(lcm_s) + 1) if lcm_s % d == 0]
    return np.array(sorted(set(small + [lcm_s // d for d in small])), dtype=float)


def snap(fitted: float, se: float, params: SloParams, dof: int = 1_000_000) -> tuple[float, bool]:
    """(P, lcm_aligned) from the fitted slope, its standard error and the residuals' degrees of
    freedom (module doc, 4)."""
    tol = _sigmas(params.snap_sigmas, dof) * se + RESOLUTION_S
    divisors = _divisors(params.lcm_s)
    near = float(divisors[np.argmin(np.abs(divisors - fitted))])
    if abs(near - fitted) <= tol:
        return near, True
    whole = float(round(fitted))
    if whole >= 1 and abs(whole - fitted) <= tol:
        return whole, False
    return fitted, False


@lru_cache(maxsize=256)
def _sigmas(sigmas: float, dof: int) -> float:
    """`sigmas` normal standard errors as Student's t with `dof` degrees of freedom: the same
    confidence when σ itself is estimated from a few residuals (5 runs: 3 dof, 3σ -> 10.2)."""
    from scipy import stats

    return float(stats.t.ppf(stats.norm.cdf(sigmas), dof))


def phase(n: np.ndarray, t: np.ndarray, period: float) -> float:
    """The typical time of period 0: median of t − n·P (robust to a late run)."""
    return float(np.median(np.asarray(t, dtype=float) - np.asarray(n, dtype=float) * period))


def infer_period(submits: Sequence[float], params: SloParams) -> tuple[float | None, bool, str]:
    """(P, lcm_aligned, why not periodic) of one job from its sorted submit times."""
    base, why = base_spacing(submits, params)
    if base is None:
        return None, False, why
    fit = fit_period([(period_index(submits, base), np.asarray(submits, dtype=float))], params)
    if fit is None:
        return None, False, "submissions are not spread in time"
    return fit.period_s, fit.lcm_aligned, ""

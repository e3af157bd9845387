"""The three primary-tenant utilization patterns of OSDI'16 §3.2, fitted to real series and generated.

Paper 000 §3.2 finds three classes of primary tenants from the FFT of a tenant's average
server's CPU: periodic (a strong daily component), (roughly) constant, and unpredictable.
This module only serves the simulator's *generators*: it labels and fits real series so
synthetic tenants look like them. Harvester's own classification (FFT + k-means, §4.1) lives
in harvester/models and is not used here, so the simulator never grades a policy with the
policy's own model.

Model of one series (utilization fraction u(t), clipped to [0, 1]):

    u(t) = mean + a1 cos(2π t/day + φ1) + a2 cos(4π t/day + φ2)     (periodic only)
           + x(t)                 AR(1): x(t) = ar_phi x(t-1) + N(0, ar_sigma²) per 2-min step
           + spikes(t)            Poisson starts (spike_rate_per_h), heights ~ Exp(spike_height),
                                  lengths ~ Geometric(mean spike_len_s)   (unpredictable only)

`t` is absolute time (epoch seconds), so φ1 is the phase against UTC midnight and periodic
tenants generated for any start time keep the trace's time of day.
Classification thresholds (ours; the paper does not publish them): periodic when the power
within ±1 bin of the daily frequency and its first harmonic is >= 20 % of all non-DC power and
the standard deviation is >= 0.01; constant when the standard deviation is < 0.02 (two points
of utilization); unpredictable otherwise. On the Bitbrains 7-day cut this labels 41 periodic,
~330 constant and ~130 unpredictable VMs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
import numpy as np

from harvester.sim.tenants import Pattern

DAY_S = 86400.0
PERIODIC_POWER_FRACTION = 0.2
PERIODIC_MIN_STD = 0.01
CONSTANT_MAX_STD = 0.02


@dataclass(frozen=True, slots=True)
class PatternFit:
    """Fitted parameters of one series (see the module docstring for the model)."""

    pattern: Pattern
    mean: float
    a1: float = 0.0
    phi1: float = 0.0
    a2: float = 0.0
    phi2: float = 0.0
    ar_phi: float = 0.0
    ar_sigma: float = 0.0
    spike_rate_per_h: float = 0.0
    spike_height: float = 0.0
    spike_len_s: float = 0.0
    name: str = ""

    def to_dict(self) -> dict[str, float | str]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, float | str]) -> PatternFit:
        return PatternFit(**d)  # type: ignore[arg-type]


def _daily_terms(u: np.ndarray, step_s: float) -> tuple[int, np.ndarray, float]:
    """(daily FFT bin, spectrum, fraction of AC power near the daily frequency and its harmonic)."""
    n = u.shape[0]
    spec = np.fft.rfft(u - u.mean())
    power = np.abs(spec) ** 2
    total = float(power[1:].sum())
    kd = int(round(n * step_s / DAY_S))
    if kd < 1 or total <= 0:
        return kd, spec, 0.0
    near = sum(float(power[max(1, k - 1):k + 2].sum()) for k in (kd, 2 * kd) if k < power.shape[0])
    return kd, spec, near / total


def classify(u: np.ndarray, step_s: float) -> Pattern:
    """Label a utilization series periodic, constant or unpredictable (thresholds above)."""
    _, _, daily = _daily_terms(u, step_s)
    sd = float(u.std())
    if daily >= PERIODIC_POWER_FRACTION and sd >= PERIODIC_MIN_STD:
        return "periodic"
    if sd < CONSTANT_MAX_STD:
        return "constant"
    return "unpredictable"


def fit_series(u: np.ndarray, step_s: float, start_s: float = 0.0, name: str = "") -> PatternFit:
    """Fit the module's model to `u` sampled every `step_s` from absolute time `start_s`.

    Use whole days of data: the daily terms come from the FFT bin of the daily frequency.
    """
    u = np.asarray(u, dtype=np.float64)
    n = u.shape[0]
    if n < 8:
        raise ValueError(f"series {name!r} is too short to fit ({n} samples)")
    pattern = classify(u, step_s)
    mean = float(u.mean())
    t = start_s + np.arange(n) * step_s
    a1 = phi1 = a2 = phi2 = 0.0
    resid = u - mean
    if pattern == "periodic":
        kd, spec, _ = _daily_terms(u, step_s)
        terms = []
        for k in (kd, 2 * kd):
            if k < spec.shape[0]:
                amp, ph = float(2.0 * abs(spec[k]) / n), float(np.angle(spec[k]))
                # the FFT phase is against the first sample; make it against UTC midnight
                harmonic = k // kd
                ph_abs = ph - 2.0 * math.pi * harmonic * (start_s % DAY_S) / DAY_S
                terms.append((amp, math.remainder(ph_abs, 2 * math.pi)))
                resid = resid - amp * np.cos(2 * math.pi * harmonic * t / DAY_S + ph_abs)
        (a1, phi1), (a2, phi2) = terms[0], terms[1] if len(terms) > 1 else (0.0, 0.0)
    med = float(np.median(resid))
    mad = 1.4826 * float(np.median(np.abs(resid - med)))
    rate = height = length = 0.0
    base = resid
    if pattern == "unpredictable":
        spikes = resid > med + max(4.0 * mad, 0.05)
        starts = int(np.count_nonzero(spikes[1:] & ~spikes[:-1]) + int(spikes[0]))
        if starts:
            rate = starts / (n * step_s / 3600.0)
            height = float((resid[spikes] - med).mean())
            length = float(spikes.sum()) / starts * step_s
        base = np.where(spikes, med, resid)
    x = base - base.mean()
    sd = float(x.std())
    phi = 0.0
    if sd > 0 and n > 2:
        c = np.corrcoef(x[:-1], x[1:])[0, 1]
        phi = float(np.clip(c if np.isfinite(c) else 0.0, 0.0, 0.995))
    return PatternFit(pattern, mean, a1, phi1, a2, phi2, phi, sd * math.sqrt(1.0 - phi * phi),
                      rate, height, length, name)


def generate(fit: PatternFit, members: int, steps: int, step_s: float, start_s: float,
             rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """`members` series of `steps` samples (float32, in [0, 1]) following `fit`.

    Members share the deterministic part and the spikes (a tenant's load spike hits all its
    servers) and get independent AR(1) noise (load is not evenly balanced, OSDI'16 §3.2).
    `scale` multiplies the whole signal before clipping (explores utilization levels).
    """
    t = start_s + np.arange(steps) * step_s
    base = np.full(steps, fit.mean)
    if fit.pattern == "periodic":
        base += fit.a1 * np.cos(2 * math.pi * t / DAY_S + fit.phi1) + fit.a2 * np.cos(4 * math.pi * t / DAY_S + fit.phi2)
    # AR(1) noise with the model's per-step coefficient, converted to this step length
    ratio = step_s / 120.0
    phi = fit.ar_phi ** ratio if fit.ar_phi > 0 else 0.0
    stationary_sd = fit.ar_sigma / math.sqrt(max(1e-12, 1.0 - fit.ar_phi ** 2))
    innov = stationary_sd * math.sqrt(max(0.0, 1.0 - phi * phi))
    e = rng.standard_normal((members, steps)) * innov
    e[:, 0] = rng.standard_normal(members) * stationary_sd
    from scipy.signal import lfilter  # imported where used (start-up cost)

    noise = lfilter([1.0], [1.0, -phi], e, axis=1) if phi > 0 else e
    spikes = np.zeros(steps)
    if fit.spike_rate_per_h > 0 and fit.spike_height > 0:
        p_start = min(1.0, fit.spike_rate_per_h * step_s / 3600.0)
        mean_len = max(1.0, fit.spike_len_s / step_s)
        for k in np.flatnonzero(rng.random(steps) < p_start).tolist():
            length = int(rng.geometric(1.0 / mean_len))
            spikes[k:k + length] += rng.exponential(fit.spike_height)
    out = (base + spikes)[None, :] + noise
    return np.clip(out * scale, 0.0, 1.0).astype(np.float32)

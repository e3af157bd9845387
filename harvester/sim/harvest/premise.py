"""Where a scenario sits on Algorithm 1's premise dial: how much calmer its calmest capacity is.

OSDI'16 §4.1 ranks classes for long jobs constant > periodic > unpredictable "because
constant-utilization primary tenants with enough available resources are unlikely to take
resources away from the job during its execution". The gain of Algorithm 1 over placement
that ignores history (yarn-pt) therefore needs servers on which the primary does NOT rise
during a long job, next to servers on which it does. The dial measures that on the primary
the simulator actually plays (each server's series at the within-sample resolution,
`tenants.noise` included, drawn as `Simulation._noisy` draws it):

    rise_s(t) = max over t < t' <= t + W of u_s(t')  -  u_s(t)        (fraction of the cores)
    r_s       = 95th percentile over t of rise_s(t)
    contrast  = 1 - mean(r_s over the calmest third of the servers) / mean(r_s over all servers)
    calm share = share of servers with r_s <= F

`contrast` is the dial: the share of the primary's rise during a long job that steering long
jobs to the calmest third of the capacity avoids (0: every server rises alike, nothing to choose;
near 1: a third of the capacity stays still while the rest moves). A third is the share of
capacity the mechanism scenario gives its calm tenants. `calm share` is reported next to it.
W = `harvesting.job_length.default_long_s` (3,600 s: a long job lasts at least this long),
F = `harvesting.reserve.floor` (5 % of the cores: the smallest reserve the guard keeps); both are
the live configuration's defaults, not fitted here. The noise stream is seeded apart from the
run's own (same distribution, other draws).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from harvester.config_harvesting import HarvestingSettings
from harvester.sim.scenario import parse_scenario
from harvester.sim.setup import build_load

_DEFAULTS = HarvestingSettings()
WINDOW_S = float(_DEFAULTS.job_length.default_long_s)
FLOOR = float(_DEFAULTS.reserve.floor)
QUANTILE = 0.95


@dataclass(frozen=True)
class Premise:
    """A scenario's place on the dial, with the numbers behind it."""

    contrast: float              # the dial: 1 - mean r_s of the calmest third / mean r_s of all servers
    calm_share: float            # servers whose q95 rise within W is <= F
    rise_q95_median: float       # median over servers of that q95 rise (fraction of the cores)
    servers: int
    by_pattern: Mapping[str, float]  # calm share per generator/trace pattern label (ground truth)


def rises(util: np.ndarray, window_steps: int) -> np.ndarray:
    """rise[t, s] = max(u[t+1 .. t+window_steps, s]) - u[t, s] for every t with a full window."""
    if util.ndim != 2 or window_steps < 1 or util.shape[0] <= window_steps:
        raise ValueError(f"need a (time, servers) series longer than {window_steps} steps, got {util.shape}")
    ahead = np.lib.stride_tricks.sliding_window_view(util[1:], window_steps, axis=0).max(axis=-1)
    return ahead - util[: -window_steps]


def contrast_of(r: np.ndarray) -> float:
    """1 - mean of the smallest third of `r` / mean of `r` (0 when nothing rises)."""
    r = np.sort(np.asarray(r, dtype=np.float64))
    if r.size == 0 or r.mean() <= 0:
        return 0.0
    return 1.0 - float(r[: max(1, r.size // 3)].mean()) / float(r.mean())


def premise_of(scenario: Mapping[str, Any], *, where: str, overrides: Mapping[str, Any] | None = None,
               traces_dir: str | None = None, window_s: float = WINDOW_S, floor: float = FLOOR,
               seed_offset: int = 7) -> Premise:
    """Build the scenario's primary (the run's own tenant stream) and measure the dial."""
    sc = parse_scenario(copy.deepcopy(dict(scenario)), where=where, overrides=dict(overrides or {}))
    rng_tenants = np.random.default_rng(np.random.SeedSequence(sc.seed).spawn(6)[0])
    load = build_load(sc, rng_tenants, traces_dir, str(Path(where).resolve().parent), {})
    sub = sc.substeps
    fine_s = sc.step_s / sub
    noise_rng = np.random.default_rng([sc.seed, seed_offset])
    sigma = sc.tenants.noise.sigma
    base = np.stack([load.util_at(k) for k in range(load.steps)]).astype(np.float32)   # (steps, servers)
    u = np.repeat(base, sub, axis=0)
    if sigma > 0:
        u = np.clip(u * (1.0 + sigma * noise_rng.standard_normal(u.shape).astype(np.float32)), 0.0, 1.0)
    w = max(1, int(round(window_s / fine_s)))
    q = np.quantile(rises(u, w), QUANTILE, axis=0)
    calm = q <= floor
    labels = np.asarray([t.pattern for t in load.tenants], dtype=object)[load.tenant_of]
    by = {str(p): float(calm[labels == p].mean()) for p in sorted(set(labels.tolist()))}
    return Premise(contrast_of(q), float(calm.mean()), float(np.median(q)), int(calm.size), by)

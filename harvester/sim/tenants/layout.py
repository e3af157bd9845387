"""Primary tenants for N servers: tenant sizes, pattern mix, and each server's CPU series.

OSDI'16 §3.1: a primary tenant is an (environment, machine function) pair owning a group of
servers; §3.2: periodic tenants are few but hold ~40 % of servers, most tenants are roughly
constant, and ~75 % of servers run periodic or constant tenants. Defaults follow that
(`DEFAULT_MIX`): periodic 40 %, constant 35 %, unpredictable 25 % of SERVERS, and the
largest tenants are made periodic first so periodic tenants are a minority of tenants.

Servers from few series (docs/traces.md, "10,000 servers from 515 series"): each tenant
gets up to `members` source rows — K real series of its pattern grouped by similar mean
(or the tenant column of a generic trace), or K generated members of one fitted parameter
row; server j of a tenant follows row j mod K, starting at the tenant's day offset (a random
whole day of the trace, so tenants see different days but the same time of day), shifted by
its own phase jitter (uniform in ±`phase_jitter_s`). Rows shorter than the run repeat by whole
days. `PrimaryLoad.util_at(k)` then reads all N servers' utilization at step k in one gather.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from harvester.sim.tenants import DEFAULT_MIX, PATTERNS, Pattern
from harvester.sim.tenants.patterns import DAY_S, PatternFit, classify, generate
from harvester.sim.traces.utilization import UtilSeries, whole_days


@dataclass(frozen=True, slots=True)
class Tenant:
    """One primary tenant. `pattern` is the generator's (or trace classifier's) label: ground
    truth for reports, not something a policy is told."""

    index: int
    name: str
    environment: str
    machine_function: str
    pattern: Pattern
    servers: int
    source: str


@dataclass(eq=False)
class PrimaryLoad:
    """Every server's primary CPU utilization on a `step_s` grid, steps -history..horizon."""

    step_s: float
    history_steps: int
    steps: int
    rows: np.ndarray
    row_len: np.ndarray
    row_of: np.ndarray
    offset_of: np.ndarray
    tenant_of: np.ndarray
    tenants: tuple[Tenant, ...]

    def __post_init__(self) -> None:
        self._len_of = self.row_len[self.row_of]

    @property
    def servers(self) -> int:
        return int(self.row_of.shape[0])

    def util_at(self, k: int) -> np.ndarray:
        """Utilization (float32, [0, 1]) of every server at step k (k < 0 reads history)."""
        if not -self.history_steps <= k < self.steps:
            raise IndexError(f"step {k} outside -{self.history_steps}..{self.steps - 1}")
        col = (self.offset_of + (self.history_steps + k)) % self._len_of
        return self.rows[self.row_of, col]

    def tenant_means(self, util: np.ndarray) -> np.ndarray:
        """Average server utilization per tenant (the paper's "average server", §3.2)."""
        sums = np.bincount(self.tenant_of, weights=util, minlength=len(self.tenants))
        sizes = np.bincount(self.tenant_of, minlength=len(self.tenants))
        return (sums / np.maximum(sizes, 1)).astype(np.float32)

    def mean_utilization(self, samples: int = 48) -> float:
        """Mean utilization over the horizon (a few evenly spaced steps; for load targets)."""
        ks = np.linspace(0, self.steps - 1, num=min(samples, self.steps)).astype(int)
        return float(np.mean([self.util_at(int(k)).mean() for k in ks]))


def tenant_sizes(servers: int, count: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """`count` tenant sizes summing to `servers`, each >= 1, lognormal(0, sigma) shaped."""
    if not 1 <= count <= servers:
        raise ValueError(f"need 1 <= tenants <= servers, got {count} tenants for {servers} servers")
    w = rng.lognormal(0.0, sigma, count)
    extra = (servers - count) * w / w.sum()
    sizes = 1 + np.floor(extra).astype(np.int64)
    short = servers - int(sizes.sum())
    if short:
        sizes[np.argsort(-(extra - np.floor(extra)), kind="stable")[:short]] += 1
    return sizes


def assign_patterns(sizes: np.ndarray, mix: Mapping[str, float], rng: np.random.Generator) -> list[Pattern]:
    """Patterns per tenant so each pattern's share of SERVERS is close to `mix` (§3.2, Fig. 2-3).

    The largest tenants become periodic (few tenants, many servers); the rest are shuffled
    and fill the unpredictable share; everything left is constant (most tenants).
    """
    total = float(sizes.sum())
    out: list[Pattern] = ["constant"] * len(sizes)
    taken = 0
    for i in np.argsort(-sizes, kind="stable").tolist():
        if taken + sizes[i] / 2 > mix.get("periodic", 0.0) * total:
            break
        out[i], taken = "periodic", taken + int(sizes[i])
    rest = [i for i in rng.permutation(len(sizes)).tolist() if out[i] != "periodic"]
    taken = 0
    for i in rest:
        if taken + sizes[i] / 2 > mix.get("unpredictable", 0.0) * total:
            continue
        out[i], taken = "unpredictable", taken + int(sizes[i])
    return out


@dataclass(frozen=True, slots=True)
class TraceRows:
    """Real series resampled to the grid, cut to whole days, grouped and labelled."""

    rows: list[np.ndarray]
    start_s: list[float]
    groups: dict[str, list[list[int]]]
    names: list[str]


def trace_rows(series: Sequence[UtilSeries], step_s: float, members: int, rng: np.random.Generator) -> TraceRows:
    """Resample, keep whole days (>= 1), group: by `tenant` column if given, else by similar mean."""
    rows, starts, names, labels = [], [], [], []
    for s in series:
        u = whole_days(s, step_s)
        if u is None:
            continue
        rows.append(u)
        starts.append(s.origin_s + float(s.times_s[0]))
        names.append(s.name)
        labels.append(s.tenant)
    groups: dict[str, list[list[int]]] = {p: [] for p in PATTERNS}
    by_label: dict[str, list[int]] = {}
    loose: list[int] = []
    for i, lab in enumerate(labels):
        (by_label.setdefault(lab, []) if lab is not None else loose).append(i)
    chunks = [idx for _, idx in sorted(by_label.items())]
    order = sorted(loose, key=lambda i: (float(rows[i].mean()), names[i]))
    chunks += [order[j:j + members] for j in range(0, len(order), members)]
    for idx in chunks:
        length = min(rows[i].shape[0] for i in idx)
        avg = np.mean([rows[i][:length] for i in idx], axis=0)
        groups[classify(avg, step_s)].append(idx)
    for p in PATTERNS:
        rng.shuffle(groups[p])  # type: ignore[arg-type]
    return TraceRows(rows, starts, groups, names)


def build_primary_load(
    *,
    servers: int,
    tenants: int,
    step_s: float,
    horizon_s: float,
    history_s: float,
    start_s: float,
    rng: np.random.Generator,
    fits: Mapping[str, Sequence[PatternFit]],
    traces: TraceRows | None = None,
    mix: Mapping[str, float] = DEFAULT_MIX,
    size_sigma: float = 1.0,
    members: int = 4,
    phase_jitter_s: float = 600.0,
    mean_utilization: Mapping[str, float] | None = None,
    utilization_scale: float = 1.0,
    allow_generated: bool = False,
) -> PrimaryLoad:
    """Build tenants and every server's series (see the module docstring for the method)."""
    steps = int(np.ceil(horizon_s / step_s))
    hist = int(np.ceil(history_s / step_s))
    jit = int(round(phase_jitter_s / step_s))
    day = int(round(DAY_S / step_s))
    sizes = tenant_sizes(servers, tenants, size_sigma, rng)
    patterns = assign_patterns(sizes, mix, rng)
    rows: list[np.ndarray] = []
    row_len: list[int] = []
    row_of = np.empty(servers, dtype=np.int64)
    offset_of = np.empty(servers, dtype=np.int64)
    tenant_of = np.empty(servers, dtype=np.int32)
    out: list[Tenant] = []
    next_group = {p: 0 for p in PATTERNS}
    trace_row: dict[int, int] = {}
    pos = 0
    gen_len = hist + steps + 2 * jit
    for t, (size, pattern) in enumerate(zip(sizes.tolist(), patterns)):
        k = min(size, members)
        groups = traces.groups[pattern] if traces is not None else []
        jitter = rng.integers(0, 2 * jit + 1, size) if jit else np.zeros(size, dtype=np.int64)
        if groups:
            assert traces is not None
            used = groups[next_group[pattern] % len(groups)][:k]
            next_group[pattern] += 1
            day_off = int(rng.integers(0, 7)) * day
            for i in used:
                if i not in trace_row:  # a real series is stored once, however many servers follow it
                    trace_row[i] = len(rows)
                    rows.append(traces.rows[i])
                    row_len.append(traces.rows[i].shape[0])
            # align each row's time of day with the run's: column of step 0 has start_s's time of day
            shift = [int(round(((start_s - traces.start_s[i]) % DAY_S) / step_s)) for i in used]
            member = np.arange(size) % len(used)
            row_of[pos:pos + size] = np.asarray([trace_row[i] for i in used])[member]
            offset_of[pos:pos + size] = (np.asarray(shift)[member] + day_off - hist - jit + jitter)
            source = "trace:" + ",".join(traces.names[i] for i in used)
        else:
            if traces is not None and not allow_generated:
                raise ValueError(f"no real series of the {pattern} pattern for tenant {t} (the traces classify none as "
                                 f"{pattern}): set tenants.allow_generated to use a fitted generator instead")
            table = fits.get(pattern) or []
            if not table:
                raise ValueError(f"no fitted parameters for the {pattern} pattern")
            fit = table[int(rng.integers(0, len(table)))]
            block = generate(fit, k, gen_len, step_s, start_s - (hist + jit) * step_s, rng)
            first = len(rows)
            rows.extend(block)
            row_len.extend([gen_len] * k)
            row_of[pos:pos + size] = first + np.arange(size) % k
            offset_of[pos:pos + size] = jitter
            source = f"generator:{pattern} fitted to {fit.name or 'a real series'}"
        tenant_of[pos:pos + size] = t
        # neutral names: the pattern is ground truth for reports, not a hint to policies
        env, function = f"env{t:04d}", f"mf{int(rng.integers(0, 8))}"
        out.append(Tenant(t, f"{env}/{function}", env, function, pattern, size, source))
        pos += size
    width = max(row_len)
    matrix = np.zeros((len(rows), width), dtype=np.float32)
    for i, r in enumerate(rows):
        matrix[i, : r.shape[0]] = r
    lengths = np.asarray(row_len, dtype=np.int64)
    load = PrimaryLoad(step_s, hist, steps, matrix, lengths, row_of, np.mod(offset_of, lengths[row_of]), tenant_of, tuple(out))
    _rescale(load, patterns, mean_utilization, utilization_scale)
    return load


def _rescale(load: PrimaryLoad, patterns: Sequence[Pattern], targets: Mapping[str, float] | None, scale: float) -> None:
    """Bring each pattern's servers to `targets[pattern]` mean utilization over the run, never clipping.

    Multiplying and then clipping at 100 % (the old way) cannot reach a high level with spiky
    series: the clipped peaks lose what the multiplication added (a 0.8 target reached 0.43).
    Instead every series (row) r of the pattern is moved by one common offset d and, only where
    it would leave [0, 1], its swings are narrowed around its own mean:

        μ_r = m_r + d (kept inside [0.001, 0.999]),  s_r = min(1, (1 − μ_r) / (max_r − m_r), μ_r / (m_r − min_r))
        u' = μ_r + s_r (u − m_r)

    with m_r the row's mean over the run's steps (as its servers read it), min/max over the whole
    row (history included). The run's mean is then Σ servers μ_r / servers; d solves it equal to
    the target (bisection). Tenants keep their order and their shape; at high levels the swings
    of the spikiest series shrink, which is what a mean that high leaves room for.
    """
    if scale != 1.0:
        np.clip(load.rows * scale, 0.0, 1.0, out=load.rows)
    if not targets:
        return
    ks = np.unique(np.linspace(0, load.steps - 1, num=min(240, load.steps)).astype(int))
    server_mean = np.mean([load.util_at(int(k)) for k in ks], axis=0, dtype=np.float64)
    server_pattern = np.asarray(patterns, dtype=object)[load.tenant_of]
    n_rows = load.rows.shape[0]
    for p, target in targets.items():
        servers = server_pattern == p
        if not servers.any():
            continue
        weight = np.bincount(load.row_of[servers], minlength=n_rows).astype(np.float64)
        rows = np.flatnonzero(weight)
        mean = np.bincount(load.row_of[servers], weights=server_mean[servers], minlength=n_rows)[rows] / weight[rows]
        w = weight[rows]

        def level(d: float) -> float:
            return float(np.sum(w * np.clip(mean + d, LEVEL_EPS, 1 - LEVEL_EPS)) / w.sum())

        lo, hi = -1.0, 1.0
        if not level(lo) <= target <= level(hi):
            raise ValueError(f"a {p} mean utilization of {target:.0%} cannot be reached")
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if level(mid) < target else (lo, mid)
        d = (lo + hi) / 2
        for r, m in zip(rows.tolist(), mean.tolist()):
            row = load.rows[r, : load.row_len[r]]
            mu = min(1 - LEVEL_EPS, max(LEVEL_EPS, m + d))
            top, bottom = float(row.max()), float(row.min())
            s = 1.0
            if top > m:
                s = min(s, (1 - mu) / (top - m))
            if bottom < m:
                s = min(s, mu / (m - bottom))
            row[:] = np.clip(mu + s * (row - m), 0.0, 1.0)  # the clip only absorbs float rounding


LEVEL_EPS = 0.001

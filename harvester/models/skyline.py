"""Job resource model: the skyline LP of Morpheus §5 (paper 002) — pure fit/predict.

Input: N past runs of one periodic job, each a skyline s_{i,k} (resource in use during step k,
runs aligned at their start, shorter runs padded with 0 up to the longest, K steps). Output:
the reservation s = (s_1..s_K) minimising (§5, "Over-allocation penalty" ... "Avoiding lazy
solutions")

    α·A_o(s) + (1−α)·A_u(s) + β·ε
    A_o(s) = 1/N Σ_i Σ_k (s_k − s_ik)+                       average over-allocation
    D_ik   = (D_i,k−1 + s_ik − s_k)+, D_i0 = 0;  A_u = 1/N Σ_i D_iK     debt left at the end
    1/N Σ_i Σ_k (s_ik − s_k)+ / Σ_k s_ik ≤ ε                  the regularization constraint
    β = beta_fraction · V, V = optimum of the same problem without the β·ε term.

Runs of one container size (`RunSkyline.container`, the same for every run; the Resource
Estimator's case, whose runs are all <1024 MB, 1 vcore>) are fitted ONCE, on their container
counts, and the skyline is that container × the whole containers reserved: memory and vcores
are the same containers, as the Estimator answers. (Fitting memory as its own LP in MB with a
fixed β weighs ε 1,024× less than in containers and finds another skyline: memory differed from
1,024 × containers at 12 of the 63 steps of the Estimator's own input.) Otherwise (containers of
several sizes, or unknown, as the RM's polled apps) it is solved once per resource (memory MB,
vcores): the objective is separable by resource, so the joint problem is two independent LPs
(each with its own ε and V), each rounded UP to its quantum. The Estimator truncates with an int
cast; here results are never below the fitted value (beyond 1e-6 quanta of solver noise).

The LP (HiGHS through highspy, with a time limit) is the paper's, reformulated losslessly:
- D_iK = max(0, max_j Σ_{k≥j}(s_ik − s_k)) (Lindley's recursion unrolled), so with suffix sums
  y_j = Σ_{k≥j} s_k the debt rows read D_i + y_j ≥ S_ij (S_ij = Σ_{k≥j} s_ik): two non-zeros each.
  Only the rows that bind are needed: they are generated (row generation) — solve, add for
  every run its most violated row, re-solve warm — until none is violated. The result is an
  optimum of the full LP (every omitted row holds).
- Σ_i (s_k − s_ik)+ and Σ_i (s_ik − s_k)+/C_i are convex piecewise-linear in s_k alone with
  breakpoints at the s_ik: s_k is written as a sum of bounded segment variables whose cost
  is the slope on that segment (α/N·#runs below, −β/N·Σ 1/C_i of runs above). Convexity makes
  the LP fill cheaper segments first, so this equals the (·)+ terms exactly.
The direct formulation (the Estimator's, re-implemented in the fixtures' lp-reference.py) gives
the same optimum: tests/models/test_skyline_lp.py checks both on the same data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from highspy import HighsModelStatus, MatrixFormat, kHighsInf
from highspy._core import HighsLp, _Highs  # the public `Highs` wrapper prints a banner to stdout when built

from harvester.domain import Resources
from harvester.models.morpheus_params import SkylineParams  # noqa: F401  (re-exported: the §5 knobs)

RESOURCES = ("memory_mb", "vcores")
ROWS_PER_ROUND = 8  # debt rows added per run and row-generation round


class SkylineFitError(ValueError):
    """The runs cannot be fitted (bad input, too few runs, or the solver stopped early)."""




@dataclass(frozen=True, eq=False)
class RunSkyline:
    """One run's usage per step (memory MB and vcores in use during step k, from the run's start).
    `container`: the one container size the run used, when known (then memory and vcores must
    count the same containers, possibly fractional: a mean over a step)."""

    run_id: str
    step_s: float
    memory_mb: np.ndarray
    vcores: np.ndarray
    container: Resources | None = None

    def __post_init__(self) -> None:
        mem = np.asarray(self.memory_mb, dtype=float)
        vc = np.asarray(self.vcores, dtype=float)
        if mem.ndim != 1 or mem.shape != vc.shape:
            raise SkylineFitError(f"run {self.run_id}: memory and vcores must be 1-D of equal length")
        if not (np.all(np.isfinite(mem)) and np.all(np.isfinite(vc))) or mem.min(initial=0) < 0 or vc.min(initial=0) < 0:
            raise SkylineFitError(f"run {self.run_id}: usage must be finite and >= 0")
        if self.step_s <= 0:
            raise SkylineFitError(f"run {self.run_id}: step_s must be > 0")
        if self.container is not None:
            box = self.container
            if box.memory_mb <= 0 or box.vcores <= 0:
                raise SkylineFitError(f"run {self.run_id}: container {box} must be positive")
            off = np.flatnonzero(~np.isclose(mem / box.memory_mb, vc / box.vcores, rtol=1e-9, atol=1e-9))
            if off.size:
                k = int(off[0])
                raise SkylineFitError(f"run {self.run_id}: memory and vcores are not the same number of {box} "
                                      f"containers at step {k} ({mem[k]:g} MB, {vc[k]:g} vcores)")
        object.__setattr__(self, "memory_mb", mem)
        object.__setattr__(self, "vcores", vc)

    def series(self, resource: str) -> np.ndarray:
        if resource == "containers" and self.container is not None:
            return self.vcores / self.container.vcores
        return self.memory_mb if resource == "memory_mb" else self.vcores


@dataclass(frozen=True, eq=False)
class LpResult:
    """One resource's optimum: `fitted` (continuous s_k) and the objective's terms at it."""

    fitted: np.ndarray
    objective: float
    over: float  # A_o
    under: float  # A_u
    eps: float  # the regularization term's value 1/N Σ_i Σ_k (s_ik − s_k)+ / C_i
    v: float  # first-solve optimum (nan when β was fixed)
    beta: float
    rounds: int  # LP solves including row-generation rounds
    rows: int  # debt rows generated (out of N·K)


@dataclass(frozen=True, eq=False)
class SkylineModel:
    """The fitted job resource model R*: per step, memory MB and vcores to reserve (§5).
    `fits` per LP solved: "containers" (runs of one `container` size), else "memory_mb" and
    "vcores"."""

    step_s: float
    runs: int
    memory_mb: np.ndarray  # int64, rounded up
    vcores: np.ndarray  # int64, rounded up
    fits: dict[str, LpResult] = field(repr=False)
    container: Resources | None = None

    @property
    def steps(self) -> int:
        return int(self.memory_mb.size)


def objective_terms(x: np.ndarray, usage: np.ndarray, alpha: float, beta: float) -> tuple[float, float, float, float]:
    """(objective, A_o, A_u, ε) of reservation `x` against runs `usage` (N×K), straight from §5's
    definitions (the debt recursion stepped explicitly)."""
    x = np.asarray(x, dtype=float)
    c = np.asarray(usage, dtype=float)
    n = c.shape[0]
    over = float(np.clip(x[None, :] - c, 0, None).sum() / n)
    debt = np.zeros(n)
    for k in range(c.shape[1]):
        debt = np.maximum(0.0, debt + c[:, k] - x[k])
    under = float(debt.sum() / n)
    eps = float((np.clip(c - x[None, :], 0, None).sum(axis=1) / c.sum(axis=1)).sum() / n)
    return alpha * over + (1 - alpha) * under + beta * eps, over, under, eps


def fit_skyline(runs: Sequence[RunSkyline], params: SkylineParams = SkylineParams()) -> SkylineModel:
    """Fit R* for memory and vcores from `runs` (all with the same step); see the module doc."""
    if len(runs) < params.min_runs:
        raise SkylineFitError(f"{len(runs)} runs < min_runs {params.min_runs}")
    steps = {r.step_s for r in runs}
    if len(steps) != 1:
        raise SkylineFitError(f"runs have different steps: {sorted(steps)}")
    step_s = steps.pop()
    boxes = {r.container for r in runs}
    box = boxes.pop() if len(boxes) == 1 else None
    if box is not None:  # one container size: the same whole containers for memory and vcores
        fit = _fit_one(runs, "containers", params)
        n = round_up(fit.fitted, 1)
        return SkylineModel(step_s, len(runs), n * box.memory_mb, n * box.vcores, {"containers": fit}, box)
    fits: dict[str, LpResult] = {}
    rounded: dict[str, np.ndarray] = {}
    quanta = {"memory_mb": params.memory_quantum_mb, "vcores": params.vcores_quantum}
    for res in RESOURCES:
        fits[res] = _fit_one(runs, res, params)
        rounded[res] = round_up(fits[res].fitted, quanta[res])
    return SkylineModel(step_s, len(runs), rounded["memory_mb"], rounded["vcores"], fits)


def _fit_one(runs: Sequence[RunSkyline], res: str, params: SkylineParams) -> LpResult:
    usage = usage_matrix([r.series(res) for r in runs])
    live = usage.sum(axis=1) > 0
    if not live.all():
        idle = [r.run_id for r, ok in zip(runs, live) if not ok]
        raise SkylineFitError(f"runs with no {res} in use cannot be fitted: {idle}")
    return solve_skyline_lp(usage, params.alpha, beta=params.beta, beta_fraction=params.beta_fraction,
                            time_limit_s=params.time_limit_s)


def usage_matrix(series: Sequence[np.ndarray]) -> np.ndarray:
    """Runs aligned at their start and padded with 0 to the longest (N×K, float)."""
    k = max((len(s) for s in series), default=0)
    if k == 0:
        raise SkylineFitError("no steps to fit")
    out = np.zeros((len(series), k))
    for i, s in enumerate(series):
        out[i, : len(s)] = s
    return out


def round_up(fitted: np.ndarray, quantum: int) -> np.ndarray:
    """Smallest multiple of `quantum` at or above each value (1e-6 quanta of solver noise tolerated)."""
    return (np.ceil(np.asarray(fitted, dtype=float) / quantum - 1e-6).clip(min=0) * quantum).astype(np.int64)


def solve_skyline_lp(usage: np.ndarray, alpha: float, *, beta: float | None = None, beta_fraction: float = 0.1,
                     time_limit_s: float = 30.0) -> LpResult:
    """The §5 LP for one resource over `usage` (N×K): β fixed, or β = beta_fraction·V."""
    c = np.asarray(usage, dtype=float)
    if c.ndim != 2 or c.size == 0 or np.any(c.sum(axis=1) <= 0):
        raise SkylineFitError("usage must be N×K with every run using something")
    scale = float(c.max())
    cn = c / scale  # conditioning: HiGHS tolerances are absolute; A_o, A_u scale with the unit, ε does not
    lp = _SegmentLp(cn, alpha, time_limit_s)
    if beta is None:
        v = lp.solve(0.0)
        beta_n = beta_fraction * v  # V, and hence β, is in normalised units, as the solve
        v *= scale
    else:
        v, beta_n = float("nan"), beta / scale
    lp.solve(beta_n)
    x = lp.reservation() * scale
    beta_eff = beta if beta is not None else beta_n * scale
    obj, over, under, eps = objective_terms(x, c, alpha, beta_eff)
    return LpResult(x, obj, over, under, eps, v, beta_eff, lp.rounds, lp.debt_rows)


class _SegmentLp:
    """The LP of the module doc on normalised usage, kept in one HiGHS instance across solves."""

    def __init__(self, c: np.ndarray, alpha: float, time_limit_s: float) -> None:
        self.c, self.alpha, self.limit = c, alpha, time_limit_s
        n, k = c.shape
        self.n, self.k = n, k
        # Segments of s_k between consecutive distinct values of column k (sorted), then [max, ∞).
        order = np.argsort(c, axis=0, kind="stable")
        srt = np.take_along_axis(c, order, axis=0)
        lo = np.vstack([np.zeros((1, k)), srt])  # (n+1)×k
        hi = np.vstack([srt, np.full((1, k), np.inf)])
        keep = hi > lo
        self.seg_step = np.broadcast_to(np.arange(k), (n + 1, k))[keep]
        width = (hi - lo)[keep]
        m_index = np.broadcast_to(np.arange(n + 1)[:, None], (n + 1, k))[keep]
        # On a positive-width segment m (between sorted positions m-1 and m), exactly m runs lie
        # at or below it (over-allocated) and the runs at sorted positions >= m lie above it.
        self.seg_over = alpha / n * m_index
        inv_total = 1.0 / c.sum(axis=1)
        above = np.vstack([np.cumsum(inv_total[order][::-1], axis=0)[::-1], np.zeros((1, k))])
        self.seg_above = above[keep] / n  # Σ_{runs above} 1/C_i / N, times β gives the slope's magnitude
        nz = self.seg_step.size
        self.iy, self.id = nz, nz + k
        ncol = nz + k + n
        # Rows 0..k-1: y_j − y_{j+1} − Σ_m z_{j,m} = 0 (y_k = 0).
        rows = np.concatenate([np.arange(k), np.arange(k - 1), self.seg_step])
        cols = np.concatenate([self.iy + np.arange(k), self.iy + np.arange(1, k), np.arange(nz)])
        vals = np.concatenate([np.ones(k), -np.ones(k - 1), -np.ones(nz)])
        a = sp.csc_matrix((vals, (rows, cols)), shape=(k, ncol))
        model = HighsLp()
        model.num_col_, model.num_row_ = ncol, k
        model.col_cost_ = np.concatenate([self.seg_over, np.zeros(k), np.full(n, (1 - alpha) / n)])
        model.col_lower_ = np.zeros(ncol)
        model.col_upper_ = np.concatenate([np.where(np.isinf(width), kHighsInf, width), np.full(k + n, kHighsInf)])
        model.row_lower_ = np.zeros(k)
        model.row_upper_ = np.zeros(k)
        model.a_matrix_.format_ = MatrixFormat.kColwise
        model.a_matrix_.start_ = a.indptr
        model.a_matrix_.index_ = a.indices
        model.a_matrix_.value_ = a.data
        self.h = _Highs()
        self.h.setOptionValue("output_flag", False)
        # HiGHS's presolve spends seconds on the many parallel segment columns and removes
        # nothing useful; the warm-started row-generation rounds need the original model anyway.
        self.h.setOptionValue("presolve", "off")
        self.h.setOptionValue("run_crossover", "on")
        self.h.passModel(model)
        self.suffix = np.cumsum(c[:, ::-1], axis=1)[:, ::-1]  # S_ij
        self.tol = 1e-9 * max(1.0, float(self.suffix.max()))
        self.rounds = 0
        self.debt_rows = 0
        self._add_debt_rows(np.arange(n), np.zeros(n, dtype=int))  # the whole-run row binds most often

    def _add_debt_rows(self, runs: np.ndarray, js: np.ndarray) -> None:
        m = runs.size
        idx = np.column_stack([self.id + runs, self.iy + js]).ravel().astype(np.int32)
        self.h.addRows(m, self.suffix[runs, js], np.full(m, kHighsInf), 2 * m,
                       (2 * np.arange(m)).astype(np.int32), idx, np.ones(2 * m))
        self.debt_rows += m

    def solve(self, beta: float) -> float:
        """Optimum of the LP with this β (normalised units, including the constant β·ε at s = 0)."""
        nz = self.seg_step.size
        self.h.changeColsCost(nz, np.arange(nz, dtype=np.int32), self.seg_over - beta * self.seg_above)
        while True:
            left = self.limit - self.h.getRunTime()
            if left <= 0:
                raise SkylineFitError(f"skyline LP: time limit {self.limit}s reached after {self.rounds} solves")
            self.h.setOptionValue("time_limit", left)
            # From scratch the interior point method is several times faster than simplex here;
            # its crossover leaves a basis, from which every later round re-solves warm by simplex.
            self.h.setOptionValue("solver", "ipm" if self.rounds == 0 else "simplex")
            self.h.run()
            self.rounds += 1
            status = self.h.getModelStatus()
            if status != HighsModelStatus.kOptimal:
                raise SkylineFitError(f"skyline LP: HiGHS stopped with {self.h.modelStatusToString(status)} "
                                      f"after {self.rounds} solves ({self.h.getRunTime():.2f}s)")
            sol = np.asarray(self.h.getSolution().col_value)
            y, d = sol[self.iy:self.id], sol[self.id:]
            gap = self.suffix - y[None, :] - d[:, None]
            # Per run, the ROWS_PER_ROUND most violated rows (fewer rounds than one at a time).
            top = min(ROWS_PER_ROUND, self.k)
            js = np.argpartition(-gap, top - 1, axis=1)[:, :top].ravel()
            runs = np.repeat(np.arange(self.n), top)
            viol = gap[runs, js] > self.tol
            if not viol.any():
                return float(self.h.getInfo().objective_function_value) + beta
            self._add_debt_rows(runs[viol], js[viol])

    def reservation(self) -> np.ndarray:
        sol = np.asarray(self.h.getSolution().col_value)
        x = np.bincount(self.seg_step, weights=sol[: self.seg_step.size], minlength=self.k)
        return np.clip(x, 0.0, None)

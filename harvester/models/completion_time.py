"""C(p, a): a job's remaining time at progress p with a guaranteed containers (Jockey §4.1) — pure.

§4.1: "For each SLO job, we estimate C(p, a) – a random variable denoting the remaining time to
complete the job when the job has made progress p and is allocated a tokens ... We estimate the
distribution of C(p, a) by repeatedly simulating the job at different allocations. From each
simulation, say at allocation a that finishes in time T, we compute for all discrete t ∈ [0, T]
the progress of the job p_t at time t and the remaining time to completion t_c = T − t ...
t_c is one sample from the distribution of C(p_t, a)."

`precompute` does exactly that with the simulator of models/job_sim.py and the progress
indicator of models/progress.py:
- `runs` runs per allocation level; run r uses the same draws at every level (common random
  numbers), so differences between levels come from the allocation, not from luck;
- t is sampled every Δ_a = (run 0's makespan at a) / `samples_per_run` seconds, the same Δ for
  every run at that level, so a run that takes longer contributes more samples (the paper's
  "all discrete t");
- samples are binned by p into `p_bins` equal bins and stored as quantiles: `values[a, p, q]`
  (float32; 50 levels × 100 bins × 14 quantiles ≈ 280 kB). A bin no run visited takes the
  value of the nearest lower bin (more time left: the conservative side);
- EACH RUN WEIGHS THE SAME in every bin it visits: its samples there share a weight of 1
  (weighted quantiles). Sampling every Δ seconds otherwise lets a run that stalls in a bin — a
  long one-task stage, a straggler — contribute in proportion to how long it stalled: one run
  in a hundred whose first task took 10× its median filled most of bin 0 and set its 70th to
  100th percentiles (docs/evaluation/jockey.md, "mechanism"). C(p, a) is a distribution over
  runs of the job at progress p; the samples of one run are one realization, not many;
- C must not grow with a. A greedy list scheduler can finish later with more containers
  (Graham's anomalies) and sampling adds noise, so each quantile is made non-increasing in a by
  raising every level to the largest value at any larger level (conservative: it never promises
  more from fewer containers); `raised_cells` counts the cells this changed.

`AmdahlModel` is the alternative of §4.1: "if the serial part of a program takes time S ... and
the parallel part takes time P, then running the program with N processors takes S + P/N",
with S the remaining critical path and P the remaining work minus it. The staged paper text
stops in the middle of the formula for S_t; we use S_t = max over unfinished stages s of L_s,
L_s = l_s + max over children L_c, l_s the longest task of s (init and runtime maxima), and
P_t = max(0, Σ_s (1 − f_s) T_s − S_t), T_s the stage's expected container-seconds.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from harvester.models.job_model import JobModel
from harvester.models.job_sim import CompiledJob, draw, simulate
from harvester.models.progress import ProgressIndicator, total_work_with_queue

DEFAULT_QUANTILES = (0.1, 0.25, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.925, 0.95, 0.975, 0.99, 1.0)


class CompletionPredictor(Protocol):
    """Remaining time per allocation level, from per-stage completed task counts."""

    name: str
    allocations: np.ndarray

    def remaining(self, done: np.ndarray, quantile: float) -> np.ndarray:
        """Predicted remaining seconds at each of `allocations` (same shape)."""
        ...

    def explain(self, done: np.ndarray, quantile: float) -> str:
        """The formula and inputs behind `remaining`, for a decision's reason."""
        ...


@dataclass(frozen=True, eq=False)
class CTable:
    """Quantiles of C(p, a): `values[i, j, k]` = quantile `quantiles[k]` of the remaining
    seconds at allocation `allocations[i]` and progress in [j/P, (j+1)/P)."""

    allocations: np.ndarray
    quantiles: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    indicator: ProgressIndicator
    runs: int
    failed_runs: np.ndarray
    raised_cells: int = 0
    name: str = "C(p,a)"

    @property
    def p_bins(self) -> int:
        return int(self.values.shape[1])

    def at_progress(self, p: float, quantile: float) -> np.ndarray:
        """Quantile `quantile` of C(p, a) for every allocation level (linear between stored levels)."""
        if p >= 1.0:
            return np.zeros(self.allocations.size)
        j = min(max(int(p * self.p_bins), 0), self.p_bins - 1)
        q = self.quantiles
        qq = min(max(float(quantile), float(q[0])), float(q[-1]))
        k = int(min(max(np.searchsorted(q, qq, side="right") - 1, 0), q.size - 2))
        w = (qq - q[k]) / (q[k + 1] - q[k])
        row = self.values[:, j, :].astype(np.float64)
        return row[:, k] * (1.0 - w) + row[:, k + 1] * w

    def remaining(self, done: np.ndarray, quantile: float) -> np.ndarray:
        return self.at_progress(self.indicator.of(done), quantile)

    def explain(self, done: np.ndarray, quantile: float) -> str:
        p = self.indicator.of(done)
        return f"C_{quantile:g}(p={p:.3f}, a) from {self.runs} simulated runs per level (bin {min(int(p * self.p_bins), self.p_bins - 1)})"

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, allocations=self.allocations, quantiles=self.quantiles, values=self.values,
                            counts=self.counts, weights=self.indicator.weights, tasks=self.indicator.tasks,
                            runs=self.runs, failed_runs=self.failed_runs, raised_cells=self.raised_cells)

    @classmethod
    def load(cls, path: str | Path) -> "CTable":
        with np.load(path) as z:
            return cls(z["allocations"], z["quantiles"], z["values"], z["counts"],
                       ProgressIndicator(z["weights"], z["tasks"]), int(z["runs"]), z["failed_runs"],
                       int(z["raised_cells"]))


def max_parallelism(model: JobModel) -> int:
    """Most tasks at one DAG depth (stages at the same depth may run at once)."""
    depth: list[int] = []
    for s in model.stages:
        depth.append(1 + max((depth[p] for p in s.parents), default=-1))
    width: dict[int, int] = {}
    for d, s in zip(depth, model.stages):
        width[d] = width.get(d, 0) + s.tasks
    return max(width.values())


def allocation_levels(high: int, n: int = 50, low: int = 1) -> np.ndarray:
    """`n` distinct integer levels from `low` to `high`, geometrically spaced (fewer if the
    range holds fewer integers): equal relative steps, so small allocations are resolved finely."""
    if low < 1 or high < low:
        raise ValueError(f"need 1 <= low <= high, got {low}, {high}")
    if high - low + 1 <= n:
        return np.arange(low, high + 1)
    k = n
    while True:
        lv = np.unique(np.round(np.geomspace(low, high, k)).astype(np.int64))
        if lv.size >= n:
            return lv
        k += 1


def precompute(model: JobModel, allocations: Sequence[int], *, runs: int = 50, seed: int = 0, p_bins: int = 100,
               samples_per_run: int = 200, quantiles: Sequence[float] = DEFAULT_QUANTILES, max_attempts: int = 4,
               indicator: ProgressIndicator | None = None, workers: int = 1, per_run_weights: bool = True) -> CTable:
    """Simulate `runs` runs at every allocation and tabulate C(p, a) (module docstring).
    `per_run_weights=False`: every time sample weighs the same (the pooling before issue 27)."""
    levels = np.asarray(sorted(set(int(a) for a in allocations)), dtype=np.int64)
    if levels.size == 0 or levels[0] < 1:
        raise ValueError("allocation levels must be >= 1")
    if runs < 1 or p_bins < 1 or samples_per_run < 1:
        raise ValueError("runs, p_bins and samples_per_run must be >= 1")
    qs = np.asarray(sorted(set(float(q) for q in quantiles)))
    if qs.size < 2 or qs[0] < 0 or qs[-1] > 1:
        raise ValueError("need >= 2 quantile levels in [0, 1]")
    ind = indicator or total_work_with_queue(model)
    args = (model, runs, seed, p_bins, samples_per_run, qs, max_attempts, ind, per_run_weights)
    chunks = [levels[i::workers] for i in range(workers)] if workers > 1 else [levels]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_levels_table, [c for c in chunks if c.size], [args] * workers))
    else:
        parts = [_levels_table(levels, args)]
    by_level: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
    for chunk, part in zip([c for c in chunks if c.size], parts):
        for a, v, c, f in zip(chunk.tolist(), *part):
            by_level[a] = (v, c, f)
    values = np.stack([by_level[a][0] for a in levels.tolist()])
    counts = np.stack([by_level[a][1] for a in levels.tolist()])
    failed = np.array([by_level[a][2] for a in levels.tolist()])
    monotone = np.maximum.accumulate(values[::-1], axis=0)[::-1]
    raised = int(np.count_nonzero(np.any(monotone > values, axis=2)))
    return CTable(levels, qs, monotone.astype(np.float32), counts, ind, runs, failed, raised)


def _levels_table(levels: np.ndarray, args: tuple) -> tuple[list[np.ndarray], list[np.ndarray], list[int]]:
    """Quantile tables for some allocation levels (one process's share; draws regenerated from `seed`)."""
    model, runs, seed, p_bins, samples_per_run, qs, max_attempts, ind, per_run = args
    job = CompiledJob(model, max_attempts)
    step_per_task = ind.step_per_task()[job.stage_of]
    samples: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in levels]
    delta = [0.0] * levels.size
    failed = [0] * levels.size
    for r in range(runs):
        draws = draw(job, np.random.default_rng([seed, r]))
        for i, a in enumerate(levels.tolist()):
            run = simulate(job, draws, a, keep_log=False)
            if not math.isfinite(run.finish_s) or run.failed_at < math.inf:
                failed[i] += 1
                continue
            end = np.array(run.task_end)  # one successful end per task
            order = np.argsort(end, kind="stable")
            ends = end[order]
            cum = np.cumsum(step_per_task[order])
            total = run.finish_s
            if delta[i] == 0.0:
                delta[i] = max(total, 1e-9) / samples_per_run
            t = np.arange(0.0, total, delta[i])
            k = np.searchsorted(ends, t, side="right")
            p = np.where(k > 0, cum[np.maximum(k - 1, 0)], 0.0)
            bins = np.minimum((p * p_bins).astype(np.int64), p_bins - 1)
            per_bin = np.bincount(bins, minlength=p_bins)
            weight = 1.0 / per_bin[bins] if per_run else np.ones(bins.size)  # one run = weight 1 per bin
            samples[i].append((bins, total - t, weight))
    out_v, out_c = [], []
    for i in range(levels.size):
        v, c = _bin_quantiles(samples[i], p_bins, qs)
        out_v.append(v)
        out_c.append(c)
    return out_v, out_c, failed


def _bin_quantiles(samples: list[tuple[np.ndarray, np.ndarray, np.ndarray]], p_bins: int,
                   qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin weighted quantiles of pooled (bin, remaining, weight) samples; empty bins filled
    from below. Sample i of n sorted ones sits at position S_(i-1) / S_(n-1) (S = cumulative
    weight), linear in between: with equal weights, numpy's default (i-1)/(n-1) rule."""
    values = np.full((p_bins, qs.size), np.nan)
    if not samples:
        return np.full((p_bins, qs.size), np.inf), np.zeros(p_bins, dtype=np.int64)
    bins = np.concatenate([b for b, _, _ in samples])
    rem = np.concatenate([r for _, r, _ in samples])
    wts = np.concatenate([w for _, _, w in samples])
    order = np.lexsort((rem, bins))
    bins, rem, wts = bins[order], rem[order], wts[order]
    counts = np.bincount(bins, minlength=p_bins)
    ends = np.cumsum(counts)
    for j in np.flatnonzero(counts):
        lo = int(ends[j] - counts[j])
        r, w = rem[lo:ends[j]], wts[lo:ends[j]]
        if r.size == 1:
            values[j] = r[0]
            continue
        before = np.concatenate([[0.0], np.cumsum(w[:-1])])
        values[j] = np.interp(qs, before / before[-1], r)
    # forward-fill empty bins from the nearest lower visited bin (first visited bin fills below it)
    has = counts > 0
    idx = np.where(has, np.arange(p_bins), -1)
    idx = np.maximum.accumulate(idx)
    first = int(np.argmax(has))
    idx[idx < 0] = first
    return values[idx], counts


@dataclass(frozen=True, eq=False)
class AmdahlModel:
    """S_t + P_t / a from per-stage statistics (module docstring)."""

    allocations: np.ndarray
    tasks: np.ndarray
    work_s: np.ndarray
    path_s: np.ndarray
    name: str = "amdahl"

    @classmethod
    def fit(cls, model: JobModel, allocations: Sequence[int]) -> "AmdahlModel":
        n = len(model.stages)
        longest = np.array([s.init.max + s.runtime.max for s in model.stages])
        work = np.array([s.tasks * (s.init.mean + s.runtime.mean) * (1.0 + 0.5 * min(s.expected_attempts - 1.0, 10.0))
                         for s in model.stages])
        children: list[list[int]] = [[] for _ in range(n)]
        for i, s in enumerate(model.stages):
            for p in s.parents:
                children[p].append(i)
        path = np.zeros(n)
        for i in range(n - 1, -1, -1):  # reverse topological order
            path[i] = longest[i] + max((path[c] for c in children[i]), default=0.0)
        return cls(np.asarray(sorted(set(int(a) for a in allocations)), dtype=np.int64),
                   np.array([s.tasks for s in model.stages]), work, path)

    def terms(self, done: np.ndarray) -> tuple[float, float]:
        f = np.clip(np.asarray(done, dtype=np.float64) / self.tasks, 0.0, 1.0)
        unfinished = f < 1.0
        s_t = float(self.path_s[unfinished].max()) if unfinished.any() else 0.0
        p_t = max(0.0, float(np.dot(1.0 - f, self.work_s)) - s_t)
        return s_t, p_t

    def remaining(self, done: np.ndarray, quantile: float) -> np.ndarray:
        s_t, p_t = self.terms(done)
        return s_t + p_t / self.allocations

    def explain(self, done: np.ndarray, quantile: float) -> str:
        s_t, p_t = self.terms(done)
        return f"Amdahl S_t + P_t/a with S_t={s_t:.0f}s, P_t={p_t:.0f}s (a point estimate; quantile not used)"

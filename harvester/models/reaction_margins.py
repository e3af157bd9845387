"""Reserve margins for the guard's reaction time (paper 004 §4 at the right horizon) — pure.

The OSDI'16 reserve is what "a spiking primary tenant can immediately consume ... until our
software can react (within a few seconds at most)" (§2). Paper 004 §4 sets such a margin from
the distribution of utilization change, and notes (measure 2) that the horizon matters. The
change between two 2-minute averages is the wrong horizon twice over: the guard reacts within
H = poll interval + the RM's telemetry lag (2-7 s recorded, fixtures scenarios/cpu-burn) +
control period, and averages hide the spikes inside a slot (the Alibaba 2018 hosts' 60-s samples
move 15-19 % of the cores at the 95th percentile while their 5-minute means barely move;
docs/evaluation/harvesting.md shows the command).

From raw samples (the per-poll primary utilization of every node the sidecar keeps for
`store.raw_samples_retention_days`), the rise of node x at sample t is

    rise_H(x, t) = max(u[t+1], ..., u[t+k]) − u[t],   k = ⌈H / sample interval⌉, negative → 0

(the most the primary climbs before the guard acts on what it saw at t), and the margin of a
class is the `quantile` of rise_H over every (node, t) of its tenants' nodes: with that reserve
the primary's climb within H is absorbed at least `quantile` of the time. Streaming: blocks of
polls are folded into per-class histograms of 1/1000 of the cores (the last k polls of a block
carry over to the next; a gap longer than `GAP_FACTOR` sample intervals breaks the windows), so
memory does not grow with the window (10,000 nodes × 7 days at 3 s: bench/harvesting.py).
Quantiles are read at the upper edge of their bin (never below the data's).

With only coarse history (a class with fewer than `min_windows` raw windows), the stated
CONSERVATIVE rule scales the q-quantile of |Δu| between `step_s` slots (models/margins.py) by
what white noise at the sample interval would give: with n = step_s / interval samples per
slot, |Δslot| ~ σ·√(2/n)·|Z| and rise_H = max(X_1..X_k) − X_0 for independent X ~ N(0, σ²), so

    margin_H ≈ q|Δslot| × c_k(q) / (√(2/n) · z_{(1+q)/2}),   P(max(X_1..X_k) − X_0 ≤ c_k) = q.

Independent samples hide the most motion inside an average for a given change between averages
(positively correlated load moves the averages more): this over-covers anything smoother and
under-covers only load that alternates faster than the samples. Floors, caps and cold starts
stay policy (decisions/reserve.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

import numpy as np

from harvester.models.margins import ClassMargin, MarginModel

BINS = 1000          # histogram resolution: 0.1 % of a node's cores
GAP_FACTOR = 2.5     # consecutive samples further apart than this many intervals are not one window
CHUNK_VALUES = 1 << 19  # values folded at once (2 MB of float32: the passes over a tile stay in cache): bounds the temporaries of a fold
TILE_CLASSES = 64       # classes (tenants) per tile: their counts, 64 × 8 KB, stay in cache


@dataclass(frozen=True, slots=True, eq=False)
class PrimaryBlock:
    """Consecutive polls of one set of nodes: `values[t, j]` is node `node_ids[j]`'s primary
    utilization (fraction of its physical cores, NaN = unknown) at `times[t]`."""

    node_ids: tuple[str, ...]
    times: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        if self.values.shape != (self.times.shape[0], len(self.node_ids)):
            raise ValueError(f"values {self.values.shape} do not match {self.times.shape[0]} polls × {len(self.node_ids)} nodes")


def horizon_samples(horizon_s: float, interval_s: float) -> int:
    """k: samples after t that fall within the reaction horizon (at least one)."""
    if horizon_s <= 0 or interval_s <= 0:
        raise ValueError(f"horizon and interval must be positive, got {horizon_s}, {interval_s}")
    return max(1, math.ceil(horizon_s / interval_s - 1e-9))


def _sliding_max(y: np.ndarray, k: int) -> np.ndarray:
    """max(y[i], ..., y[i+k-1]) along axis 0 ignoring NaN (length len(y) − k + 1), by doubling."""
    m, w = y, 1
    while 2 * w <= k:
        m = np.fmax(m[:-w], m[w:])
        w *= 2
    if w < k:
        m = np.fmax(m[: m.shape[0] - (k - w)], m[k - w:])
    return m


def _sliding_max_into(y: np.ndarray, k: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`_sliding_max(y, k)` computed in the flat float32 buffers a and b (the result is a view of
    one of them, never of y)."""
    n, cols = y.shape
    m, w, bufs = y, 1, (a, b)
    i = 0
    while 2 * w <= k:
        out = bufs[i % 2][: (m.shape[0] - w) * cols].reshape(m.shape[0] - w, cols)
        m = np.fmax(m[:-w], m[w:], out=out)
        w *= 2
        i += 1
    if w < k:
        d = k - w
        out = bufs[i % 2][: (m.shape[0] - d) * cols].reshape(m.shape[0] - d, cols)
        m = np.fmax(m[: m.shape[0] - d], m[d:], out=out)
        i += 1
    if i == 0:  # k = 1: the samples themselves, copied so the caller's values never change
        out = a[: n * cols].reshape(n, cols)
        np.copyto(out, y)
        m = out
    return m


class RiseHistogram:
    """Rises within the horizon per class, counted in bins of 1/BINS of the cores (mergeable)."""

    def __init__(self, classes: int) -> None:
        self.classes = classes
        self.counts = np.zeros((classes, BINS + 1), dtype=np.int64)

    def add(self, values: np.ndarray, class_of: np.ndarray, k: int) -> None:
        """Fold every complete window of a gap-free run of polls `values` [polls × nodes]: the rises
        at rows 0 .. len − k − 1 (nodes of class −1 are skipped).

        Tiles keep it in cache: columns sorted by class (gathered tile by tile unless sorted) are cut into
        slices of at most `TILE_CLASSES` classes, so each tile's counts stay small (its bincount is
        not a cache miss per value with thousands of tenants), and of at most CHUNK_VALUES / 16k
        columns; rows are taken about `CHUNK_VALUES` values at a time (at least 16k rows, with k
        rows of look-ahead), through reused work buffers: a dozen passes over a tile of ~2 MB run
        in cache instead of streaming through memory each."""
        polls, nodes = values.shape
        if polls <= k or nodes == 0:
            return
        class_of = np.asarray(class_of)
        order = None
        if np.any(class_of[1:] < class_of[:-1]):
            order = np.argsort(class_of, kind="stable")  # gathered tile by tile (in cache)
            class_of = class_of[order]
        c0 = int(np.searchsorted(class_of, 0, side="left"))  # skip the unknown nodes
        while c0 < nodes:
            g0 = int(class_of[c0])
            c1 = min(int(np.searchsorted(class_of, g0 + TILE_CLASSES, side="left")),
                     c0 + max(1, CHUNK_VALUES // (16 * k)))
            g1 = int(class_of[c1 - 1]) + 1
            offset = ((class_of[c0:c1] - g0) * (BINS + 2)).astype(np.int32)[None, :]
            cols = c1 - c0
            step = max(16 * k, CHUNK_VALUES // cols)  # the k rows of look-ahead are redone: at most 1/16 more
            work = self._work((min(step, polls - k) + k) * cols)
            for lo in range(0, polls - k, step):
                hi = min(polls - k, lo + step)  # rises at rows lo .. hi − 1
                if order is None:
                    tile = values[lo:hi + k, c0:c1]
                else:
                    tile = work[3][: (hi + k - lo) * cols].reshape(hi + k - lo, cols)
                    np.take(values[lo:hi + k], order[c0:c1], axis=1, out=tile)
                self._add_rows(tile, offset, k, work, g0, g1)
            c0 = c1

    def _work(self, size: int) -> tuple[np.ndarray, ...]:
        w = getattr(self, "_buffers", None)
        if w is None or w[0].size < size:
            w = (np.empty(size, np.float32), np.empty(size, np.float32), np.empty(size, np.int32),
                 np.empty(size, np.float32), np.empty(size, np.bool_))
            self._buffers = w
        return w

    def _add_rows(self, values: np.ndarray, offset: np.ndarray, k: int,
                  work: tuple[np.ndarray, ...], g0: int, g1: int) -> None:
        rise = _sliding_max_into(values[1:], k, work[0], work[1])  # NaN only where no sample ahead is known
        rise = np.subtract(rise, values[: rise.shape[0]], out=rise)  # NaN = unknown window
        rise *= BINS
        rise -= 1e-4  # upper bin edge, tolerant of float noise
        np.ceil(rise, out=rise)
        np.clip(rise, 0, BINS, out=rise)  # NaN stays NaN
        unknown = np.isnan(rise, out=work[4][: rise.size].reshape(rise.shape))
        np.copyto(rise, BINS + 1, where=unknown)  # NaN → the unknown bin BINS + 1, dropped
        key = work[2][: rise.size].reshape(rise.shape)
        np.copyto(key, rise, casting="unsafe")  # exact: integers 0 .. BINS + 1
        key += offset
        width = BINS + 2
        counts = np.bincount(key.ravel(), minlength=(g1 - g0) * width)
        self.counts[g0:g1] += counts.reshape(g1 - g0, width)[:, : BINS + 1]

    def total(self, c: int) -> int:
        return int(self.counts[c].sum())

    def quantile(self, c: int, q: float) -> float:
        """The q-quantile of class c's rises (upper bin edge); NaN without data."""
        n = self.total(c)
        if n == 0:
            return math.nan
        b = int(np.searchsorted(np.cumsum(self.counts[c]), q * n, side="left"))
        return min(b, BINS) / BINS

    def mean(self, c: int) -> float:
        n = self.total(c)
        return float(np.dot(self.counts[c], np.arange(BINS + 1)) / BINS / n) if n else math.nan


class RiseAccumulator:
    """Streams `PrimaryBlock`s (time order) into a `RiseHistogram` for the classes given per node.

    `interval_s` fixes the sample interval (else the median step of the first block of two polls
    or more); `unfolded_from` is the time of the first poll whose window is not complete yet (the
    carry), None when every poll seen was folded or broken off by a gap."""

    def __init__(self, node_class: Mapping[str, int], classes: int, *, horizon_s: float,
                 interval_s: float | None = None) -> None:
        self.node_class = node_class
        self.hist = RiseHistogram(classes)
        self.horizon_s = horizon_s
        self.interval_s: float | None = interval_s
        self._carry: tuple[tuple[str, ...], np.ndarray, np.ndarray] | None = None
        self._class_of: tuple[tuple[str, ...], np.ndarray] | None = None

    @property
    def k(self) -> int:
        assert self.interval_s is not None
        return horizon_samples(self.horizon_s, self.interval_s)

    @property
    def unfolded_from(self) -> float | None:
        return None if self._carry is None or not self._carry[1].size else float(self._carry[1][0])

    def add(self, block: PrimaryBlock) -> None:
        times, values = block.times, block.values
        if times.size == 0:
            return
        if self.interval_s is None:
            if times.size < 2:
                return  # need two polls to know the sample interval
            self.interval_s = float(np.median(np.diff(times)))
        k, gap = self.k, GAP_FACTOR * self.interval_s
        if self._class_of is None or self._class_of[0] != block.node_ids:
            self._class_of = (block.node_ids, np.fromiter((self.node_class.get(n, -1) for n in block.node_ids), np.int64,
                                                          len(block.node_ids)))
        class_of = self._class_of[1]
        # The stream is carry ++ block when they join. Its rises are those of the carry's rows,
        # which need at most the block's first k polls (the seam, small), and those of the
        # block's rows, which need only the block (a row's window ends before its run does, and
        # a run ends at a gap of the block or at its end): the block is never copied.
        carry = self._carry
        joined = carry is not None and carry[0] == block.node_ids and times[0] - carry[1][-1] <= gap
        if joined:
            seam_t, seam_v = np.concatenate([carry[1], times[:k]]), np.concatenate([carry[2], values[:k]])
            self._fold_runs(seam_t, seam_v, class_of, k, gap, rows=carry[1].size)
        cuts = self._fold_runs(times, values, class_of, k, gap)
        if cuts.size:  # the last run is the block's tail
            tail_t, tail_v = times[cuts[-1]:][-k:], values[cuts[-1]:][-k:]
        elif joined:  # the last run goes on from the carry
            tail_t, tail_v = np.concatenate([carry[1], times[-k:]])[-k:], np.concatenate([carry[2], values[-k:]])[-k:]
        else:
            tail_t, tail_v = times[-k:], values[-k:]
        self._carry = (block.node_ids, tail_t.copy(), tail_v.copy())

    def _fold_runs(self, times: np.ndarray, values: np.ndarray, class_of: np.ndarray, k: int, gap: float,
                   rows: int | None = None) -> np.ndarray:
        """Fold the rises of each gap-free run of `times` (of its first `rows` polls only, when
        given); returns the cuts between runs."""
        cuts = np.flatnonzero(np.diff(times) > gap) + 1
        for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, times.size].tolist()):
            if rows is not None:
                if lo >= rows:
                    break
                hi = min(hi, rows + k)  # rises at rows lo .. rows − 1 at most
            self._fold(times[lo:hi], values[lo:hi], class_of, k)
        return cuts

    def _fold(self, times: np.ndarray, values: np.ndarray, class_of: np.ndarray, k: int) -> None:
        """Fold a gap-free run (rises at its first len − k polls)."""
        self.hist.add(values, class_of, k)


@lru_cache(maxsize=64)
def white_noise_factor(q: float, samples_per_slot: float, k: int) -> float:
    """c_k(q) / (√(2/n) · z_{(1+q)/2}): the coarse rule's scale (module docstring)."""
    from scipy import integrate, optimize, stats

    def below(r: float) -> float:
        return integrate.quad(lambda x: stats.norm.pdf(x) * stats.norm.cdf(x + r) ** k, -9, 9, limit=200)[0]

    c = optimize.brentq(lambda r: below(r) - q, -5.0, 15.0, xtol=1e-6)
    n = max(1.0, samples_per_slot)
    return float(c / (math.sqrt(2.0 / n) * stats.norm.ppf((1 + q) / 2)))


def fit_reaction_margins(
    blocks: Iterable[PrimaryBlock],
    node_class: Mapping[str, str],
    class_ids: Sequence[str],
    *,
    horizon_s: float,
    quantile: float,
    coarse: MarginModel | None = None,
    interval_s: float,
    min_windows: int = 1000,
    version: int = 0,
    fitted_at: float = 0.0,
) -> MarginModel:
    """Margin per class: the `quantile` of rises within `horizon_s` from raw samples, or the coarse
    rule over `coarse` (slot-change margins) for classes with fewer than `min_windows` windows."""
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    index = {c: i for i, c in enumerate(class_ids)}
    acc = RiseAccumulator({n: index[c] for n, c in node_class.items() if c in index}, len(class_ids), horizon_s=horizon_s)
    for block in blocks:
        acc.add(block)
    return margins_from_histogram(acc.hist, class_ids, horizon_s=horizon_s, quantile=quantile, coarse=coarse,
                                  sample_s=acc.interval_s or interval_s, min_windows=min_windows, version=version,
                                  fitted_at=fitted_at)


def margins_from_histogram(
    hist: RiseHistogram,
    class_ids: Sequence[str],
    *,
    horizon_s: float,
    quantile: float,
    coarse: MarginModel | None,
    sample_s: float,
    min_windows: int,
    version: int,
    fitted_at: float,
) -> MarginModel:
    """The margins of `fit_reaction_margins` from rises already counted per class (row i = class_ids[i])."""
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    k = horizon_samples(horizon_s, sample_s)
    margins = []
    for i, cid in enumerate(class_ids):
        n = hist.total(i)
        if n >= min_windows:
            margins.append(ClassMargin(cid, quantile, hist.quantile(i, quantile), n, hist.mean(i),
                                       f"raw: {n:,} windows of {k} samples at {sample_s:g} s"))
            continue
        slot = None if coarse is None else coarse.margin(cid)
        if slot is None or not math.isfinite(slot.margin) or slot.changes == 0:
            margins.append(ClassMargin(cid, quantile, math.nan, 0, math.nan, f"no data ({n} raw windows)"))
            continue
        f = white_noise_factor(quantile, coarse.step_s / sample_s, k)  # type: ignore[union-attr]
        margins.append(ClassMargin(cid, quantile, min(1.0, slot.margin * f), slot.changes, slot.mean_change,
                                   f"coarse: q{quantile:.2f} |Δu| over {coarse.step_s:g} s {slot.margin:.3f} "  # type: ignore[union-attr]
                                   f"× {f:.2f} (white noise at {sample_s:g} s; {n} raw windows < {min_windows})"))
    return MarginModel(version, fitted_at, quantile, sample_s, tuple(margins), method="reaction", horizon_s=horizon_s)

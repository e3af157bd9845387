"""Incremental summary of the reaction-time rises: per tenant and UTC day, bounded memory (issue 29).

The reserve of a class is the `quantile` of its nodes' rises within the reaction horizon H
(paper 004 §4 at the guard's horizon; models/reaction_margins.py). Seven days of 3-s samples of
50,000 nodes are 1.0e10 values (40 GB as float32): they are never held, nor read again.

Summary. Each rise is counted in a histogram on the fixed grid of 1/BINS of the cores (BINS =
1000), one histogram per (tenant, UTC day of the rise's start t). Counts add, so the histogram of
a class is the sum of its tenants' over the window's days — under any class model: a refit that
moves a tenant to another class moves its counts with it, which a per-class summary could not.

Error bound. A rise r ∈ [0, 1] is counted at its bin's upper edge ⌈r·BINS − 10⁻⁴⌉ / BINS, a
non-decreasing map, so the q-quantile read from the histogram is the map of the exact q-quantile
Q (inverted CDF, the smallest rise with at least q of the windows at or below it):

    Q − 2·10⁻⁷ ≤ Q_hist < Q + 1/BINS = Q + 0.001 of the cores

(the 2·10⁻⁷: the 10⁻⁴ of a bin that absorbs float32 rounding of the difference, plus that
rounding; rises above 1 count as 1, rises below 0 as 0). Merging and
splitting into blocks, days and refits changes no count, so a streamed, incremental fit equals the
from-scratch one exactly (tests/models/test_rise_summary.py).

Incremental fold. `FoldState.folded_until` is the time of the first poll whose rise is not
counted yet: every rise starting before it is in the summaries. A refit reads the raw samples of
`[folded_until, end)` only (the store's blocks, bounded size), folds the rises whose window of k
polls is complete, and persists the new counts with the new `folded_until` (the first poll of
the incomplete tail, re-read next time) in one transaction. Raw samples are therefore needed
only from the last fit on: `store.raw_samples_retention_days` must exceed the refit interval
(config, docs/harvesting.md). A poll's node is credited to the tenant it has when folded (a node
with no known tenant is not counted). A change of H, of BINS or of the sample interval restarts
the summary from the raw samples still retained.

Window. The fit at `end` sums the days from `first_day(end, window_days)` = the UTC day holding
end − window_days on: between window_days and window_days + 1 days of rises, each counted once,
all weighted equally (no decay); older days are dropped from the store when the fold is saved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from harvester.models.reaction_margins import BINS, PrimaryBlock, RiseAccumulator, RiseHistogram

DAY_S = 86400.0


@dataclass(frozen=True, slots=True)
class FoldState:
    """Where the summary stands: rises starting before `folded_until` are counted."""

    horizon_s: float
    interval_s: float
    folded_until: float
    bins: int = BINS


@dataclass(frozen=True, slots=True, eq=False)
class TenantDay:
    """Sparse rise histogram of one tenant on one UTC day: `counts[i]` rises in bin `bins[i]`."""

    day: int
    tenant: str
    bins: np.ndarray
    counts: np.ndarray

    def dense(self) -> np.ndarray:
        out = np.zeros(BINS + 1, dtype=np.int64)
        np.add.at(out, self.bins.astype(np.int64), self.counts)
        return out


def first_day(end: float, window_days: float) -> int:
    """First UTC day of the window ending at `end` (module docstring)."""
    return math.floor((end - window_days * DAY_S) / DAY_S)


def sparse(day: int, tenant: str, dense: np.ndarray) -> TenantDay:
    nz = np.flatnonzero(dense)
    return TenantDay(day, tenant, nz.astype(np.uint16), dense[nz].astype(np.int64))


def merge(a: TenantDay, b: TenantDay) -> TenantDay:
    return sparse(a.day, a.tenant, a.dense() + b.dense())


class _DayAccumulator(RiseAccumulator):
    """Rises per tenant, split by the UTC day of their start; a day is closed (made sparse) once
    the stream has passed it, so at most the days of one block are dense at a time."""

    def __init__(self, node_tenant: Mapping[str, int], tenants: Sequence[str], *, horizon_s: float,
                 interval_s: float | None) -> None:
        super().__init__(node_tenant, len(tenants), horizon_s=horizon_s, interval_s=interval_s)
        self.tenants = tenants
        self.open: dict[int, RiseHistogram] = {}
        self.closed: list[TenantDay] = []

    def _fold(self, times: np.ndarray, values: np.ndarray, class_of: np.ndarray, k: int) -> None:
        n = times.size - k  # rises at rows 0 .. n − 1
        if n <= 0:
            return
        days = np.floor(times[:n] / DAY_S).astype(np.int64)
        for d in [d for d in self.open if d < days[0]]:
            self._close(d)
        cuts = np.flatnonzero(np.diff(days)) + 1
        for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, n].tolist()):
            d = int(days[lo])
            hist = self.open.get(d)
            if hist is None:
                hist = self.open[d] = RiseHistogram(len(self.tenants))
            hist.add(values[lo:hi + k], class_of, k)

    def _close(self, day: int) -> None:
        hist = self.open.pop(day)
        for i in np.flatnonzero(hist.counts.sum(axis=1)).tolist():
            self.closed.append(sparse(day, self.tenants[i], hist.counts[i]))

    def finish(self) -> list[TenantDay]:
        for d in sorted(self.open):
            self._close(d)
        return self.closed


def fold(blocks: Iterable[PrimaryBlock], node_tenant: Mapping[str, str], *, horizon_s: float,
         interval_s: float | None, until: float) -> tuple[FoldState, list[TenantDay]]:
    """Count the rises of `blocks` (raw samples from the state's `folded_until`, or from scratch,
    to `until`) per tenant and day. The new state's interval is NaN while the sample interval is
    unknown (no block of two polls seen yet; `interval_s` None = estimate it)."""
    tenants = sorted(set(node_tenant.values()))
    index = {t: i for i, t in enumerate(tenants)}
    acc = _DayAccumulator({n: index[t] for n, t in node_tenant.items()}, tenants, horizon_s=horizon_s,
                          interval_s=interval_s)
    for block in blocks:
        acc.add(block)
    days = acc.finish()
    unfolded = acc.unfolded_from
    return FoldState(horizon_s, math.nan if acc.interval_s is None else acc.interval_s,
                     until if unfolded is None else unfolded), days


def class_histogram(summaries: Iterable[TenantDay], tenant_class: Mapping[str, str],
                    class_ids: Sequence[str]) -> RiseHistogram:
    """Sum the tenants' days into one histogram per class (row i = class_ids[i])."""
    index = {c: i for i, c in enumerate(class_ids)}
    hist = RiseHistogram(len(class_ids))
    for s in summaries:
        c = index.get(tenant_class.get(s.tenant, ""))
        if c is not None:
            np.add.at(hist.counts[c], s.bins.astype(np.int64), s.counts)
    return hist


def merged(rows: Iterable[TenantDay]) -> Iterator[TenantDay]:
    """Rows with the same (day, tenant) added together (for an in-memory fold of several passes)."""
    acc: dict[tuple[int, str], TenantDay] = {}
    for r in rows:
        key = (r.day, r.tenant)
        acc[key] = merge(acc[key], r) if key in acc else r
    yield from acc.values()

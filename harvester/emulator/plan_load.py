"""The plan's load: accepted commitments and the summed (memory, vcores) they put on time.

What the admission path (emulator/planner.py) sweeps on every submit. The plan can hold
thousands of intervals (900 reservations of a day, each a stage per minute), so the load is
kept the way the RM's InMemoryPlan keeps it, as data that lives between submissions:

- `PlanIndex`: the live commitments; one-off intervals as numpy arrays concatenated once per
  change, periodic ones expanded over the asked range on demand.
- `Load`: a set of intervals as arrays; `sweep` sums them into a step function (numpy).
- `Steps`: that step function frozen for one placement, read per slot with a binary search
  plus the few intervals the placement itself has added (in Python: a slot spans a handful of
  breakpoints, and a numpy call per slot costs more than the slot).

Every load is an exact integer sum and a slot's segments are cut at exactly the interval
starts and ends inside it, so what the planner computes (costs, fits, quota) does not depend
on how the load is stored.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from harvester.domain import Resources

Segment = tuple[int, int, int, int]  # (start, end, memory, vcores): the load on [start, end)


@dataclass(frozen=True, slots=True)
class Interval:
    start: int
    end: int
    resources: Resources


@dataclass(frozen=True, slots=True)
class Commitment:
    """An accepted reservation's footprint: its intervals (offsets when `period` > 0)."""

    reservation_id: str
    user: str
    intervals: tuple[Interval, ...]
    period: int = 0

    def concrete(self, lo: int, hi: int) -> Iterable[Interval]:
        """Its intervals as absolute times overlapping [lo, hi) (periodic ones repeat)."""
        if self.period <= 0:
            yield from (iv for iv in self.intervals if iv.start < hi and iv.end > lo)
            return
        p = self.period
        for iv in self.intervals:
            k = (lo - iv.end) // p
            while iv.start + k * p < hi:
                s, e = iv.start + k * p, iv.end + k * p
                if e > lo:
                    yield Interval(s, e, iv.resources)
                k += 1


class Timeline:
    """Piecewise-constant load (memory, vcores) built from intervals."""

    def __init__(self, intervals: Iterable[Interval]) -> None:
        self.intervals = list(intervals)

    def add(self, iv: Interval) -> None:
        self.intervals.append(iv)

    def segments(self, lo: int, hi: int) -> list[Segment]:
        """[(start, end, memory, vcores)] covering [lo, hi) with the summed load."""
        cuts, m, v = Load.of(self.intervals).sweep(lo, hi)
        return list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), m.tolist(), v.tolist()))


@dataclass(frozen=True)
class Load:
    """Intervals as arrays (start, end, memory, vcores), for a vectorized sweep."""

    start: np.ndarray
    end: np.ndarray
    mem: np.ndarray
    vc: np.ndarray

    @staticmethod
    def of(intervals: Sequence[Interval]) -> Load:
        n = len(intervals)
        a = np.fromiter((x for iv in intervals for x in (iv.start, iv.end, iv.resources.memory_mb, iv.resources.vcores)),
                        dtype=np.int64, count=4 * n).reshape(n, 4)
        return Load(a[:, 0], a[:, 1], a[:, 2], a[:, 3])

    @staticmethod
    def join(*parts: Load) -> Load:
        return Load(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("start", "end", "mem", "vc")))

    def where(self, keep: np.ndarray) -> Load:
        return Load(self.start[keep], self.end[keep], self.mem[keep], self.vc[keep])

    def sweep(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cuts, memory, vcores): the load on [cuts[i], cuts[i+1]), the cuts being lo, hi and
        every start / end inside; intervals are clipped to [lo, hi)."""
        part = self.where((self.start < hi) & (self.end > lo))
        times = np.concatenate((np.maximum(part.start, lo), np.minimum(part.end, hi)))
        order = np.argsort(times, kind="stable")  # PlanIndex hands its rows over in start order
        times = times[order]
        # the running load after every start / end, read at the last event of each instant
        mem = np.cumsum(np.concatenate((part.mem, -part.mem))[order])
        vc = np.cumsum(np.concatenate((part.vc, -part.vc))[order])
        last = np.flatnonzero(np.diff(times, append=hi + 1))
        cuts, mem, vc = times[last], mem[last], vc[last]
        if not cuts.size or cuts[0] > lo:  # nothing is in use before the first start
            cuts, mem, vc = np.concatenate(([lo], cuts)), np.concatenate(([0], mem)), np.concatenate(([0], vc))
        if cuts[-1] < hi:  # every interval has ended at the last cut
            cuts, mem, vc = np.append(cuts, hi), np.append(mem, 0), np.append(vc, 0)
        return cuts, mem[:-1], vc[:-1]

    def steps(self) -> Steps:
        """The step function of all these intervals (unclipped)."""
        if self.start.size == 0:
            return Steps([], [], [])
        cuts, m, v = self.sweep(int(self.start.min()), int(self.end.max()))
        return Steps(cuts.tolist(), m.tolist(), v.tolist())


class Steps:
    """A step function: (m[i], v[i]) on [cuts[i], cuts[i+1]), zero outside [cuts[0], cuts[-1])."""

    def __init__(self, cuts: list[int], mem: list[int], vc: list[int]) -> None:
        self.cuts, self.mem, self.vc = cuts, mem, vc

    def segments(self, lo: int, hi: int, extra: Sequence[Interval] = ()) -> list[Segment]:
        """[(start, end, memory, vcores)] covering [lo, hi): this load plus `extra`, cut at lo,
        hi and every breakpoint of either inside (the same cuts a sweep of all of them gives)."""
        cuts, n = self.cuts, len(self.mem)
        pts = {lo, hi}
        i = bisect.bisect_right(cuts, lo)
        while i < len(cuts) and cuts[i] < hi:
            pts.add(cuts[i])
            i += 1
        more = [iv for iv in extra if iv.start < hi and iv.end > lo]
        for iv in more:
            if iv.start > lo:
                pts.add(iv.start)
            if iv.end < hi:
                pts.add(iv.end)
        edges = sorted(pts)
        out = []
        for a, b in zip(edges, edges[1:]):
            k = bisect.bisect_right(cuts, a) - 1
            m, v = (self.mem[k], self.vc[k]) if 0 <= k < n else (0, 0)
            for iv in more:
                if iv.start <= a < iv.end:
                    m += iv.resources.memory_mb
                    v += iv.resources.vcores
            out.append((a, b, m, v))
        return out


class PlanIndex:
    """The accepted commitments, kept as arrays between submissions. `load(lo, hi, user=,
    exclude=)` is what the planner and the quota check sweep.

    One-off intervals are rows of append-only arrays (a put appends its rows, a drop marks them
    dead; compacted when half are dead), so a submit costs its own rows plus one vectorized
    filter, not a rebuild of the plan. The rows are also kept in start order (merged in on
    each put), so a sweep sorts nearly sorted times: a linear pass for a stable sort."""

    def __init__(self, commitments: Iterable[Commitment] = ()) -> None:
        self._rows = np.zeros((6, 0), dtype=np.int64)  # start, end, memory, vcores, owner, user code (by field)
        self._n = 0  # rows in use
        self._alive = np.zeros(0, dtype=bool)
        self._owner: dict[str, int] = {}  # reservation id -> owner code (one-off)
        self._slices: dict[str, list[int]] = {}  # owner code's row positions
        self._codes: dict[str, int] = {}  # user -> code
        self._periodic: dict[str, Commitment] = {}
        self._dead = 0
        self._order = np.zeros(0, dtype=np.int64)  # row positions by start
        for c in commitments:
            self.put(c)

    def put(self, c: Commitment) -> None:
        self.drop(c.reservation_id)
        if c.period > 0:
            self._periodic[c.reservation_id] = c
            return
        k = len(c.intervals)
        if self._n + k > self._rows.shape[1]:
            grow = max(2 * self._rows.shape[1], self._n + k, 64)
            rows = np.zeros((6, grow), dtype=np.int64)
            rows[:, :self._n] = self._rows[:, :self._n]
            self._rows = rows
            self._alive = np.concatenate((self._alive[:self._n], np.zeros(grow - self._n, dtype=bool)))
        owner = self._owner.setdefault(c.reservation_id, len(self._owner))
        user = self._codes.setdefault(c.user, len(self._codes))
        new = Load.of(c.intervals)
        block = self._rows[:, self._n:self._n + k]
        block[0], block[1], block[2], block[3], block[4], block[5] = new.start, new.end, new.mem, new.vc, owner, user
        self._alive[self._n:self._n + k] = True
        self._slices[c.reservation_id] = [self._n, self._n + k]
        by_start = np.argsort(new.start, kind="stable")
        at = np.searchsorted(self._rows[0][self._order], new.start[by_start], side="right")
        self._order = np.insert(self._order, at, np.arange(self._n, self._n + k)[by_start])
        self._n += k

    def drop(self, rid: str) -> None:
        if self._periodic.pop(rid, None) is not None:
            return
        span = self._slices.pop(rid, None)
        if span is None:
            return
        self._alive[span[0]:span[1]] = False
        self._dead += span[1] - span[0]
        if self._dead * 2 > self._n:
            self._compact()

    def _compact(self) -> None:
        keep = self._alive[:self._n]
        owners = self._rows[4, :self._n][keep]
        self._rows = self._rows[:, :self._n][:, keep]
        self._n = self._rows.shape[1]
        self._alive = np.ones(self._n, dtype=bool)
        self._dead = 0
        self._order = np.argsort(self._rows[0], kind="stable")
        by_code = {code: rid for rid, code in self._owner.items()}
        self._slices = {}
        if self._n:
            edges = np.flatnonzero(np.diff(owners)) + 1  # a reservation's rows stay contiguous
            for s, e in zip([0, *edges.tolist()], [*edges.tolist(), self._n]):
                self._slices[by_code[int(owners[s])]] = [s, e]

    def load(self, lo: int, hi: int, *, user: str | None = None, exclude: str | None = None) -> Load:
        """Every live interval overlapping [lo, hi) (whole, not clipped), of `user` if given,
        without reservation `exclude` (an update is planned without its old self)."""
        rows = self._rows[:, :self._n]
        keep = self._alive[:self._n] & (rows[0] < hi) & (rows[1] > lo)
        if exclude is not None and exclude in self._slices:
            s, e = self._slices[exclude]
            keep[s:e] = False
        if user is not None:
            keep &= rows[5] == self._codes.get(user, -1)
        sel = self._order[keep[self._order]]
        one = Load(rows[0][sel], rows[1][sel], rows[2][sel], rows[3][sel])
        periodic = [iv for rid, c in self._periodic.items() if rid != exclude and (user is None or c.user == user)
                    for iv in c.concrete(lo, hi)]
        return one if not periodic else Load.join(one, Load.of(periodic))

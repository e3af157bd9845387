"""Reservation admission: place a reservation definition in the plan and check the quota.

This follows Hadoop 3.3.6's defaults for a reservable CapacityScheduler queue:

- agent `AlignedPlannerWithGreedy` with `favor-early-allocation` (allocate-left) true: each
  stage is placed by `StageAllocatorLowCostAligned` in duration-long slots aligned to the
  stage's earliest start, cheapest slot first (cost = the dominant-resource share of the plan
  load in the slot), ties to the earliest; gangs of `min-concurrency` containers; smoothness
  10. If that fails the greedy allocator packs from the earliest start. Stages run in order:
  R_ALL = every stage, R_ANY = the first stage that fits, R_ORDER = each after the previous,
  R_ORDER_NO_GAP = each starting exactly where the previous ended.
- policy `CapacityOverTimePolicy`: no over-commit of the plan capacity, the user's
  instantaneous total <= instantaneous-max-capacity, and over any `reservation-window` the
  user's average <= average-capacity (both fractions of the plan capacity).

Recurring reservations (period P) are placed within one period and repeat every P; their
allocations are offsets modulo P (scenarios/reservation-early-submit: startTime "3004928").
The recorded placements it reproduces: an empty plan puts an R_ORDER_NO_GAP definition at its
arrival (captures/reservation-list-with-allocations), and a slot overlapping existing load
loses to a free one later in the window (reservation-list-two, scenarios R3 "placed late").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from harvester.domain import Resources
from harvester.emulator.plan_load import Commitment, Interval, Load, PlanIndex, Segment, Steps, Timeline

__all__ = ["Commitment", "Interval", "PlanIndex", "Planner", "PlanningError", "Stage", "Timeline", "check_quota"]

STEP_MS = 1000
SMOOTHNESS = 10
PLANNING_PKG = "org.apache.hadoop.yarn.server.resourcemanager.reservation.exceptions"


class PlanningError(Exception):
    """A definition the plan cannot take; `java_class` is the Hadoop exception it mirrors."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(message)
        self.java_class = java_class

    def java_text(self) -> str:
        return f"{PLANNING_PKG}.{self.java_class}: {self}"


@dataclass(frozen=True, slots=True)
class Stage:
    """One reservation-request: `num_containers` of `capability`, gangs of `concurrency`."""

    capability: Resources
    num_containers: int
    concurrency: int
    duration_ms: int


def _share(mem: float, vc: float, cap: Resources) -> float:
    """Dominant-resource share (DominantResourceCalculator.ratio)."""
    return max(mem / cap.memory_mb if cap.memory_mb > 0 else math.inf if mem > 0 else 0.0,
               vc / cap.vcores if cap.vcores > 0 else math.inf if vc > 0 else 0.0)


@dataclass
class _Slot:
    start: int
    end: int
    cost: float
    fit: int


class Planner:
    """Places one definition against the current commitments (`plan` = everything accepted)."""

    def __init__(self, capacity: Resources, commitments: Sequence[Commitment] | PlanIndex, user: str,
                 max_inst: float, exclude: str | None = None) -> None:
        self.capacity = capacity
        self._index = commitments if isinstance(commitments, PlanIndex) else PlanIndex(commitments)
        self._exclude = exclude
        self._user_name = user
        self.max_inst = max_inst
        self._ends = np.zeros(0, dtype=np.int64)  # of the load in the window being planned
        self._steps_all = self._steps_user = Steps([], [], [])

    def _gangs_fit(self, segs_all: list[Segment], segs_user: list[Segment], gang: Resources) -> int:
        fit = math.inf
        for (_, _, mem, vc) in segs_all:
            fit = min(fit, _fit(self.capacity.memory_mb - mem, self.capacity.vcores - vc, gang))
        inst = Resources(int(self.capacity.memory_mb * self.max_inst), int(self.capacity.vcores * self.max_inst))
        for (_, _, mem, vc) in segs_user:
            fit = min(fit, _fit(inst.memory_mb - mem, inst.vcores - vc, gang))
        return int(fit) if fit != math.inf else 0

    def _slot(self, start: int, end: int, mods: Timeline, gang: Resources) -> _Slot:
        segs_all = self._steps_all.segments(start, end, mods.intervals)
        cost = sum(_share(m, v, self.capacity) * (e - s) / STEP_MS for (s, e, m, v) in segs_all)
        segs_user = self._steps_user.segments(start, end, mods.intervals)
        return _Slot(start, end, cost, self._gangs_fit(segs_all, segs_user, gang))

    def _low_cost(self, stage: Stage, lo: int, hi: int, mods: Timeline) -> list[Interval] | None:
        dur = stage.duration_ms
        n_slots = (hi - lo) // dur
        if n_slots <= 0:
            return None
        gangs = stage.num_containers // stage.concurrency
        gang = Resources(stage.capability.memory_mb * stage.concurrency, stage.capability.vcores * stage.concurrency)
        per_unit = max(max(gangs // n_slots, 1) // SMOOTHNESS, 1)
        slots = [self._slot(lo + i * dur, lo + (i + 1) * dur, mods, gang) for i in range(n_slots)]
        placed: list[Interval] = []
        remaining = gangs
        while remaining > 0:
            ok = [s for s in slots if s.fit > 0]
            if not ok:
                break
            best = min(ok, key=lambda s: (s.cost, s.end))
            n = min(per_unit, remaining, best.fit)
            remaining -= n
            iv = Interval(best.start, best.end, Resources(gang.memory_mb * n, gang.vcores * n))
            mods.add(iv)
            placed.append(iv)
            if remaining > 0:  # the slot's cost and room changed; read again only if it matters
                slots[slots.index(best)] = self._slot(best.start, best.end, mods, gang)
        if remaining > 0:
            for iv in placed:
                mods.intervals.remove(iv)
            return None
        return placed

    def _greedy(self, stage: Stage, lo: int, hi: int, mods: Timeline) -> list[Interval] | None:
        """Earliest-first packing: from `lo`, each candidate start takes as many gangs as fit.

        A start later than `lo` can only help where some load ends, so the candidates are `lo`
        and the ends of the intervals in the window (instead of every plan step).
        """
        dur = stage.duration_ms
        gangs = stage.num_containers // stage.concurrency
        gang = Resources(stage.capability.memory_mb * stage.concurrency, stage.capability.vcores * stage.concurrency)
        placed: list[Interval] = []
        ends = set(self._ends[(self._ends > lo) & (self._ends <= hi - dur)].tolist())
        ends |= {iv.end for iv in mods.intervals if lo < iv.end <= hi - dur}
        for t in sorted({lo} | ends):
            if gangs <= 0 or t + dur > hi:
                break
            n = min(gangs, self._slot(t, t + dur, mods, gang).fit)
            if n > 0:
                iv = Interval(t, t + dur, Resources(gang.memory_mb * n, gang.vcores * n))
                mods.add(iv)
                placed.append(iv)
                gangs -= n
        if gangs > 0:
            for iv in placed:
                mods.intervals.remove(iv)
            return None
        return placed

    def place(self, stages: Sequence[Stage], interpreter: int, arrival: int, deadline: int) -> list[Interval]:
        """The allocation of a definition; PlanningError when the plan cannot take it."""
        for st in stages:
            _validate_stage(st)
        # 3.3.6 places stages at the exact arrival (reservation-list-with-allocations: startTime
        # "212044" = arrival mod period), so times are not rounded to the plan step here
        lo, hi = arrival, deadline
        everyone = self._index.load(lo, hi, exclude=self._exclude)
        users = self._index.load(lo, hi, user=self._user_name, exclude=self._exclude)
        self._ends = everyone.end
        self._steps_all = everyone.steps()
        # the user's load is a subset: as many intervals means the same ones (one user's plan)
        self._steps_user = self._steps_all if users.start.size == everyone.start.size else users.steps()
        for allocator in (self._low_cost, self._greedy):
            mods = Timeline([])
            got = self._place_with(allocator, stages, interpreter, lo, hi, mods)
            if got:
                return _merge(got)
        raise PlanningError("PlanningException", "The request cannot be satisfied")

    def _place_with(self, allocator, stages, interpreter, lo, hi, mods) -> list[Interval] | None:  # type: ignore[no-untyped-def]
        placed: list[Interval] = []
        prev_end = lo
        for i, st in enumerate(stages):
            if interpreter in (2, 3):  # ORDER / ORDER_NO_GAP: after the previous, leave room for later stages
                later = sum(s.duration_ms for s in stages[i + 1:])
                s_lo = prev_end
                s_hi = prev_end + st.duration_ms if interpreter == 3 else hi - later
            else:
                s_lo, s_hi = lo, hi
            got = allocator(st, s_lo, s_hi, mods)
            if got is None:
                if interpreter == 0:
                    continue
                return None
            placed += got
            prev_end = max(iv.end for iv in got)
            if interpreter == 0:
                break
        return placed or None


def _fit(mem: int, vc: int, gang: Resources) -> float:
    if mem < 0 or vc < 0:
        return 0
    fm = mem // gang.memory_mb if gang.memory_mb > 0 else math.inf
    fv = vc // gang.vcores if gang.vcores > 0 else math.inf
    return min(fm, fv)


def _validate_stage(st: Stage) -> None:
    """IterativePlanner.validateInputStage (ContractValidationException)."""
    if st.concurrency < 1:
        raise PlanningError("ContractValidationException", "Gang Size should be >= 1")
    if st.num_containers <= 0:
        raise PlanningError("ContractValidationException", "Num containers should be > 0")
    if st.num_containers % st.concurrency != 0:
        raise PlanningError("ContractValidationException", "Parallelism must be an exact multiple of gang size")


def _merge(intervals: list[Interval]) -> list[Interval]:
    """The RLE view the RM lists: breakpoints with summed resources, zero runs dropped."""
    tl = Timeline(intervals)
    lo = min(iv.start for iv in intervals)
    hi = max(iv.end for iv in intervals)
    out: list[Interval] = []
    for s, e, m, v in tl.segments(lo, hi):
        if m == 0 and v == 0:
            continue
        if out and out[-1].end == s and out[-1].resources == Resources(m, v):
            out[-1] = Interval(out[-1].start, e, out[-1].resources)
        else:
            out.append(Interval(s, e, Resources(m, v)))
    return out


def check_quota(capacity: Resources, commitments: Sequence[Commitment] | PlanIndex, new: Commitment,
                max_inst: float, max_avg: float, window_ms: int) -> None:
    """CapacityOverTimePolicy.validate: over-commit, instantaneous and integral (avg) quota."""
    index = commitments if isinstance(commitments, PlanIndex) else PlanIndex(commitments)
    lo = min(iv.start for iv in new.intervals) - window_ms
    hi = max(iv.end for iv in new.intervals) + window_ms
    if new.period > 0:
        lo, hi = lo - new.period, hi + new.period
    mine = Load.of(list(new.concrete(lo, hi)))
    rid = new.reservation_id
    everyone = index.load(lo, hi, exclude=rid)
    users = index.load(lo, hi, user=new.user, exclude=rid)
    cuts, m, v = Load.join(everyone, mine).sweep(lo, hi)
    over = np.nonzero((m > capacity.memory_mb) | (v > capacity.vcores))[0]
    if over.size:
        raise PlanningError("PlanningQuotaException",
                            f"{PLANNING_PKG}.ResourceOverCommitException:  Resources at time {int(cuts[over[0]])} would be "
                            f"overcommitted by accepting reservation: {new.reservation_id}")
    if users.start.size != everyone.start.size:  # else the same intervals (one user's plan)
        cuts, m, v = Load.join(users, mine).sweep(lo, hi)
    if ((m > capacity.memory_mb * max_inst) | (v > capacity.vcores * max_inst)).any():
        raise PlanningError("PlanningQuotaException",
                            f"Instantaneous quota capacity {max_inst} would be exceeded by accepting "
                            f"reservation: {new.reservation_id}")
    m_avg, v_avg = _window_averages(cuts, m, v, window_ms)
    if (np.round(m_avg) > capacity.memory_mb * max_avg).any() or (np.round(v_avg) > capacity.vcores * max_avg).any():
        raise PlanningError("PlanningQuotaException",
                            f"Integral (avg over time) quota capacity {_jfloat_text(max_avg)} over a window of "
                            f"{window_ms // 1000} seconds,  would be exceeded by accepting reservation: "
                            f"{new.reservation_id}")


def _window_averages(cuts: np.ndarray, m: np.ndarray, v: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Average load over every window [x, x+W) whose edge meets a breakpoint (the maxima), for
    the contiguous segments [cuts[i], cuts[i+1]) holding (m[i], v[i]); integrals from prefix sums."""
    if cuts.size < 2:
        return np.zeros(0), np.zeros(0)
    starts, ends = cuts[:-1], cuts[1:]
    width = (ends - starts).astype(float)
    cum_m = np.concatenate(([0.0], np.cumsum(m * width)))
    cum_v = np.concatenate(([0.0], np.cumsum(v * width)))

    def upto(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i = np.searchsorted(starts, x, side="right") - 1
        j = np.maximum(i, 0)
        d = np.minimum(x, ends[j]) - starts[j]
        got_m = np.where(i < 0, 0.0, cum_m[j] + m[j] * d)
        got_v = np.where(i < 0, 0.0, cum_v[j] + v[j] * d)
        return got_m, got_v

    xs = np.unique(np.concatenate((cuts, cuts - window)))
    m0, v0 = upto(xs)
    m1, v1 = upto(xs + window)
    return (m1 - m0) / window, (v1 - v0) / window


def _jfloat_text(x: float) -> str:
    """Java's Float.toString for the quota fractions we print (1.0, 0.5, 0.25 ...)."""
    text = repr(float(x))
    return text if "." in text or "e" in text else text + ".0"

"""The arbiter: global invariants on capacity updates (DESIGN.md principles 7 and 8) — pure.

Policies propose a capacity per node (`Proposal`); the arbiter alone decides what is sent:
1. Valid: 0 ≤ capacity ≤ the NodeManager's configured resources, whole numbers. The RM
   accepts negatives and silently turns a malformed body into 0/0 (fixtures README), so
   nothing reaches the actuator without this check.
2. Never below what stays allocated: capacity ≥ `floor`, the allocation that remains after the
   kills this same decision causes (signals already sent or sent now, or, with
   overCommitTimeout ≥ 0, the non-AM containers the RM itself will kill). A proposal below its
   floor is raised to it, and the reason says so.
3. Worth syncing (hysteresis): an increase is sent only when it adds at least
   `min_increase_vcores` or `min_increase_memory_mb`, a decrease only when it removes at least
   `min_decrease_*` — small wiggles of the primary do not churn the RM. A cut below the
   allocation (a kill) is always sent: the reserve must be restored within seconds.
4. Rate limit: increases of one node are at least `min_interval_s` apart; decreases are never
   delayed (safety first: a spiking primary must get its cores back now).
Kills proposed with a capacity pass through unchanged (they are already minimal).

The rules run on arrays over every node at once (`arbitrate`: numpy, no object per node): a
guard tick over 10,000 nodes, or the simulator's thousands of ticks, must not pay a Python call
per node for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from harvester.decisions.strategy import GuardStrategy
from harvester.domain import Resources


@dataclass(frozen=True, slots=True)
class PushRecord:
    """The last capacity sent for a node, and when (kept by the loop between ticks)."""

    resources: Resources
    at: float


ZERO = Resources(0, 0)

#: Outcome labels by code (`Ruling.label`); sent ones are the metric reasons of the updates.
LABELS = ("unchanged", "hysteresis", "rate_limit", "increase", "decrease", "cut", "freeze")
UNCHANGED, HYSTERESIS, RATE_LIMIT, INCREASE, DECREASE, CUT, FREEZE = range(7)


def upper(a: Resources, b: Resources) -> Resources:
    """Per-dimension maximum."""
    return Resources(max(a.memory_mb, b.memory_mb), max(a.vcores, b.vcores))


def lower(a: Resources, b: Resources) -> Resources:
    """Per-dimension minimum."""
    return Resources(min(a.memory_mb, b.memory_mb), min(a.vcores, b.vcores))


class Proposals(NamedTuple):
    """Every node's wanted capacity and what bounds it, as int64 arrays (memory MB, vcores)."""

    target_mb: np.ndarray
    target_vc: np.ndarray
    reference_mb: np.ndarray      # the capacity the RM has now
    reference_vc: np.ndarray
    allocated_mb: np.ndarray      # what containers hold now
    allocated_vc: np.ndarray
    floor_mb: np.ndarray          # allocation that remains after this decision's kills
    floor_vc: np.ndarray
    limit_mb: np.ndarray          # the NodeManager's configured resources
    limit_vc: np.ndarray
    freeze: np.ndarray            # bool: a freeze (no utilization), labelled so
    last_push_at: np.ndarray      # float: when the last capacity was sent (-inf: never)


class Ruling(NamedTuple):
    """The arbiter's verdict per node: the capacity after it, whether it is sent, the label
    (`LABELS`), whether the update cuts below the allocation (it then carries the kill's
    overCommitTimeout), and what it did to the proposal (capped at the NM, raised to the floor)."""

    after_mb: np.ndarray
    after_vc: np.ndarray
    sent: np.ndarray
    label: np.ndarray
    cuts: np.ndarray
    capped: np.ndarray
    raised: np.ndarray


def arbitrate(p: Proposals, *, now: float, strategy: GuardStrategy) -> Ruling:
    """Rules 1-4 of the module docstring, for every node at once."""
    t_mb, t_vc = np.maximum(p.target_mb, 0), np.maximum(p.target_vc, 0)
    c_mb, c_vc = np.minimum(t_mb, p.limit_mb), np.minimum(t_vc, p.limit_vc)
    capped = (c_mb != t_mb) | (c_vc != t_vc)
    r_mb = np.maximum(c_mb, np.minimum(p.floor_mb, p.limit_mb))
    r_vc = np.maximum(c_vc, np.minimum(p.floor_vc, p.limit_vc))
    raised = (r_mb != c_mb) | (r_vc != c_vc)
    down_mb, down_vc = p.reference_mb - r_mb, p.reference_vc - r_vc
    same = (down_mb == 0) & (down_vc == 0)
    cuts = (p.allocated_mb > r_mb) | (p.allocated_vc > r_vc)
    lowering = (down_mb > 0) | (down_vc > 0)  # lowering any dimension is a decrease: safety wins
    big_down = (down_vc >= strategy.min_decrease_vcores) | (down_mb >= strategy.min_decrease_memory_mb)
    big_up = (-down_vc >= strategy.min_increase_vcores) | (-down_mb >= strategy.min_increase_memory_mb)
    recent = now - p.last_push_at < strategy.min_interval_s
    label = np.full(t_mb.shape, UNCHANGED, dtype=np.int8)
    dec = lowering & ~same
    label[dec] = np.where(p.freeze[dec], FREEZE, np.where(cuts[dec], CUT, DECREASE))
    label[dec & ~(big_down | cuts)] = HYSTERESIS
    inc = ~lowering & ~same
    label[inc] = np.where(~big_up[inc], HYSTERESIS, np.where(recent[inc], RATE_LIMIT, INCREASE))
    sent = label >= INCREASE
    after_mb = np.where(sent, r_mb, p.reference_mb)
    after_vc = np.where(sent, r_vc, p.reference_vc)
    return Ruling(after_mb, after_vc, sent, label, cuts & sent, capped, raised)


def ruling_note(p: Proposals, r: Ruling, i: int, now: float, strategy: GuardStrategy) -> str:
    """What the arbiter did to node i's proposal, in words ("" when nothing)."""
    notes = []
    if r.capped[i]:
        notes.append(f"capped at NM capacity <{p.limit_mb[i]} MB, {p.limit_vc[i]} vc>")
    if r.raised[i]:
        r_mb = max(min(max(p.target_mb[i], 0), p.limit_mb[i]), min(p.floor_mb[i], p.limit_mb[i]))
        r_vc = max(min(max(p.target_vc[i], 0), p.limit_vc[i]), min(p.floor_vc[i], p.limit_vc[i]))
        notes.append(f"raised to <{r_mb} MB, {r_vc} vc>: never below the allocation that stays "
                     f"<{p.floor_mb[i]} MB, {p.floor_vc[i]} vc>")
    if r.label[i] == RATE_LIMIT:
        return f"last update {now - p.last_push_at[i]:.0f}s ago < {strategy.min_interval_s:g}s"
    return "; ".join(notes)

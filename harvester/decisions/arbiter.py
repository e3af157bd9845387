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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from harvester.decisions.strategy import GuardStrategy
from harvester.domain import Action, KillContainer, Resources, SetNodeCapacity


@dataclass(frozen=True, slots=True)
class PushRecord:
    """The last capacity sent for a node, and when (kept by the loop between ticks)."""

    resources: Resources
    at: float


@dataclass(frozen=True, slots=True)
class Proposal:
    """One node's wanted capacity, with what bounds it and the formula behind it."""

    node_id: str
    target: Resources
    reference: Resources          # the capacity the RM has now
    allocated: Resources          # what containers hold now
    floor: Resources              # allocation that remains after this decision's kills
    limit: Resources              # the NodeManager's configured resources
    overcommit_timeout_ms: int
    reason: str
    kills: tuple[KillContainer, ...] = ()
    freeze: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the arbiter did with one proposal: `label` is the metric reason."""

    node_id: str
    sent: bool
    label: str
    capacity_after: Resources
    note: str = ""


ZERO = Resources(0, 0)


def upper(a: Resources, b: Resources) -> Resources:
    """Per-dimension maximum."""
    return Resources(max(a.memory_mb, b.memory_mb), max(a.vcores, b.vcores))


def lower(a: Resources, b: Resources) -> Resources:
    """Per-dimension minimum."""
    return Resources(min(a.memory_mb, b.memory_mb), min(a.vcores, b.vcores))


def arbitrate(
    proposals: Sequence[Proposal],
    *,
    now: float,
    strategy: GuardStrategy,
    last_pushed: Mapping[str, PushRecord],
    stimulus_id: str = "",
) -> tuple[list[Action], dict[str, Outcome]]:
    """Kills first (freeing starts sooner), then the capacity updates worth sending."""
    kills: list[Action] = []
    updates: list[Action] = []
    outcomes: dict[str, Outcome] = {}
    for p in proposals:
        kills.extend(p.kills)
        notes = []
        target = upper(p.target, ZERO)
        capped = lower(target, p.limit)
        if capped != target:
            notes.append(f"capped at NM capacity <{p.limit.memory_mb} MB, {p.limit.vcores} vc>")
        raised = upper(capped, lower(p.floor, p.limit))
        if raised != capped:
            notes.append(
                f"raised to <{raised.memory_mb} MB, {raised.vcores} vc>: never below the allocation that stays "
                f"<{p.floor.memory_mb} MB, {p.floor.vcores} vc>"
            )
        target = raised
        ref = p.reference
        note = "; ".join(notes)
        if target == ref:
            outcomes[p.node_id] = Outcome(p.node_id, False, "unchanged", ref, note)
            continue
        down_vc, down_mb = ref.vcores - target.vcores, ref.memory_mb - target.memory_mb
        cuts_allocation = not p.allocated.fits_in(target)
        if down_vc > 0 or down_mb > 0:  # lowering any dimension is a decrease: safety wins, the other rides along
            big = down_vc >= strategy.min_decrease_vcores or down_mb >= strategy.min_decrease_memory_mb
            label = "freeze" if p.freeze else ("cut" if cuts_allocation else "decrease")
            if not (big or cuts_allocation):
                outcomes[p.node_id] = Outcome(p.node_id, False, "hysteresis", ref, note)
                continue
        else:
            big = (-down_vc >= strategy.min_increase_vcores) or (-down_mb >= strategy.min_increase_memory_mb)
            if not big:
                outcomes[p.node_id] = Outcome(p.node_id, False, "hysteresis", ref, note)
                continue
            last = last_pushed.get(p.node_id)
            if last is not None and now - last.at < strategy.min_interval_s:
                outcomes[p.node_id] = Outcome(
                    p.node_id, False, "rate_limit", ref, f"last update {now - last.at:.0f}s ago < {strategy.min_interval_s:g}s"
                )
                continue
            label = "increase"
        timeout = p.overcommit_timeout_ms if cuts_allocation else -1
        reason = p.reason + (f" [{note}]" if note else "")
        updates.append(SetNodeCapacity(node_id=p.node_id, resources=target, overcommit_timeout_ms=timeout,
                                       reason=reason, stimulus_id=stimulus_id))
        outcomes[p.node_id] = Outcome(p.node_id, True, label, target, note)
    return kills + updates, outcomes

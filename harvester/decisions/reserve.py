"""Reserve per class: the fitted margin made safe — floor, cap and cold start (policy).

The margin model (models/reaction_margins.py: how far a class's primary climbs within the
guard's reaction horizon; or models/margins.py: how far it moves between two 2-minute slots,
paper 004 §4) says what the reserve must absorb. Turning it into the reserve the guard keeps free is policy (DESIGN.md
principle 9):
- cold start: a class without a fitted margin, or fitted on fewer than `min_changes`
  observations (default 720 = one day of 2-minute samples), gets `cold_start` (default 0.20:
  paper 004 §4.2, "setting the margin of resource reservation to 20% ... is enough" for more
  than 90% of moments in the Google trace);
- `floor` (default 0.05) keeps a reserve even for a perfectly flat class: the primary owns its
  server (OSDI'16 §2) and a flat history is no promise;
- `cap` (default 0.50) keeps one wild class from taking all of its servers out of harvesting.
A node with no class (unknown tenant) uses the cold-start reserve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from harvester.models.margins import MarginModel


@dataclass(frozen=True, slots=True)
class ReservePolicy:
    floor: float = 0.05
    cap: float = 0.50
    cold_start: float = 0.20
    min_changes: int = 720

    def __post_init__(self) -> None:
        if not 0 <= self.floor <= self.cap <= 1 or not 0 <= self.cold_start <= 1 or self.min_changes < 1:
            raise ValueError(f"invalid reserve policy {self}: need 0 <= floor <= cap <= 1, 0 <= cold_start <= 1")


@dataclass(frozen=True)
class ReserveTable:
    """Reserve fraction (of a node's physical cores) per class, with the reason for each."""

    by_class: Mapping[str, float] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    default: float = 0.20
    default_reason: str = "cold start (no class)"

    def fraction(self, class_id: str | None) -> float:
        if class_id is None:
            return self.default
        return self.by_class.get(class_id, self.default)

    def reason(self, class_id: str | None) -> str:
        if class_id is None or class_id not in self.by_class:
            return self.default_reason
        return self.reasons[class_id]


def resolve_reserves(margins: MarginModel | None, class_ids: Iterable[str], policy: ReservePolicy) -> ReserveTable:
    """Reserve per class = clamp(margin, floor, cap), or the cold-start value (module doc)."""
    lo, hi = policy.floor, policy.cap
    clamp = lambda v: min(hi, max(lo, v))  # noqa: E731
    by_class: dict[str, float] = {}
    reasons: dict[str, str] = {}
    for cid in class_ids:
        m = None if margins is None else margins.margin(cid)
        if m is None or m.changes < policy.min_changes or not math.isfinite(m.margin):
            seen = 0 if m is None else m.changes
            by_class[cid] = clamp(policy.cold_start)
            reasons[cid] = f"cold start {policy.cold_start:.2f} ({seen} changes < {policy.min_changes})"
            continue
        by_class[cid] = clamp(m.margin)
        if margins is not None and margins.method == "reaction":
            reasons[cid] = (f"q{m.quantile:.2f} rise within H = {margins.horizon_s:g} s = {m.margin:.3f} ({m.source}), "
                            f"clamped to [{lo:.2f}, {hi:.2f}]")
        else:
            reasons[cid] = f"q{m.quantile:.2f} |Δu| = {m.margin:.3f} over {m.changes} changes, clamped to [{lo:.2f}, {hi:.2f}]"
    return ReserveTable(by_class, reasons, clamp(policy.cold_start), f"cold start {policy.cold_start:.2f} (no class)")


def fixed_reserves(class_ids: Iterable[str], fraction: float) -> ReserveTable:
    """The same reserve on every node, fitted nothing (`reserve.method: fixed`: primary-aware YARN's
    classic reserve, the evaluation's fixed-reserve baseline)."""
    why = f"fixed {fraction:.2f} (reserve.method fixed)"
    ids = list(class_ids)
    return ReserveTable({c: fraction for c in ids}, {c: why for c in ids}, fraction, why)

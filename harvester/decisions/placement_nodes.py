"""Nodes for constraint-aware placement: contention ranking and first-fit walks (paper 003).

Step 5 of decisions/constrained_placement.py. `node_pressure` is the highest CRV ratio among
the constrained dimensions a node serves; `Placer` ranks every node once (least contended,
most free vcores, index) and walks each class's share of that ranking first-fit, taking the
resources of every placement from the node for the rest of the batch, so a node is never
promised more than it has free. Placement constraints (rack affinity / anti-affinity of a
group, HARD then SOFT) are checked during the walk.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from harvester.decisions.placement_view import ClusterView
from harvester.domain import Resources
from harvester.models.constraints import Constraint, PlacementConstraint, PlacementKind, Strength

ALTERNATIVES_SCAN = 64  # nodes looked at beyond the chosen one for alternatives
WALK_CHUNK = 256  # nodes of a class's order turned into a list at a time


@dataclass(slots=True)
class Walk:
    """A class's nodes in preference order — turned into a list lazily, `WALK_CHUNK` at a time,
    since a batch mostly uses the head — and how far its fitting prefix has been used up."""

    rest: np.ndarray
    order: list[int] = field(default_factory=list)
    pointer: int = 0

    def has(self, i: int) -> bool:
        """Whether the walk has an i-th node (extending the list as needed)."""
        while i >= len(self.order):
            if not self.rest.size:
                return False
            self.order.extend(self.rest[:WALK_CHUNK].tolist())
            self.rest = self.rest[WALK_CHUNK:]
        return True


def node_pressure(view: ClusterView, ratios: Mapping[Constraint, float]) -> np.ndarray:
    """Per node: the highest CRV ratio among the constrained dimensions it serves."""
    out = np.zeros(view.size)
    for c, ratio in ratios.items():
        if math.isfinite(ratio) and ratio > 0:
            np.maximum(out, np.where(view.table.mask(c), ratio, 0.0), out=out)
    return out


class Placer:
    """Walks each class's node order, taking resources as tasks are placed (step 5)."""

    def __init__(self, view: ClusterView, job_id: str, pressure: np.ndarray) -> None:
        v = view
        self.view, self.job_id, self.pressure = v, job_id, pressure
        self.free_mb = v.free_mb.astype(np.int64).tolist()
        self.free_vc = v.free_vcores.astype(np.int64).tolist()
        self.walks: dict[tuple[str, str, int, int], Walk] = {}
        self.groups: dict[tuple[str, str, PlacementKind], set[int]] = {}
        # one ranking of every node (least contended, then most free vcores, then index); a class's
        # order is this ranking filtered by its mask, soft-satisfying nodes first
        self.ranking = np.lexsort((np.arange(v.size), -v.free_vcores, pressure))

    def walk(self, eff_key: str, full_key: str, eff_mask: np.ndarray, full_mask: np.ndarray, r: Resources) -> Walk:
        wk = (eff_key, full_key, r.memory_mb, r.vcores)
        w = self.walks.get(wk)
        if w is None:
            v, g = self.view, self.ranking
            ok = (eff_mask & (v.total_mb >= r.memory_mb) & (v.total_vcores >= r.vcores))[g]
            preferred = full_mask[g]
            order = g[ok & preferred] if eff_key == full_key else np.concatenate([g[ok & preferred], g[ok & ~preferred]])
            w = self.walks[wk] = Walk(order)
        return w

    def take(self, w: Walk, mb: int, vc: int, want: int) -> tuple[list[int], bool]:
        """`choose` for a task without placement constraints, in one tight loop (the common case)."""
        order, fm, fv = w.order, self.free_mb, self.free_vc
        p = w.pointer
        while True:
            if p >= len(order) and not w.has(p):
                w.pointer = p
                w.has(want - 1)
                return order[:want], False  # nothing fits now: the best satisfying nodes
            n = order[p]
            if fm[n] >= mb and fv[n] >= vc:
                break
            p += 1  # free space only shrinks within a batch: skip it for good
        w.pointer = p
        fm[n] -= mb
        fv[n] -= vc
        out = [n]
        i, end = p + 1, p + 1 + ALTERNATIVES_SCAN
        while len(out) < want and i < end and (i < len(order) or w.has(i)):
            m = order[i]
            i += 1
            if fm[m] >= mb and fv[m] >= vc:
                out.append(m)
        return out, True

    def _fits(self, n: int, r: Resources) -> bool:
        return self.free_mb[n] >= r.memory_mb and self.free_vc[n] >= r.vcores

    def _placement_ok(self, n: int, placement: tuple[PlacementConstraint, ...], strengths: tuple[Strength, ...]) -> bool:
        for pc in placement:
            if pc.strength not in strengths:
                continue
            codes, _ = self.view.table.codes(pc.scope)
            code = int(codes[n])
            used = self.groups.get((pc.group or self.job_id, pc.scope, pc.kind), set())
            if code < 0:
                return False
            if pc.kind is PlacementKind.AFFINITY and used and code not in used:
                return False
            if pc.kind is PlacementKind.ANTI_AFFINITY and code in used:
                return False
        return True

    def choose(self, r: Resources, placement: tuple[PlacementConstraint, ...], w: Walk,
               want: int) -> tuple[list[int], bool]:
        """Up to `want` nodes for a task of size `r` with `placement` constraints: the first fits
        now and is taken; (nodes, fits_now). Without placement constraints, see `take`."""
        if not placement:
            return self.take(w, r.memory_mb, r.vcores, want)
        order = w.order
        while w.has(w.pointer) and not self._fits(order[w.pointer], r):
            w.pointer += 1  # free space only shrinks within a batch: skip it for good
        chosen = self._scan(r, placement, w, (Strength.HARD, Strength.SOFT), fitting=True, limit=1)
        if not chosen and any(pc.strength is Strength.SOFT for pc in placement):
            chosen = self._scan(r, placement, w, (Strength.HARD,), fitting=True, limit=1)
        if not chosen:
            return self._scan(r, placement, w, (Strength.HARD,), fitting=False, limit=want, start=0), False
        n = chosen[0]
        self.free_mb[n] -= r.memory_mb
        self.free_vc[n] -= r.vcores
        for pc in placement:
            codes, _ = self.view.table.codes(pc.scope)
            self.groups.setdefault((pc.group or self.job_id, pc.scope, pc.kind), set()).add(int(codes[n]))
        more = self._scan(r, placement, w, (Strength.HARD,), fitting=True, limit=want - 1, skip=n,
                          budget=ALTERNATIVES_SCAN)
        return [n, *more], True

    def _scan(self, r: Resources, placement: tuple[PlacementConstraint, ...], w: Walk, strengths: tuple[Strength, ...], *,
              fitting: bool, limit: int, skip: int = -1, start: int | None = None, budget: int | None = None) -> list[int]:
        out: list[int] = []
        order = w.order
        i = w.pointer if start is None else start
        looked = 0
        while len(out) < limit and (budget is None or looked < budget) and w.has(i):
            n = order[i]
            i += 1
            looked += 1
            if n == skip or (fitting and not self._fits(n, r)):
                continue
            if self._placement_ok(n, placement, strengths):
                out.append(n)
        return out

"""Node order per job-length class for the RM's multi-node lookup plug-in (OSDI'16 §4.1) — pure.

Algorithm 1 sends a job to a class drawn with probability ∝ weightedroom = Headroom(type, c) ×
W[type][c.pattern] (lines 6, 10). Inside YARN no job comes to us: the CapacityScheduler walks a
node order per queue (its `MultiNodeLookupPolicy`) and puts each container on the FIRST node
with room. The deterministic counterpart of line 10 for such a walk, per job type:

1. classes ranked by weighted room, highest first (ties by class id). Room is Algorithm 1's
   `headroom_containers` before the division by a container size (the RM plug-in orders nodes
   for every job of the queue, whatever its container): vcores =
   (headroom fraction(type) − reserve fraction) × class capacity − allocated, ≥ 0, with the
   §4.1 headroom of `class_selection.headroom_fraction` (short: 1 − current; medium:
   1 − max(average, current); long: 1 − max(peak, current)). A class with no weighted room is
   ranked after every class with room, by the same order;
2. within a class, nodes by the guard's current harvestable capacity (the capacity it pushed
   to the RM, `NodeView.capacity_after`; else the formula's `harvestable`), most vcores first,
   then node id;
3. left out of the order: nodes the guard has no fresh view of (`stale`) and nodes with no
   harvestable vcores — the plug-in ranks every node not in the order after the advised ones,
   in Hadoop's own resource-usage order, so nothing is excluded from scheduling;
4. nodes of no class (no model yet, or a tenant the model does not know) follow the ranked
   classes, by harvestable capacity.
A guard decision older than `stale_after_s` (or none) gives EMPTY orders: the plug-ins then
use Hadoop's default order rather than an old view (never act on stale data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from harvester.decisions.class_selection import ClassState, Weights, headroom_fraction
from harvester.decisions.guard import NodeView
from harvester.models.job_history import JobType


@dataclass(frozen=True, slots=True)
class NodeOrder:
    """The advised order for one job type, best first, and why."""

    job_type: JobType
    node_ids: tuple[str, ...]
    reason: str


def class_room_vcores(job_type: JobType, c: ClassState) -> float:
    """Algorithm 1's room of class c for this job type, in vcores (module docstring, step 1)."""
    h = headroom_fraction(job_type, c)
    return max(0.0, (h - c.reserve_fraction) * c.capacity.vcores - c.allocated.vcores)


def _capacity_vcores(v: NodeView) -> int:
    r = v.capacity_after if v.capacity_after is not None else v.harvestable
    return 0 if r is None else r.vcores


class _Rows(NamedTuple):
    """What steps 2-3 read of each node view: id, class, stale, capacity vcores (step 2)."""

    node_ids: Sequence[str]
    class_ids: Sequence[str | None]
    stale: np.ndarray
    capacity_vc: np.ndarray


def _rows(nodes: Sequence[NodeView]) -> _Rows:
    """The views' columns: read from the guard's arrays when it kept them (a `NodeViews` of
    50,000 nodes is not built view by view, issue 29), else from each view."""
    stale, harvestable = getattr(nodes, "stale", None), getattr(nodes, "harvestable_vc", None)
    if stale is not None and harvestable is not None:
        cap = np.where(nodes.has_after, nodes.after_vc, harvestable)  # type: ignore[attr-defined]
        return _Rows(nodes.node_ids, nodes.class_ids, stale, cap)  # type: ignore[attr-defined]
    views = list(nodes)
    return _Rows([v.node_id for v in views], [v.class_id for v in views],
                 np.fromiter((v.stale for v in views), bool, len(views)),
                 np.fromiter((_capacity_vcores(v) for v in views), np.int64, len(views)))


def order_nodes(
    job_type: JobType,
    classes: Sequence[ClassState],
    nodes: Sequence[NodeView] | _Rows,
    weights: Weights,
) -> NodeOrder:
    """Steps 1-4 of the module docstring for one job type."""
    rows = nodes if isinstance(nodes, _Rows) else _rows(nodes)
    w = weights[job_type]
    weighted = {c.class_id: class_room_vcores(job_type, c) * float(w.get(c.pattern, 0.0)) for c in classes}
    ranked = sorted(weighted, key=lambda cid: (-weighted[cid], cid))
    rank = {cid: k for k, cid in enumerate(ranked)}
    unranked = len(ranked)
    usable = np.flatnonzero(~rows.stale & (rows.capacity_vc > 0)).tolist()
    cap = rows.capacity_vc.tolist()
    ids, cls = rows.node_ids, rows.class_ids
    usable.sort(key=lambda i: (rank.get(cls[i], unranked), -cap[i], ids[i]))  # type: ignore[arg-type]
    stale = int(rows.stale.sum())
    empty = len(ids) - stale - len(usable)
    if ranked:
        head = ", ".join(f"{cid} {weighted[cid]:.1f}" for cid in ranked[:4]) + (" ..." if len(ranked) > 4 else "")
        why = f"{job_type.value}: classes by weighted room (vcores × W): {head}"
    else:
        why = f"{job_type.value}: no class model yet, nodes by harvestable capacity"
    why += f"; {len(usable)} nodes advised"
    if stale or empty:
        why += f", left out: {stale} without a fresh guard view, {empty} without harvestable vcores"
    return NodeOrder(job_type, tuple(ids[i] for i in usable), why)


def order_all(
    classes: Sequence[ClassState],
    nodes: Sequence[NodeView] | None,
    weights: Weights,
    *,
    decision_age_s: float | None,
    stale_after_s: float,
) -> Mapping[JobType, NodeOrder]:
    """The order of every job type; empty orders when the guard's decision is missing or old."""
    if nodes is None or decision_age_s is None:
        return {t: NodeOrder(t, (), f"{t.value}: the guard has not decided yet") for t in JobType}
    if decision_age_s > stale_after_s:
        why = f"the guard's last decision is {decision_age_s:.0f} s old (> {stale_after_s:g} s): no advice"
        return {t: NodeOrder(t, (), f"{t.value}: {why}") for t in JobType}
    rows = _rows(nodes)  # read once for every job type
    return {t: order_nodes(t, classes, rows, weights) for t in JobType}

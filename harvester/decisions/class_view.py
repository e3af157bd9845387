"""Classes as Algorithm 1 sees them now: model tags + the current snapshot — pure.

Algorithm 1 needs, per class, the §4.1 tags (pattern, average, peak: the model) and the
servers' CURRENT utilization and capacity (the cluster now). `class_states` joins them:
- current = mean primary CPU utilization (primary cores / physical cores) over the class's
  nodes with fresh utilization; a class with none falls back to its PEAK (conservative: the
  long-job headroom, so a class we cannot see is never ranked as empty);
- capacity = the NodeManagers' configured resources summed over the class's nodes;
- allocated = what YARN containers hold on them now (fresh nodes only);
- memory_free_mb = free harvestable memory after the guard's last decision, when given;
- reserve_fraction from the reserve table.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from harvester.decisions.class_selection import ClassState
from harvester.decisions.guard import GuardDecision
from harvester.decisions.guard_table import NodeView, NodeViews
from harvester.decisions.reserve import ReserveTable
from harvester.decisions.strategy import NodeStrategy
from harvester.domain import ClusterSnapshot, Resources
from harvester.models.tenant_series import primary_cpu_cores_array
from harvester.models.utilization_classes import TenantClassModel


def nodes_per_class(model: TenantClassModel, nodes: Mapping[str, NodeStrategy]) -> dict[str, int]:
    tenant_class = model.tenant_class_map()
    out: dict[str, int] = {}
    for ns in nodes.values():
        cid = tenant_class.get(ns.tenant)
        if cid is not None:
            out[cid] = out.get(cid, 0) + 1
    return out


def class_states(
    model: TenantClassModel,
    reserves: ReserveTable,
    nodes: Mapping[str, NodeStrategy],
    snapshot: ClusterSnapshot | None,
    *,
    now: float,
    stale_after_s: float,
    guard: GuardDecision | None = None,
) -> tuple[ClassState, ...]:
    """One `ClassState` per class of `model` that has at least one node (sums over node arrays:
    a guard period over 50,000 nodes publishes it, issue 29)."""
    tenant_class = model.tenant_class_map()
    index = {c.class_id: k for k, c in enumerate(model.classes)}
    fresh = snapshot is not None and now - snapshot.time <= stale_after_s
    samples = {n.node_id: n for n in snapshot.nodes} if fresh and snapshot is not None else {}
    member = [(ns, index.get(tenant_class.get(ns.tenant, ""), -1)) for ns in nodes.values()]
    member = [(ns, k) for ns, k in member if k >= 0 and tenant_class.get(ns.tenant) is not None]
    m, k_classes = len(member), len(model.classes)
    cls = np.fromiter((k for _, k in member), np.int64, m)
    phys = np.fromiter((ns.physical_cores for ns, _ in member), np.float64, m)

    def per_class(values: np.ndarray, where: np.ndarray | None = None) -> list[float]:
        w = values if where is None else np.where(where, values, 0)
        return np.bincount(cls, weights=w, minlength=k_classes).tolist()

    count = np.bincount(cls, minlength=k_classes).tolist()
    mem = per_class(np.fromiter((ns.capacity.memory_mb for ns, _ in member), np.float64, m))
    vc = per_class(np.fromiter((ns.capacity.vcores for ns, _ in member), np.float64, m))
    found = [samples.get(ns.node_id) for ns, _ in member]
    live = np.fromiter((x is not None and x.state == "RUNNING" and not now - x.time > stale_after_s for x in found), bool, m)
    xs = [x if ok else None for x, ok in zip(found, live.tolist())]
    used_mb = np.fromiter((x.used.memory_mb if x else 0 for x in xs), np.float64, m)
    amem, avc = per_class(used_mb), per_class(np.fromiter((x.used.vcores if x else 0 for x in xs), np.float64, m))
    # the guard already worked the primary out from this very snapshot: no second pass over it
    primary = primary_cpu_cores_array(
        np.fromiter((_nan(x.node_cpu_cores) if x else np.nan for x in xs), np.float64, m),
        np.fromiter((_nan(x.containers_cpu_vcores) if x else np.nan for x in xs), np.float64, m),
        np.fromiter((_nan(x.node_memory_mb) if x else np.nan for x in xs), np.float64, m), phys,
        np.fromiter((ns.capacity.vcores for ns, _ in member), np.float64, m),
        np.fromiter((x.total.vcores if x else 0 for x in xs), np.float64, m))
    free = np.zeros(m)
    if guard is not None:
        views = guard.nodes
        rows = views if isinstance(views, NodeViews) else _Rows(views)
        at = np.fromiter((-1 if (r := rows.row(ns.node_id)) is None else r for ns, _ in member), np.int64, m)
        has = at >= 0
        pick = np.where(has, at, 0)
        cols = rows.columns()
        primary = np.where(has, cols[0][pick] if len(cols[0]) else np.nan, primary)
        after_ok = has & (cols[1][pick] if len(cols[1]) else False)
        free = np.where(after_ok & live, np.maximum(0.0, (cols[2][pick] if len(cols[2]) else 0) - used_mb), 0.0)
    seen = live & ~np.isnan(primary)
    with np.errstate(invalid="ignore", divide="ignore"):
        util = per_class(np.minimum(1.0, primary / phys), seen)
    n_seen = np.bincount(cls, weights=seen.astype(np.float64), minlength=k_classes).tolist()
    free_sum = per_class(free)
    out = []
    for k, c in enumerate(model.classes):
        if not count[k]:
            continue
        current = util[k] / n_seen[k] if n_seen[k] else c.peak
        out.append(ClassState(
            class_id=c.class_id, pattern=c.pattern, average=c.average, peak=c.peak, current=current,
            capacity=Resources(int(mem[k]), int(vc[k])), allocated=Resources(int(amem[k]), int(avc[k])),
            reserve_fraction=reserves.fraction(c.class_id), memory_free_mb=free_sum[k] if guard is not None else None,
            nodes=int(count[k]),
        ))
    return tuple(out)


def _nan(v: float | None) -> float:
    return np.nan if v is None else v


class _Rows:
    """`NodeViews`' row lookup and (primary, has capacity after, memory after) columns over any views."""

    def __init__(self, views: Sequence[NodeView]) -> None:
        self._index = {v.node_id: i for i, v in enumerate(views)}
        self._views = views

    def row(self, node_id: str) -> int | None:
        return self._index.get(node_id)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        v = self._views
        return (np.array([np.nan if x.primary_cpu_cores is None else x.primary_cpu_cores for x in v], np.float64),
                np.array([x.capacity_after is not None for x in v], bool),
                np.array([0 if x.capacity_after is None else x.capacity_after.memory_mb for x in v], np.float64))

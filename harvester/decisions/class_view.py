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

from typing import Mapping

import numpy as np

from harvester.decisions.class_selection import ClassState
from harvester.decisions.guard import GuardDecision
from harvester.decisions.guard_table import NodeViews
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
    a guard period over 50,000 nodes publishes it, issue 29). With the guard's decision over these
    very nodes, its columns are reused (the guard already read this snapshot)."""
    tenant_class = model.tenant_class_map()
    index = {c.class_id: k for k, c in enumerate(model.classes)}
    views = guard.nodes if guard is not None else None
    if isinstance(views, NodeViews) and views.source is nodes and views.nodes is not None:
        c = views.nodes
        cls = np.array([index.get(tenant_class.get(t, ""), -1) for t in c.tenants], np.int64)
        free = np.where(views.has_after & c.fresh, np.maximum(0, views.after_mb - c.used_mb), 0)
        cols = (cls, c.physical_cores, c.capacity_mb, c.capacity_vc, c.fresh, c.used_mb, c.used_vc, views.primary, free)
    else:
        cols = _columns(index, tenant_class, nodes, snapshot, now, stale_after_s, guard)
    return _states(model, reserves, *cols, with_free=guard is not None)


def _columns(index: Mapping[str, int], tenant_class: Mapping[str, str], nodes: Mapping[str, NodeStrategy],
             snapshot: ClusterSnapshot | None, now: float, stale_after_s: float, guard: GuardDecision | None
             ) -> tuple[np.ndarray, ...]:
    """Per node: class index (-1: none), cores, capacity, fresh, allocation, primary cores, free memory."""
    fresh = snapshot is not None and now - snapshot.time <= stale_after_s
    samples = {n.node_id: n for n in snapshot.nodes} if fresh and snapshot is not None else {}
    ns_all = list(nodes.values())
    m = len(ns_all)
    cls = np.array([index.get(tenant_class.get(ns.tenant, ""), -1) for ns in ns_all], np.int64)
    phys = np.array([ns.physical_cores for ns in ns_all], np.float64)
    found = [samples.get(ns.node_id) for ns in ns_all]
    live = np.array([x is not None and x.state == "RUNNING" and not now - x.time > stale_after_s for x in found], bool)
    xs = [x if ok else None for x, ok in zip(found, live.tolist())]
    used_mb = np.array([x.used.memory_mb if x else 0 for x in xs], np.float64)
    used_vc = np.array([x.used.vcores if x else 0 for x in xs], np.float64)
    cap_vc = np.array([ns.capacity.vcores for ns in ns_all], np.float64)
    primary = primary_cpu_cores_array(
        np.array([x.node_cpu_cores if x else None for x in xs], np.float64),
        np.array([x.containers_cpu_vcores if x else None for x in xs], np.float64),
        np.array([x.node_memory_mb if x else None for x in xs], np.float64), phys, cap_vc,
        np.array([x.total.vcores if x else 0 for x in xs], np.float64))
    free = np.zeros(m)
    if guard is not None:  # the guard already worked the primary out from this very snapshot
        by_id = {v.node_id: v for v in guard.nodes}
        for i, ns in enumerate(ns_all):
            v = by_id.get(ns.node_id)
            if v is None:
                continue
            primary[i] = np.nan if v.primary_cpu_cores is None else v.primary_cpu_cores
            if v.capacity_after is not None and live[i]:
                free[i] = max(0, v.capacity_after.memory_mb - used_mb[i])
    return (cls, phys, np.array([ns.capacity.memory_mb for ns in ns_all], np.float64), cap_vc, live, used_mb, used_vc,
            primary, free)


def _states(model: TenantClassModel, reserves: ReserveTable, cls: np.ndarray, phys: np.ndarray, cap_mb: np.ndarray,
            cap_vc: np.ndarray, live: np.ndarray, used_mb: np.ndarray, used_vc: np.ndarray, primary: np.ndarray,
            free: np.ndarray, *, with_free: bool) -> tuple[ClassState, ...]:
    """The module docstring's sums per class, from the nodes' columns."""
    k_classes = len(model.classes)
    member = cls >= 0
    cls = cls[member]

    def per_class(values: np.ndarray, where: np.ndarray | None = None) -> list[float]:
        v = values[member] if where is None else np.where(where, values, 0)[member]
        return np.bincount(cls, weights=np.asarray(v, np.float64), minlength=k_classes).tolist()

    count = np.bincount(cls, minlength=k_classes).tolist()
    seen = live & ~np.isnan(primary)
    with np.errstate(invalid="ignore", divide="ignore"):
        util = per_class(np.minimum(1.0, primary / phys), seen)
    n_seen, mem, vc = per_class(seen.astype(np.float64)), per_class(cap_mb), per_class(cap_vc)
    amem, avc, free_sum = per_class(used_mb, live), per_class(used_vc, live), per_class(free)
    out = []
    for k, c in enumerate(model.classes):
        if not count[k]:
            continue
        current = util[k] / n_seen[k] if n_seen[k] else c.peak
        out.append(ClassState(
            class_id=c.class_id, pattern=c.pattern, average=c.average, peak=c.peak, current=current,
            capacity=Resources(int(mem[k]), int(vc[k])), allocated=Resources(int(amem[k]), int(avc[k])),
            reserve_fraction=reserves.fraction(c.class_id), memory_free_mb=free_sum[k] if with_free else None,
            nodes=int(count[k]),
        ))
    return tuple(out)

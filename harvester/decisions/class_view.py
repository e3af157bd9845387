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

from harvester.decisions.class_selection import ClassState
from harvester.decisions.guard import GuardDecision
from harvester.decisions.reserve import ReserveTable
from harvester.decisions.strategy import NodeStrategy
from harvester.domain import ClusterSnapshot, Resources
from harvester.models.tenant_series import primary_cpu_cores
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
    """One `ClassState` per class of `model` that has at least one node."""
    tenant_class = model.tenant_class_map()
    fresh = snapshot is not None and now - snapshot.time <= stale_after_s
    samples = {n.node_id: n for n in snapshot.nodes} if fresh and snapshot is not None else {}
    views = {v.node_id: v for v in guard.nodes} if guard is not None else {}
    acc: dict[str, dict[str, float]] = {}
    for ns in nodes.values():
        cid = tenant_class.get(ns.tenant)
        if cid is None:
            continue
        a = acc.setdefault(cid, {"n": 0, "mem": 0, "vc": 0, "amem": 0, "avc": 0, "util": 0.0, "seen": 0, "free": 0.0})
        a["n"] += 1
        a["mem"] += ns.capacity.memory_mb
        a["vc"] += ns.capacity.vcores
        s = samples.get(ns.node_id)
        if s is None or s.state != "RUNNING" or now - s.time > stale_after_s:
            continue
        a["amem"] += s.used.memory_mb
        a["avc"] += s.used.vcores
        v = views.get(ns.node_id)
        # the guard already worked the primary out from this very snapshot: no second pass over it
        primary = v.primary_cpu_cores if v is not None else primary_cpu_cores(s, ns.physical_cores, ns.capacity.vcores)
        if primary is not None:
            a["util"] += min(1.0, primary / ns.physical_cores)
            a["seen"] += 1
        cap = None if v is None else v.capacity_after
        if cap is not None:
            a["free"] += max(0, cap.memory_mb - s.used.memory_mb)
    out = []
    for c in model.classes:
        a = acc.get(c.class_id)
        if a is None:
            continue
        current = a["util"] / a["seen"] if a["seen"] else c.peak
        out.append(ClassState(
            class_id=c.class_id, pattern=c.pattern, average=c.average, peak=c.peak, current=current,
            capacity=Resources(int(a["mem"]), int(a["vc"])), allocated=Resources(int(a["amem"]), int(a["avc"])),
            reserve_fraction=reserves.fraction(c.class_id), memory_free_mb=a["free"] if guard is not None else None,
            nodes=int(a["n"]),
        ))
    return tuple(out)

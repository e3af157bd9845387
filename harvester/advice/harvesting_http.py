"""JSON documents of the harvesting read side: GET /v1/harvesting/classes and /nodes.

Both are plain data built from values published on the state board (board/harvesting.py: the
`HarvestingView`, the guard loop's `GuardStatus`), shared by the admin HTTP routes and
`harvester tenants` (which builds the classes document from the history store when it reads
the store directly).

/v1/harvesting/classes: the current class model — classes (pattern, average and peak
utilization, member tenants, nodes, reserve and why, current utilization when the guard has
run) and the tenant → class map with each tenant's profile (OSDI'16 §4.1 tags).

/v1/harvesting/nodes: the guard's last decision per node — its view (`NodeView`): tenant,
class, capacity (total), the formula's harvestable capacity, the capacity after the arbiter,
primary and reserve cores, stale or not, the outcome (`sent:<increase|decrease|cut|freeze>`, in a
dry run `would_send:<…>`,
`skipped:<unchanged|hysteresis|rate_limit>`, `stale:<snapshot|missing|node|no_utilization>`)
and the reason (the formula, with the arbiter's notes in brackets); plus nodes left out (no
tenant, unknown size), kills in flight with their lifecycle history, and the last actions with
their stimulus, formula and fate (sent, would send (dry run), not sent, failed: <error>).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from harvester.board.harvesting import GuardStatus
from harvester.decisions.class_selection import ClassState
from harvester.decisions.guard import GuardDecision
from harvester.decisions.kills import KillRecord
from harvester.decisions.reserve import ReserveTable
from harvester.domain import Resources
from harvester.models.utilization_classes import TenantClassModel


def _res(r: Resources | None) -> dict[str, int] | None:
    return None if r is None else {"memory_mb": r.memory_mb, "vcores": r.vcores}


def classes_document(
    model: TenantClassModel | None,
    reserves: ReserveTable | None,
    class_nodes: Mapping[str, int] | None = None,
    current: tuple[ClassState, ...] = (),
) -> dict[str, Any]:
    """The class model as JSON (module docstring); `class_nodes` None = unknown (no live view)."""
    if model is None:
        return {"model_version": None, "fitted_at": None, "classes": [], "tenants": [], "skipped": [],
                "why": "no class model is fitted yet (it needs tenant history: see docs/harvesting.md)"}
    now = {c.class_id: c for c in current}
    members: dict[str, list[str]] = {c.class_id: [] for c in model.classes}
    for a in model.tenants:
        members[a.class_id].append(a.tenant)
    classes = []
    for c in model.classes:
        state = now.get(c.class_id)
        classes.append({
            "class_id": c.class_id, "pattern": c.pattern.value, "average": c.average, "peak": c.peak,
            "tenants": members[c.class_id], "weight": c.weight,
            "nodes": None if class_nodes is None else class_nodes.get(c.class_id, 0),
            "reserve_fraction": None if reserves is None else reserves.fraction(c.class_id),
            "reserve_reason": None if reserves is None else reserves.reason(c.class_id),
            "current_utilization": None if state is None else state.current,
            "capacity": None if state is None else _res(state.capacity),
            "allocated": None if state is None else _res(state.allocated),
        })
    tenants = [
        {"tenant": a.tenant, "class_id": a.class_id, "pattern": a.pattern.value, "average": a.average, "peak": a.peak,
         "periodic_share": a.periodic_share, "std": a.std, "samples": a.samples, "fallback": a.fallback}
        for a in model.tenants
    ]
    return {
        "model_version": model.version, "fitted_at": model.fitted_at, "classes": classes, "tenants": tenants,
        "skipped": [{"tenant": t, "why": why} for t, why in model.skipped],
    }


def _kill(rec: KillRecord) -> dict[str, Any]:
    return {"container_id": rec.container_id, "node_id": rec.node_id, "phase": rec.phase.value, "since": rec.since,
            "history": [{"phase": p.value, "at": at, "why": why} for p, at, why in rec.history]}


def nodes_document(decision: GuardDecision | None, status: GuardStatus, *, actions: int = 50) -> dict[str, Any]:
    """The guard's per-node view and its own state as JSON (module docstring)."""
    nodes = []
    if decision is not None:
        for v in decision.nodes:
            nodes.append({
                "node_id": v.node_id, "tenant": v.tenant, "class_id": v.class_id, "total": _res(v.total),
                "harvestable": _res(v.harvestable), "capacity_after": _res(v.capacity_after),
                "primary_cpu_cores": v.primary_cpu_cores, "reserve_cpu_cores": v.reserve_cpu_cores,
                "stale": v.stale, "outcome": v.outcome, "reason": v.reason, "kills": v.kills,
            })
    return {
        "as_of": None if decision is None else decision.as_of,
        "actuate": status.actuate,
        "nodes": nodes,
        "left_out": dict(status.left_out),
        "kills_in_flight": [_kill(k) for k in status.kills],
        "recent_kills": [_kill(k) for k in list(status.finished_kills)[-actions:]],
        "recent_actions": [dataclasses.asdict(e) for e in list(status.recent)[-actions:]] if actions > 0 else [],
    }

"""The built-in subjects of `harvester explain`: node, tenant, job, and reservation (Morpheus's and
Jockey's, advice/explain_reservation.py) — advice/explain.py says how.

- node ID: the guard's current view of it (sidecar only: formula, inputs, outcome, data age),
  its kills in flight, and the last decisions on it (capacity updates, kills) from the log;
- tenant NAME: its profile and why that pattern (OSDI'16 §3.2 test with the fit's thresholds),
  its class (k-means over average/peak, §4.1) and reserve (paper 004 §4) with their reasons,
  the rule that maps nodes to it, its nodes now, and the last decisions on its nodes;
- job NAME (a recurring job's name, or an application id): advice/explain_job.py — its runs and
  type (Algorithm 1), the apps running now and what the RM preempted, kills, Morpheus's SLO,
  reservation and service (reserved, or static fallback and why: decisions/static_fallback.py),
  Jockey's control.
"""

from __future__ import annotations

from typing import Any, Sequence

from harvester.advice.explain_job import ABOUT as JOB_ABOUT
from harvester.advice.explain_job import SEARCHED as JOB_SEARCHED
from harvester.advice.explain_job import explain_job, known_jobs
from harvester.advice.explain_reservation import ABOUT as RESERVATION_ABOUT
from harvester.advice.explain_reservation import LIVE_ONLY as RESERVATION_LIVE_ONLY
from harvester.advice.explain_reservation import SEARCHED as RESERVATION_SEARCHED
from harvester.advice.explain_reservation import explain_reservation, known_reservations
from harvester.advice.explain import Explainers, ExplainSources, levers, setting, subject_doc
from harvester.decisions.guard import NodeView
from harvester.decisions.guard_table import NodeViews
from harvester.decisions.reserve import resolve_reserves
from harvester.decisions.strategy import reserve_policy
from harvester.domain import Resources
from harvester.models.patterns import Pattern
from harvester.models.utilization_classes import TenantAssignment, TenantClassModel


def builtin_explainers() -> Explainers:
    """The kinds every Harvester explains; a capability that lands adds its own here."""
    e = Explainers()
    e.add("node", explain_node, "a NodeManager (id host:port; with rm.clusters subcluster/host:port): its capacity, the guard's formula, kills, last actions",
          known_nodes)
    e.add("tenant", explain_tenant, "a primary tenant: its pattern and class, reserve, nodes, last actions",
          known_tenants)
    e.add("job", explain_job, JOB_ABOUT, known_jobs, searched=JOB_SEARCHED)
    e.add("reservation", explain_reservation, RESERVATION_ABOUT, known_reservations, live_only=RESERVATION_LIVE_ONLY,
          searched=RESERVATION_SEARCHED)
    return e


def _node_ids(views: Sequence[NodeView]) -> list[str]:
    """The ids of the guard's views without building them (NodeViews keeps them as a column)."""
    return list(views.node_ids) if isinstance(views, NodeViews) else [v.node_id for v in views]


def known_nodes(s: ExplainSources) -> list[str]:
    """Nodes the guard sees now (sidecar) and nodes with stored samples."""
    live = [] if s.live is None or s.live.harvesting.guard is None else _node_ids(s.live.harvesting.guard.nodes)
    left_out = [] if s.live is None else list(s.live.guard.left_out)
    return [*live, *left_out, *s.store.node_ids()]


def known_tenants(s: ExplainSources) -> list[str]:
    model = s.live.harvesting.model if s.live is not None and s.live.harvesting.model is not None else s.store.class_model()
    return [r.tenant for r in s.harvesting.tenants] + ([] if model is None else [a.tenant for a in model.tenants])


def _res(r: Resources | None) -> str:
    return "-" if r is None else f"<{r.memory_mb} MB, {r.vcores} vc>"


def _view(v: NodeView, data_age_s: float | None) -> dict[str, Any]:
    return {"node_id": v.node_id, "tenant": v.tenant, "class_id": v.class_id, "total": _res(v.total),
            "harvestable": _res(v.harvestable), "capacity_after": _res(v.capacity_after),
            "primary_cpu_cores": v.primary_cpu_cores, "reserve_cpu_cores": v.reserve_cpu_cores, "stale": v.stale,
            "outcome": v.outcome, "formula": v.reason, "kills": v.kills, "data_age_s": data_age_s}


def _data_age(s: ExplainSources) -> float | None:
    live = s.live
    if live is None or live.harvesting.guard is None or live.guard.last_acted_snapshot is None:
        return None
    return max(0.0, live.harvesting.guard.as_of - live.guard.last_acted_snapshot)


# --- node ----------------------------------------------------------------------------------

def node_subcluster(s: ExplainSources, node_id: str) -> tuple[str, str, list[str]]:
    """(qualified id, sub-cluster, its RM URLs) of a node (harvester/subclusters.py): with
    rm.clusters, ids are `name/host:port` and a bare host:port known in exactly one sub-cluster
    is taken as that one's; without, the one implicit sub-cluster `default`."""
    from rm_client.redact import redact_url

    clusters = {c.name: c for c in s.settings.rm.clusters} if s.settings.cluster.source == "rm" else {}
    if not clusters:
        return node_id, "default", [redact_url(str(u)) for u in s.settings.rm.urls]
    if "/" not in node_id:
        found = sorted({k for k in known_nodes(s) if k.endswith("/" + node_id)})
        node_id = found[0] if len(found) == 1 else node_id
    name = node_id.partition("/")[0] if "/" in node_id else ""
    c = clusters.get(name)
    return node_id, name, [] if c is None else [redact_url(str(u)) for u in c.urls]


def explain_node(s: ExplainSources, node_id: str, limit: int) -> dict[str, Any] | None:
    node_id, subcluster, rm_urls = node_subcluster(s, node_id)
    decisions = s.store.decisions(since=s.since(), node_id=node_id, limit=limit)
    live = s.live
    view = None
    if live is not None and live.harvesting.guard is not None:
        views = live.harvesting.guard.nodes
        view = views.get(node_id) if isinstance(views, NodeViews) else next((v for v in views if v.node_id == node_id), None)
    left_out = None if live is None else live.guard.left_out.get(node_id)
    if view is None and not decisions and left_out is None:
        return None
    summary: list[str] = [f"sub-cluster {subcluster} (RM {', '.join(rm_urls) or 'unknown'})"] \
        if s.settings.rm.clusters and s.settings.cluster.source == "rm" else []
    now: dict[str, Any] | None = None
    if view is not None:
        age = _data_age(s)
        now = _view(view, age)
        summary.append(f"tenant {view.tenant}, class {view.class_id or 'none'}: capacity {_res(view.capacity_after)} of "
                       f"{_res(view.total)} — {view.outcome}" + ("" if age is None else f", data {age:.0f} s old"))
        summary.append(f"formula: {view.reason}")
        settings = levers(s, "set_capacity", view.outcome, "", view.reason)
    else:
        if left_out is not None:
            summary.append(f"not harvested: {left_out} (harvesting.tenants, harvesting.node_resources)")
        if decisions:
            d = decisions[0]
            summary.append(f"last action {d.kind} {d.detail} ({d.fate}); formula: {d.reason}")
        settings = [] if not decisions else levers(s, decisions[0].kind, str(decisions[0].inputs.get("outcome", "")),
                                                   decisions[0].fate, decisions[0].reason)
    kills = [] if live is None else [
        {"container_id": k.container_id, "phase": k.phase.value, "since": k.since,
         "history": [{"phase": p.value, "at": at, "why": why} for p, at, why in k.history]}
        for k in live.guard.kills if k.node_id == node_id]
    if kills:
        summary.append(f"{len(kills)} kill(s) in flight")
    if not decisions:
        summary.append(f"no action on it in the last {s.settings.store.decision_log_days:g} days (store.decision_log_days)")
    return subject_doc("node", node_id, s, summary=summary, decisions=decisions, settings=settings, now=now,
                       kills_in_flight=kills, left_out=left_out, subcluster=subcluster, rm_urls=rm_urls)


# --- tenant --------------------------------------------------------------------------------

def why_pattern(a: TenantAssignment, model: TenantClassModel) -> str:
    """The §3.2 test's outcome for one tenant, with the fit's own thresholds (models/patterns.py)."""
    p = model.params.patterns
    cv = a.std / a.average if a.average > 0 else float("inf")
    if a.fallback:
        return (f"unpredictable by fallback: {a.fallback} ({a.samples} samples; patterns.min_samples {p.min_samples}, "
                f"patterns.min_days_periodic {p.min_days_periodic:g})")
    if a.pattern is Pattern.CONSTANT:
        return (f"constant: std {a.std:.3f} ≤ patterns.constant_max_std {p.constant_max_std:g} or "
                f"cv {cv:.2f} ≤ patterns.constant_max_cv {p.constant_max_cv:g}")
    test = f"daily-band share {a.periodic_share:.2f} {'≥' if a.pattern is Pattern.PERIODIC else '<'} " \
           f"patterns.periodic_min_share {p.periodic_min_share:g}"
    return (f"{a.pattern.value}: {test}; not constant (std {a.std:.3f} > {p.constant_max_std:g}, "
            f"cv {cv:.2f} > {p.constant_max_cv:g})")


def explain_tenant(s: ExplainSources, tenant: str, limit: int) -> dict[str, Any] | None:
    live = s.live
    model = live.harvesting.model if live is not None and live.harvesting.model is not None else s.store.class_model()
    assignment = None if model is None else next((a for a in model.tenants if a.tenant == tenant), None)
    decisions = s.store.decisions(since=s.since(), tenant=tenant, limit=limit)
    nodes = []
    if live is not None and live.harvesting.guard is not None:
        nodes = [_view(v, None) for v in live.harvesting.guard.nodes if v.tenant == tenant]
    rules = [r for r in s.harvesting.tenants if r.tenant == tenant]
    if assignment is None and not decisions and not nodes and not rules:
        return None
    summary: list[str] = []
    klass: dict[str, Any] | None = None
    if assignment is not None and model is not None:
        c = model.class_by_id(assignment.class_id)
        reserves = resolve_reserves(s.store.margin_model(model.version), [x.class_id for x in model.classes],
                                    reserve_policy(s.harvesting))
        klass = {"class_id": assignment.class_id, "pattern": assignment.pattern.value,
                 "average": None if c is None else c.average, "peak": None if c is None else c.peak,
                 "tenants": None if c is None else c.tenants, "reserve_fraction": reserves.fraction(assignment.class_id),
                 "reserve_reason": reserves.reason(assignment.class_id), "model_version": model.version,
                 "fitted_at": model.fitted_at}
        summary.append(f"class {assignment.class_id} of model v{model.version} (fitted {s.now - model.fitted_at:.0f} s ago): "
                       + why_pattern(assignment, model))
        if c is not None:
            summary.append(f"class {c.class_id}: k-means over (average, peak) of {c.pattern.value} tenants → average "
                           f"{c.average:.2f}, peak {c.peak:.2f}, {c.tenants} tenant(s) (harvesting.clustering.max_k "
                           f"{s.harvesting.clustering.max_k})")
        summary.append(f"reserve {klass['reserve_fraction']:.2f} of each node's cores: {klass['reserve_reason']}")
    elif model is None:
        summary.append("no class model yet: see `harvester tenants` for what to configure and when classes appear")
    else:
        why = dict(model.skipped).get(tenant, "not in the model's window (no slot stored for it yet)")
        summary.append(f"not classified by model v{model.version}: {why}")
    slots = s.store.tenant_slots(since=s.now - 3 * s.harvesting.sample_step_s, tenants=[tenant])
    current = slots[-1].utilization if slots else None
    if current is not None:
        summary.append(f"primary utilization in the newest 2-minute slot: {current:.2f} over {slots[-1].nodes} node(s)")
    rule_text = [r.model_dump() for r in rules]
    if not rules:
        summary.append("no harvesting.tenants rule names it: "
                       + ("the embedded demo's rule" if s.settings.cluster.source == "embedded" and s.harvesting.tenants
                          else f"a node of its own (harvesting.unmatched_nodes: {s.harvesting.unmatched_nodes})"))
    if nodes:
        summary.append(f"{len(nodes)} node(s) now: " + ", ".join(
            f"{n['node_id']} {n['capacity_after']} ({n['outcome']})" for n in nodes[:8]) + (" …" if len(nodes) > 8 else ""))
    settings = [{"key": "harvesting.tenants", "value": rule_text, "effect": "the rule(s) that make nodes this tenant's"},
                setting(s, "harvesting.patterns.periodic_min_share", "the daily-band share that makes a tenant periodic"),
                setting(s, "harvesting.patterns.constant_max_std", "the variation below which a tenant is constant"),
                setting(s, "harvesting.reserve.quantile", "the quantile of utilization changes the reserve covers"),
                setting(s, "harvesting.window_days", "how much history the class model looks at"),
                setting(s, "harvesting.refit_interval_s", "how often classes are refitted")]
    return subject_doc("tenant", tenant, s, summary=summary, decisions=decisions, settings=settings,
                       profile=None if assignment is None else {
                           "pattern": assignment.pattern.value, "average": assignment.average, "peak": assignment.peak,
                           "periodic_share": assignment.periodic_share, "std": assignment.std,
                           "samples": assignment.samples, "fallback": assignment.fallback},
                       rules=rule_text, nodes=nodes, current_utilization=current, **{"class": klass})

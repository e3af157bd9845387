"""The guard's decision as it was before issue 29, node by node (a Python pass per node) — the
ORACLE of tests/property/test_guard_array_agreement.py: the array decision (decisions/guard.py)
must give the same actions, views, memos, coverage and last resorts on any cluster.
Copied from harvester/decisions/guard.py and guard_kills.kill_limit at 561708b; not used by
the product."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from harvester.decisions.arbiter import LABELS, RATE_LIMIT, ZERO, Proposals, arbitrate, lower, ruling_note
from harvester.decisions.guard_kills import plan_kills
from harvester.decisions.guard import GuardContext, GuardDecision, NodeMemo, NodeView, _unknown  # live code runs it per node too
from harvester.decisions.strategy import GuardStrategy, NodeStrategy
from harvester.domain import Action, ClusterSnapshot, ContainerInfo, ContainerState, KillContainer, NodeSample, Resources, SetNodeCapacity
from harvester.models.tenant_series import primary_cpu_cores

RISE_FRACTION = 0.01  # a primary rise counts for coverage from 1 % of the node's cores


@dataclass(slots=True)
class _Seen:
    """What the guard worked out for a node before the arbiter ruled (for its view)."""

    ns: NodeStrategy
    class_id: str
    target: Resources | None
    primary: float | None
    reserve_cores: float
    why: str | tuple
    kills: int


def _node_containers(snap: ClusterSnapshot) -> tuple[dict[str, list[ContainerInfo]], dict[str, Resources]]:
    """Live containers per node, and the ApplicationMasters' allocation per node (listed containers
    flagged AM, or the apps list's AMs when containers are not listed)."""
    by_node: dict[str, list[ContainerInfo]] = {}
    ams: dict[str, Resources] = {}
    seen: set[str] = set()
    for c in snap.containers:
        if c.state is not ContainerState.COMPLETE:
            by_node.setdefault(c.node_id, []).append(c)
            if c.is_am:
                seen.add(c.container_id)
                ams[c.node_id] = ams.get(c.node_id, ZERO) + c.resources
    for c in snap.am_containers:
        if c.container_id not in seen and c.state is not ContainerState.COMPLETE:
            ams[c.node_id] = ams.get(c.node_id, ZERO) + c.resources
    return by_node, ams


def evaluate_per_node(ctx: GuardContext) -> GuardDecision:
    """Propose per node (formula, victims, floor), let the arbiter rule, and explain each node."""
    snap, s, now = ctx.snapshot, ctx.strategy, ctx.now
    views: list[NodeView] = []
    if snap is None or now - snap.time > s.stale_after_s:
        why = "no telemetry yet" if snap is None else f"telemetry {now - snap.time:.0f}s old > {s.stale_after_s:g}s"
        for ns in ctx.nodes.values():
            views.append(_stale_view(ns, ctx, why, "stale:snapshot"))
        return GuardDecision(now, (), tuple(views))
    samples = {n.node_id: n for n in snap.nodes}
    by_node, ams_by_node = _node_containers(snap)
    proposals: list[_Proposal] = []
    pending: dict[str, _Seen] = {}
    memos: dict[str, NodeMemo] = {}
    rises: Counter[str] = Counter()
    absorbed: Counter[str] = Counter()
    am_kills: list[tuple[str, str]] = []
    fraction, tenant_class, previous = ctx.reserves.fraction, ctx.tenant_class, ctx.previous
    for node_id, ns in ctx.nodes.items():
        sample = samples.get(node_id)
        if sample is None:
            views.append(_stale_view(ns, ctx, "not in the last snapshot", "stale:missing"))
            continue
        if sample.state != "RUNNING" or now - sample.time > s.stale_after_s:
            why = f"node {sample.state}" if sample.state != "RUNNING" else f"sample {now - sample.time:.0f}s old"
            views.append(_stale_view(ns, ctx, why, "stale:node"))
            continue
        class_id = tenant_class.get(ns.tenant, "")
        frac = fraction(class_id or None)
        reserve_cores = frac * ns.physical_cores
        primary = primary_cpu_cores(sample, ns.physical_cores, ns.capacity.vcores)
        prev = previous.get(node_id)
        if primary is None:
            memos[node_id], why, freeze = _unknown(sample, prev, now, s)
            if freeze is not None:
                proposals.append(_Proposal(node_id, freeze, sample.total, sample.used, freeze, ns.capacity, -1,
                                           why, (), True, sample.time))
            pending[node_id] = _Seen(ns, class_id, None, None, reserve_cores, why, 0)
            continue
        target, formula = _harvestable(ns, sample, primary, reserve_cores, frac, class_id, s)
        used, total = sample.used, sample.total
        memos[node_id] = NodeMemo(target, primary, used, sample.time)
        # an increase needs the previous fresh sample's consent (module docstring)
        consent = prev.target if prev is not None else total
        bound = Resources(max(total.memory_mb, consent.memory_mb), max(total.vcores, consent.vcores))
        proposed = target if target.fits_in(bound) else lower(target, bound)
        held = "" if proposed is target else (
            "; increase held: first sample of the node, unconfirmed" if prev is None else
            "; increase held: first sample with utilization, unconfirmed" if math.isnan(prev.primary_cpu_cores) else
            f"; increase held to <{proposed.memory_mb} MB, {proposed.vcores} vc> (the previous sample's target)")
        limit = kill_limit(ns, sample, primary, target, s)
        plan = plan_kills(s, now, ctx.stimulus_id, ctx.kills, ns, sample, target, limit, reserve_cores,
                          by_node.get(node_id, []), ams_by_node.get(node_id, ZERO), snap.containers_complete)
        killing = plan.cut_to is not None and not used.fits_in(plan.cut_to) or bool(plan.kills)
        if prev is not None and prev.allocated.vcores > 0 and primary - prev.primary_cpu_cores >= RISE_FRACTION * ns.physical_cores:
            rises[class_id] += 1
            absorbed[class_id] += not killing
        if plan.am_kill:
            am_kills.append((node_id, plan.am_kill))
        note = plan.note
        why = formula + (held + (f"; {note}" if note else ""),)
        # a cut to what the primary leaves never raises past the consent either
        proposals.append(_Proposal(node_id, lower(plan.cut_to, bound) if plan.cut_to is not None else proposed, total,
                                   used, plan.floor, ns.capacity, plan.timeout, why, plan.kills, False, sample.time))
        pending[node_id] = _Seen(ns, class_id, target, primary, reserve_cores, why, len(plan.kills))
    actions, outcomes = _rule(proposals, ctx)
    for node_id, seen in pending.items():
        o = outcomes.get(node_id)
        outcome = "stale:no_utilization" if o is None else f"{'sent' if o[0] else 'skipped'}:{o[1]}"
        note = "" if o is None else o[3]
        why = seen.why if not note else (seen.why + f" [{note}]" if isinstance(seen.why, str) else seen.why + (f" [{note}]",))
        views.append(NodeView(
            node_id, seen.ns.tenant, seen.class_id, seen.ns.capacity, seen.target, seen.primary, seen.reserve_cores,
            seen.target is None, why, outcome, None if o is None else o[2], seen.kills,
        ))
    coverage = {c: (rises[c], absorbed[c]) for c in rises}
    return GuardDecision(now, tuple(actions), tuple(views), memos, coverage, tuple(am_kills))


class _Proposal(NamedTuple):
    """One node's wanted capacity and what bounds it, before the arbiter's ruling."""

    node_id: str
    target: Resources
    reference: Resources          # the capacity the RM has now
    allocated: Resources          # what containers hold now
    floor: Resources              # allocation that remains after this decision's kills
    limit: Resources              # the NodeManager's configured resources
    overcommit_timeout_ms: int
    why: str | tuple              # the reason (tuple: the formula's numbers, rendered only if sent)
    kills: tuple[KillContainer, ...]
    freeze: bool
    data_at: float                # the node sample's time (principle 16: the actuator's deadline)


def _rule(proposals: list[_Proposal], ctx: GuardContext
          ) -> tuple[list[Action], dict[str, tuple[bool, str, Resources, str]]]:
    """The arbiter's ruling over every proposal at once: kills first (freeing starts sooner), then
    the capacity updates worth sending; per node (sent, label, capacity after, note)."""
    if not proposals:
        return [], {}
    s, now = ctx.strategy, ctx.now

    def col(f, dtype=np.int64) -> np.ndarray:  # type: ignore[no-untyped-def]
        return np.fromiter((f(p) for p in proposals), dtype, len(proposals))

    last = ctx.last_pushed
    p = Proposals(
        col(lambda p: p.target.memory_mb), col(lambda p: p.target.vcores),
        col(lambda p: p.reference.memory_mb), col(lambda p: p.reference.vcores),
        col(lambda p: p.allocated.memory_mb), col(lambda p: p.allocated.vcores),
        col(lambda p: p.floor.memory_mb), col(lambda p: p.floor.vcores),
        col(lambda p: p.limit.memory_mb), col(lambda p: p.limit.vcores),
        col(lambda p: p.freeze, bool),
        col(lambda p: last[p.node_id].at if p.node_id in last else -math.inf, np.float64),
    )
    r = arbitrate(p, now=now, strategy=s)
    kills: list[Action] = [k for prop in proposals for k in prop.kills]
    updates: list[Action] = []
    outcomes: dict[str, tuple[bool, str, Resources, str]] = {}
    notable = np.flatnonzero(r.sent | r.capped | r.raised | (r.label == RATE_LIMIT)).tolist()
    notes = {i: ruling_note(p, r, i, now, s) for i in notable}
    for i, prop in enumerate(proposals):
        sent, label = bool(r.sent[i]), LABELS[r.label[i]]
        note = notes.get(i, "")
        after = Resources(int(r.after_mb[i]), int(r.after_vc[i])) if sent else prop.reference
        outcomes[prop.node_id] = (sent, label, after, note)
        if sent:
            text = prop.why if isinstance(prop.why, str) else _render(prop.why)
            updates.append(SetNodeCapacity(
                node_id=prop.node_id, resources=after,
                overcommit_timeout_ms=prop.overcommit_timeout_ms if r.cuts[i] else -1,
                reason=text + (f" [{note}]" if note else ""), stimulus_id=ctx.stimulus_id, data_at=prop.data_at))
    return kills + updates, outcomes


def _render(why: tuple) -> str:
    """The formula's text from `_harvestable`'s numbers, then what was appended to it."""
    cores, primary, reserve, frac, class_id, ratio, vcores, host, p_mem, r_mem, free, mem = why[:12]
    text = (f"cpu {cores:g} cores − primary {primary:.2f} − reserve {reserve:.2f} ({frac:.2f} × {cores:g}, class "
            f"{class_id or 'none'}) = {cores - primary - reserve:.2f} cores × {ratio:.3g} vc/core → {vcores} vcores")
    if host is None:
        text += f"; memory not harvested → {mem} MB"
    else:
        text += f"; mem {host} − primary {p_mem:.0f} − reserve {r_mem:.0f} = {free:.0f} → {mem} MB"
    return text + "".join(why[12:])


def _stale_view(ns: NodeStrategy, ctx: GuardContext, why: str, outcome: str) -> NodeView:
    class_id = ctx.tenant_class.get(ns.tenant, "")
    reserve = ctx.reserves.fraction(class_id or None) * ns.physical_cores
    return NodeView(ns.node_id, ns.tenant, class_id, ns.capacity, None, None, reserve, True,
                    f"{why}: no new capacity, no kill", outcome)


def _harvestable(
    ns: NodeStrategy, sample: NodeSample, primary: float, reserve_cores: float, frac: float, class_id: str,
    s: GuardStrategy,
) -> tuple[Resources, tuple]:
    """The capacity formula of the module docstring, and its numbers (`_render` writes the text)."""
    cores = ns.physical_cores - primary - reserve_cores
    ratio = ns.vcores_per_core
    vcores = min(ns.capacity.vcores, max(0, math.floor(cores * ratio + 1e-9)))
    host = ns.host_memory_mb
    if host is None or sample.node_memory_mb is None:
        mem_mb = ns.capacity.memory_mb
        return Resources(mem_mb, vcores), (ns.physical_cores, primary, reserve_cores, frac, class_id, ratio, vcores,
                                           None, 0.0, 0.0, 0.0, mem_mb)
    p_mem = max(0.0, sample.node_memory_mb - (sample.containers_memory_mb or 0.0))
    r_mem = s.memory_reserve_fraction * host
    free = host - p_mem - r_mem
    mem = min(ns.capacity.memory_mb, max(0, math.floor(free)))
    return Resources(mem, vcores), (ns.physical_cores, primary, reserve_cores, frac, class_id, ratio, vcores,
                                    host, p_mem, r_mem, free, mem)


def kill_limit(ns: NodeStrategy, sample: NodeSample, primary: float, target: Resources, s: GuardStrategy) -> Resources:
    """What the allocation must fit before anything is killed (module docstring)."""
    if s.kill_when == "reserve_used":
        return target
    vcores = min(ns.capacity.vcores, max(0, math.floor((ns.physical_cores - primary) * ns.vcores_per_core + 1e-9)))
    host = ns.host_memory_mb
    if host is None or sample.node_memory_mb is None:
        return Resources(target.memory_mb, vcores)
    p_mem = max(0.0, sample.node_memory_mb - (sample.containers_memory_mb or 0.0))
    return Resources(min(ns.capacity.memory_mb, max(0, math.floor(host - p_mem))), vcores)

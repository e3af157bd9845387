"""The guard: harvestable capacity per node and kills on a primary spike (OSDI'16 §2, §4.1) — pure.

The paper keeps a reserve "that cannot be given to batch tasks; a spiking primary tenant can
immediately consume this reserve until our software can react (within a few seconds at most)
to replenish the reserve" (§2). YARN 3.3 allows this from outside the RM: every control
period, per node,

    harvestable cores = physical cores − primary cores − reserve cores
    primary cores     = node CPU (physical cores) − containers' CPU (vcores → cores), ≥ 0,
                        converted with max(NM configured vcores, current total vcores)
                        (models/tenant_series.primary_cpu_cores says why: never under-states)
    reserve cores     = reserve fraction of the node's class (models/margins.py, paper 004 §4)
                        × physical cores
    capacity vcores   = ⌊harvestable cores × NM vcores / physical cores⌋, within [0, NM vcores]
    capacity memory   = NM memory, or with host RAM configured:
                        ⌊host RAM − primary memory − reserve memory⌋ within [0, NM memory]

pushed to the RM with the node resource update (`SetNodeCapacity`), through the arbiter
(decisions/arbiter.py: validation, never below the allocation that stays, hysteresis, rate
limits). When the allocation no longer fits — the primary spiked into the reserve — batch
containers on that node are killed until it fits again. Batch use is measured by ALLOCATION:
a container may burst to its allocation at any moment, and allocation is what the RM's own
overcommit check compares.

Which mechanism kills — DECIDED WITH EVIDENCE (`harvesting.guard.kill_mechanism`):
- `rm_overcommit` (DEFAULT): push the cut with overCommitTimeout T (default 0 ms). Evidence
  (fixtures scenarios/overcommit-timeout, 3.3.6 AbstractYarnScheduler.
  signalContainersIfOvercommitted): within ~40 ms of the POST the RM kills the YOUNGEST
  non-AM containers, EXACTLY enough for the allocation to fit under dominant resource
  fairness, never an AM. It acts on the RM's own current allocation, so there is no race with
  containers that started or ended since our poll, and it re-checks at every NM heartbeat
  (kills stop as soon as the node fits). The AM sees exit -102 "preempted"; MapReduce's
  RMContainerAllocator.createContainerFinishedEvent turns PREEMPTED into TA_KILL, which does
  NOT count against mapreduce.*.maxattempts, whereas a signalled container (exit 143/137) is
  TA_CONTAINER_COMPLETED → a FAILED attempt that does count (4 failures fail the job). The
  app's preemption counters also record it. One REST call per node, not one per container.
  Cost: the RM picks victims (youngest non-AM only; no priorities).
- `signals`: push the capacity with T = -1 (the RM never kills) and send GRACEFUL_SHUTDOWN to
  victims we choose — lowest `ContainerInfo.priority` value first (read as YARN application
  priority, higher = more important), then youngest, never AMs unless `kill_ams` — then
  FORCEFUL_SHUTDOWN if still listed after `escalation_delay_s` (SIGTERM ~0.9 s / SIGKILL
  ~0.3 s after the POST, scenarios/signal-and-kill). Priority-aware, but victims fail attempts
  (143/137) and the choice is made on our (seconds-old) view of the allocation.
- `signals_with_backstop`: signals as above, and the cut carries T = `backstop_timeout_ms`, so
  the RM kills youngest non-AMs if the node is still over-committed when T expires (it checks
  at each heartbeat and does nothing once our victims are gone).
Both are "within seconds"; the default favours exactness and MapReduce's retry accounting.
Distributed shell replaces neither kind of victim (fixtures): that cost is the same.

Fail safe (never act on what we cannot see):
- the whole snapshot older than `stale_after_s` (or none): no action on any node — the RM may
  be unreachable, and an old allocation is no basis for a cut;
- a node missing from the snapshot, not RUNNING, or with an old sample: no action;
- a node in a fresh snapshot without utilization: no kill, no increase; with
  `freeze_on_stale` its capacity is lowered to its current allocation (T = -1, which kills
  nothing) so no NEW work lands there until utilization returns.
Every action carries its formula as its reason and the time of the node sample it was decided
from (`data_at`): the actuator drops it when that is older than the staleness limit at sending.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Mapping, NamedTuple

from harvester.decisions.arbiter import ZERO, Proposal, PushRecord, arbitrate, lower
from harvester.decisions.kills import KillPhase, KillRecord
from harvester.decisions.reserve import ReserveTable
from harvester.decisions.strategy import GuardStrategy, KillMechanism, NodeStrategy
from harvester.domain import (
    Action, ClusterSnapshot, ContainerInfo, ContainerState, KillContainer, NodeSample, Resources, SetNodeCapacity,
)
from harvester.models.tenant_series import primary_cpu_cores


@dataclass(frozen=True)
class GuardContext:
    """Everything one guard decision needs (the loop builds it each control period)."""

    now: float
    snapshot: ClusterSnapshot | None
    nodes: Mapping[str, NodeStrategy]
    tenant_class: Mapping[str, str]
    reserves: ReserveTable
    strategy: GuardStrategy
    last_pushed: Mapping[str, PushRecord] = field(default_factory=dict)
    kills: Mapping[str, KillRecord] = field(default_factory=dict)
    stimulus_id: str = ""


@dataclass(frozen=True, slots=True)
class NodeView:
    """The guard's view of one node (served by ListNodeCapacities)."""

    node_id: str
    tenant: str
    class_id: str
    total: Resources
    harvestable: Resources | None
    primary_cpu_cores: float | None
    reserve_cpu_cores: float
    stale: bool
    reason: str
    outcome: str
    capacity_after: Resources | None = None
    kills: int = 0


@dataclass(frozen=True)
class GuardDecision:
    as_of: float
    actions: tuple[Action, ...]
    nodes: tuple[NodeView, ...]

    def harvested_vcores_by_node(self) -> dict[str, int]:
        return {v.node_id: v.capacity_after.vcores for v in self.nodes if v.capacity_after is not None}

    def harvested_vcores_by_class(self) -> dict[str, int]:
        out: Counter[str] = Counter()
        for v in self.nodes:
            if v.capacity_after is not None:
                out[v.class_id] += v.capacity_after.vcores
        return dict(out)

    def outcomes(self) -> dict[str, int]:
        """Counts by outcome label (sent:<label>, skipped:<label>, stale:<why>)."""
        return dict(Counter(v.outcome for v in self.nodes))

    def kills_by_reason(self) -> dict[str, int]:
        out: Counter[str] = Counter()
        for a in self.actions:
            if isinstance(a, KillContainer):
                out["signal_graceful" if a.graceful else "signal_forceful"] += 1
            elif isinstance(a, SetNodeCapacity) and a.overcommit_timeout_ms >= 0:
                out["rm_overcommit"] += 1  # a cut below allocation the RM enforces after T
        return dict(out)


def decide(ctx: GuardContext) -> list[Action]:
    """The actions of one control period (see `evaluate` for the per-node view)."""
    return list(evaluate(ctx).actions)


class _Seen(NamedTuple):
    """What the guard worked out for a node before the arbiter ruled (for its view)."""

    ns: NodeStrategy
    class_id: str
    target: Resources | None
    primary: float | None
    reserve_cores: float
    reason: str
    kills: int


def evaluate(ctx: GuardContext) -> GuardDecision:
    """Propose per node (formula, victims, floor), let the arbiter rule, and explain each node."""
    snap, s, now = ctx.snapshot, ctx.strategy, ctx.now
    views: list[NodeView] = []
    if snap is None or now - snap.time > s.stale_after_s:
        why = "no telemetry yet" if snap is None else f"telemetry {now - snap.time:.0f}s old > {s.stale_after_s:g}s"
        for ns in ctx.nodes.values():
            views.append(_stale_view(ns, ctx, why, "stale:snapshot"))
        return GuardDecision(now, (), tuple(views))
    samples = {n.node_id: n for n in snap.nodes}
    by_node: dict[str, list[ContainerInfo]] = {}
    for c in snap.containers:
        if c.state is not ContainerState.COMPLETE:
            by_node.setdefault(c.node_id, []).append(c)
    proposals: list[Proposal] = []
    pending: dict[str, _Seen] = {}
    for node_id, ns in ctx.nodes.items():
        sample = samples.get(node_id)
        if sample is None:
            views.append(_stale_view(ns, ctx, "not in the last snapshot", "stale:missing"))
            continue
        if sample.state != "RUNNING" or now - sample.time > s.stale_after_s:
            why = f"node {sample.state}" if sample.state != "RUNNING" else f"sample {now - sample.time:.0f}s old"
            views.append(_stale_view(ns, ctx, why, "stale:node"))
            continue
        class_id = ctx.tenant_class.get(ns.tenant, "")
        frac = ctx.reserves.fraction(class_id or None)
        reserve_cores = frac * ns.physical_cores
        primary = primary_cpu_cores(sample, ns.physical_cores, ns.capacity.vcores)
        if primary is None:
            why = "no utilization reported"
            if s.freeze_on_stale:
                freeze = lower(sample.total, sample.used)
                proposals.append(Proposal(node_id, freeze, sample.total, sample.used, freeze, ns.capacity, -1,
                                          f"{why}: freeze at allocation <{freeze.memory_mb} MB, {freeze.vcores} vc>; no kill",
                                          freeze=True))
            pending[node_id] = _Seen(ns, class_id, None, None, reserve_cores, why, 0)
            continue
        target, formula = _harvestable(ns, sample, primary, reserve_cores, frac, class_id, s)
        containers = by_node.get(node_id, [])
        kills, floor, timeout, kill_note = _plan_kills(ctx, ns, sample, target, containers, snap.containers_complete)
        reason = formula + (f"; {kill_note}" if kill_note else "")
        proposals.append(Proposal(node_id, target, sample.total, sample.used, floor, ns.capacity, timeout, reason,
                                  tuple(kills)))
        pending[node_id] = _Seen(ns, class_id, target, primary, reserve_cores, reason, len(kills))
    actions, outcomes = arbitrate(proposals, now=now, strategy=s, last_pushed=ctx.last_pushed, stimulus_id=ctx.stimulus_id)
    # principle 16: each action carries the time of the sample it was decided from
    actions = [replace(a, data_at=samples[a.node_id].time if a.node_id in samples else snap.time)  # type: ignore[attr-defined]
               for a in actions]
    for node_id, seen in pending.items():
        o = outcomes.get(node_id)
        outcome = "stale:no_utilization" if o is None else f"{'sent' if o.sent else 'skipped'}:{o.label}"
        views.append(NodeView(
            node_id, seen.ns.tenant, seen.class_id, seen.ns.capacity, seen.target, seen.primary, seen.reserve_cores,
            seen.target is None, seen.reason + (f" [{o.note}]" if o is not None and o.note else ""), outcome,
            None if o is None else o.capacity_after, seen.kills,
        ))
    return GuardDecision(now, tuple(actions), tuple(views))


def _stale_view(ns: NodeStrategy, ctx: GuardContext, why: str, outcome: str) -> NodeView:
    class_id = ctx.tenant_class.get(ns.tenant, "")
    reserve = ctx.reserves.fraction(class_id or None) * ns.physical_cores
    return NodeView(ns.node_id, ns.tenant, class_id, ns.capacity, None, None, reserve, True,
                    f"{why}: no new capacity, no kill", outcome)


def _harvestable(
    ns: NodeStrategy, sample: NodeSample, primary: float, reserve_cores: float, frac: float, class_id: str,
    s: GuardStrategy,
) -> tuple[Resources, str]:
    """The capacity formula of the module docstring, and its text."""
    cores = ns.physical_cores - primary - reserve_cores
    ratio = ns.vcores_per_core
    vcores = min(ns.capacity.vcores, max(0, math.floor(cores * ratio + 1e-9)))
    cpu = (f"cpu {ns.physical_cores:g} cores − primary {primary:.2f} − reserve {reserve_cores:.2f} "
           f"({frac:.2f} × {ns.physical_cores:g}, class {class_id or 'none'}) = {cores:.2f} cores "
           f"× {ratio:.3g} vc/core → {vcores} vcores")
    host = ns.host_memory_mb
    if host is None or sample.node_memory_mb is None:
        return Resources(ns.capacity.memory_mb, vcores), cpu + f"; memory not harvested → {ns.capacity.memory_mb} MB"
    p_mem = max(0.0, sample.node_memory_mb - (sample.containers_memory_mb or 0.0))
    r_mem = s.memory_reserve_fraction * host
    free = host - p_mem - r_mem
    mem = min(ns.capacity.memory_mb, max(0, math.floor(free)))
    return Resources(mem, vcores), cpu + f"; mem {host} − primary {p_mem:.0f} − reserve {r_mem:.0f} = {free:.0f} → {mem} MB"


def _plan_kills(
    ctx: GuardContext, ns: NodeStrategy, sample: NodeSample, target: Resources,
    containers: list[ContainerInfo], containers_known: bool,
) -> tuple[list[KillContainer], Resources, int, str]:
    """(kill actions, allocation floor after them, overCommitTimeout for a cut, note)."""
    s, now = ctx.strategy, ctx.now
    allocated = sample.used
    ams = ZERO  # what the RM never kills: the floor of a cut it enforces
    for c in containers:
        if c.is_am:
            ams = ams + c.resources
    if s.kill_mechanism is not KillMechanism.SIGNALS:
        backstop = s.kill_mechanism is KillMechanism.SIGNALS_WITH_BACKSTOP
        timeout = s.backstop_timeout_ms if backstop else s.overcommit_timeout_ms
    else:
        timeout = -1
    if s.kill_mechanism is KillMechanism.RM_OVERCOMMIT:
        if allocated.fits_in(target):
            return [], allocated, timeout, ""
        return [], ams, timeout, (
            f"allocated <{allocated.memory_mb} MB, {allocated.vcores} vc> does not fit: the RM kills the youngest "
            f"non-AM containers, exactly enough, {timeout} ms after the update (overCommitTimeout)"
        )
    # signals: escalate graceful kills that outlived the delay, then pick new victims
    listed = {c.container_id: c for c in containers}
    kills: list[KillContainer] = []
    freeing = ZERO
    for rec in ctx.kills.values():
        c = listed.get(rec.container_id)
        if rec.node_id != ns.node_id or c is None:
            continue
        freeing = freeing + c.resources
        if rec.phase is KillPhase.GRACEFUL and now - rec.since >= s.escalation_delay_s and (s.kill_ams or not c.is_am):
            kills.append(KillContainer(
                container_id=c.container_id, node_id=ns.node_id, graceful=False, stimulus_id=ctx.stimulus_id,
                reason=f"still running {now - rec.since:.0f}s after GRACEFUL_SHUTDOWN ≥ escalation delay "
                       f"{s.escalation_delay_s:g}s: FORCEFUL_SHUTDOWN",
            ))
    remaining = allocated - freeing
    if remaining.fits_in(target):
        floor = remaining if timeout < 0 else ams
        return kills, floor, timeout, ""
    if not containers_known:
        return kills, remaining if timeout < 0 else ams, timeout, "containers not listed: no victim can be chosen"
    eligible = sorted(
        (c for c in containers if c.container_id not in ctx.kills and (s.kill_ams or not c.is_am)),
        key=lambda c: (c.priority, -c.started_at, c.container_id),
    )
    picked = []
    for c in eligible:
        if remaining.fits_in(target):
            break
        picked.append(c)
        remaining = remaining - c.resources
    for c in picked:
        kills.append(KillContainer(
            container_id=c.container_id, node_id=ns.node_id, graceful=True, stimulus_id=ctx.stimulus_id,
            reason=(f"allocated <{allocated.memory_mb} MB, {allocated.vcores} vc> > harvestable "
                    f"<{target.memory_mb} MB, {target.vcores} vc>: GRACEFUL_SHUTDOWN {c.container_id} "
                    f"(priority {c.priority}, started {now - c.started_at:.0f}s ago) frees "
                    f"<{c.resources.memory_mb} MB, {c.resources.vcores} vc>"),
        ))
    short = "" if remaining.fits_in(target) else "; not enough killable containers (AMs are protected)"
    floor = Resources(max(0, remaining.memory_mb), max(0, remaining.vcores)) if timeout < 0 else ams
    note = f"{len(picked)} victim(s) by lowest priority, youngest first{short}"
    return kills, floor, timeout, note

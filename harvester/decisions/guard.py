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
limits). When the primary rises into the reserve, the reserve absorbs it and the capacity is
lowered to the allocation; when it rises past it (it needs cores the batch holds), batch
containers are killed, exactly enough (`kill_when`, decisions/guard_kills.py, which also keeps
ApplicationMasters out of it). Batch use is measured by ALLOCATION: a container may burst to
its allocation at any moment, and allocation is what the RM's own overcommit check compares.

Never raised on one sample: a capacity INCREASE needs the previous fresh sample of the node to
allow it too (the increase is the smaller of the two targets; a node's first sample raises
nothing), so a first-heartbeat zero (models/tenant_series.primary_cpu_cores: unknown) or any
one-off low reading cannot hand out cores. Decreases and kills act on one sample.

Reserve coverage (the reserve's promise, measured): between two decisions on a node that holds
batch containers, a rise of the primary by at least 1 % of the node's cores is a RISE; it is
ABSORBED when this decision kills nothing on the node. Counted per class in the decision
(`GuardDecision.coverage`, `harvester_harvest_primary_rises_total{class_id,outcome}`).

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
- a node in a fresh snapshot without utilization: no kill, no increase, and NO WRITE — it keeps
  the capacity it has — while its newest utilization is within `stale_after_s` (a sidecar's
  first poll, a first-heartbeat zero; the memo carries since when it is unknown). Past that,
  with `freeze_on_stale` its capacity is lowered to the allocation the RM reports (T = -1, which
  kills nothing; never below it) so no NEW work lands there until utilization returns. (Issue
  25: a freeze decided from the very first poll, taken before the RM had allocated anything,
  set every demo node to 0 for a minute.)
Every action carries its formula as its reason and the time of the node sample it was decided
from (`data_at`): the actuator drops it when that is older than the staleness limit at sending.

Scale (issue 29: one sidecar, 50,000 nodes, a 1-s control period): the decision runs on node
ARRAYS — the formula and the kill limit (`_Formula`, their one definition), the consent of an
increase, the quiet kill plan (nothing to shed, no kill in flight), coverage and the arbiter —
and Python runs per node only where something happens: `plan_kills` for a node that must shed
(with only that node's kills in flight: the pass over every kill per node made a tick
O(nodes × kills)), `_unknown` for a node without utilization, each update sent. Views and memos
are columns (decisions/guard_table.py) built into objects when read, with the same text
(`harvester explain node`). tests/property/test_guard_array_agreement.py holds the array
decision to the per-node one it replaced, on random clusters over chained ticks.
"""

from __future__ import annotations

import math
from collections import Counter
from operator import attrgetter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from harvester.decisions.arbiter import LABELS, RATE_LIMIT, ZERO, Proposals, PushRecord, arbitrate, lower, ruling_note
from harvester.decisions.guard_kills import cut_timeout, floor_is_allocation, plan_kills
from harvester.decisions.guard_table import MemoTable, NodeColumns, NodeMemo, NodeView, NodeViews, gather_memos, render
from harvester.decisions.kills import KillRecord
from harvester.decisions.reserve import ReserveTable
from harvester.decisions.strategy import GuardStrategy, KillMechanism, NodeStrategy
from harvester.domain import Action, ClusterSnapshot, ContainerInfo, ContainerState, KillContainer, NodeSample, Resources, SetNodeCapacity
from harvester.models.tenant_series import primary_cpu_cores_array

__all__ = ["GuardContext", "GuardDecision", "NodeMemo", "NodeView", "decide", "evaluate"]

RISE_FRACTION = 0.01  # a primary rise counts for coverage from 1 % of the node's cores


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
    previous: Mapping[str, NodeMemo] = field(default_factory=dict)


@dataclass(frozen=True)
class GuardDecision:
    as_of: float
    actions: tuple[Action, ...]
    nodes: Sequence[NodeView]   # a `NodeViews` (built on read) from `evaluate`, any sequence of views otherwise
    memos: Mapping[str, NodeMemo] = field(default_factory=dict)
    coverage: Mapping[str, tuple[int, int]] = field(default_factory=dict)   # class → (rises, absorbed)
    am_kills: tuple[tuple[str, str], ...] = ()                             # (node, reason) of last resorts

    def harvested_vcores_by_node(self) -> dict[str, int]:
        if isinstance(self.nodes, NodeViews):
            return self.nodes.harvested_vcores_by_node()
        return {v.node_id: v.capacity_after.vcores for v in self.nodes if v.capacity_after is not None}

    def harvested_vcores_by_class(self) -> dict[str, int]:
        if isinstance(self.nodes, NodeViews):
            return self.nodes.harvested_vcores_by_class()
        out: Counter[str] = Counter()
        for v in self.nodes:
            if v.capacity_after is not None:
                out[v.class_id] += v.capacity_after.vcores
        return dict(out)

    def outcomes(self) -> dict[str, int]:
        """Counts by outcome label (sent:<label>, skipped:<label>, stale:<why>)."""
        if isinstance(self.nodes, NodeViews):
            return self.nodes.outcomes()
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


def _node_containers(snap: ClusterSnapshot, wanted: set[str]
                     ) -> tuple[dict[str, list[ContainerInfo]], dict[str, Resources]]:
    """Live containers per node of `wanted`, and the ApplicationMasters' allocation per node
    (listed containers flagged AM, or the apps list's AMs when containers are not listed)."""
    by_node: dict[str, list[ContainerInfo]] = {}
    ams: dict[str, Resources] = {}
    seen: set[str] = set()
    for c in snap.containers:
        if c.node_id in wanted and c.state is not ContainerState.COMPLETE:
            by_node.setdefault(c.node_id, []).append(c)
            if c.is_am:
                seen.add(c.container_id)
                ams[c.node_id] = ams.get(c.node_id, ZERO) + c.resources
    for c in snap.am_containers:
        if c.node_id in wanted and c.container_id not in seen and c.state is not ContainerState.COMPLETE:
            ams[c.node_id] = ams.get(c.node_id, ZERO) + c.resources
    return by_node, ams


_ABSENT = NodeSample("", -math.inf, "", "", "", ZERO, ZERO, 0, None, None, None, None)


def _col(items: Sequence[object], attr: str, dtype=np.float64) -> np.ndarray:  # type: ignore[no-untyped-def]
    """One attribute (dotted) of every item; None reads NaN in a float column."""
    return np.array(list(map(attrgetter(attr), items)), dtype)


class _Formula:
    """The capacity formula of the module docstring and the kill limit (decisions/guard_kills.py),
    over every node at once: the one definition of both. NaN primary → meaningless rows (masked)."""

    def __init__(self, s: GuardStrategy, phys: np.ndarray, cap_mb: np.ndarray, cap_vc: np.ndarray, host: np.ndarray,
                 primary: np.ndarray, reserve: np.ndarray, node_mem: np.ndarray, cont_mem: np.ndarray) -> None:
        with np.errstate(invalid="ignore"):
            self.ratio = cap_vc / phys
            cores = phys - primary - reserve
            vc = np.minimum(cap_vc, np.maximum(0.0, np.floor(cores * self.ratio + 1e-9)))
            self.mem_known = ~np.isnan(host) & ~np.isnan(node_mem)
            self.p_mem = np.maximum(0.0, node_mem - cont_mem)
            self.r_mem = s.memory_reserve_fraction * host
            self.free = host - self.p_mem - self.r_mem
            mem = np.where(self.mem_known, np.minimum(cap_mb, np.maximum(0.0, np.floor(self.free))), cap_mb)
            known = ~np.isnan(primary)
            self.target_vc = np.where(known, vc, 0).astype(np.int64)
            self.target_mb = np.where(known, mem, 0).astype(np.int64)
            if s.kill_when == "reserve_used":  # kill as soon as the target is exceeded
                self.limit_mb, self.limit_vc = self.target_mb, self.target_vc
            else:  # kill only what the primary needs: cores − primary, host RAM − primary memory
                lvc = np.minimum(cap_vc, np.maximum(0.0, np.floor((phys - primary) * self.ratio + 1e-9)))
                lmb = np.where(self.mem_known, np.minimum(cap_mb, np.maximum(0.0, np.floor(host - self.p_mem))),
                               self.target_mb)
                self.limit_vc = np.where(known, lvc, 0).astype(np.int64)
                self.limit_mb = np.where(known, lmb, 0).astype(np.int64)


def evaluate(ctx: GuardContext) -> GuardDecision:
    """Propose per node (formula, victims, floor), let the arbiter rule, and explain each node.

    The formula, the quiet case of the kill plan (nothing to shed, no kill in flight), the
    increase's confirmation, coverage and the arbiter run on arrays over all nodes; Python runs
    per node only where something happens: a node that must shed (`plan_kills`), a node without
    utilization (`_unknown`), a capacity update sent, and each view or memo when it is read.
    """
    snap, s, now = ctx.snapshot, ctx.strategy, ctx.now
    if snap is None or now - snap.time > s.stale_after_s:
        why = "no telemetry yet" if snap is None else f"telemetry {now - snap.time:.0f}s old > {s.stale_after_s:g}s"
        return GuardDecision(now, (), tuple(_stale_view(ns, ctx, why, "stale:snapshot") for ns in ctx.nodes.values()))
    ids = tuple(ctx.nodes)
    nss = tuple(ctx.nodes.values())
    n = len(ids)
    tenant_class = ctx.tenant_class
    class_ids = [tenant_class.get(ns.tenant, "") for ns in nss]
    fractions = {c: ctx.reserves.fraction(c or None) for c in set(class_ids)}
    frac = np.fromiter((fractions[c] for c in class_ids), np.float64, n)
    phys = _col(nss, 'physical_cores')
    cap_mb = _col(nss, 'capacity.memory_mb', np.int64)
    cap_vc = _col(nss, 'capacity.vcores', np.int64)
    host = _col(nss, 'host_memory_mb')
    reserve = frac * phys

    by_id = {x.node_id: x for x in snap.nodes}
    found = [by_id.get(x) for x in ids]
    smp = [_ABSENT if x is None else x for x in found]
    t = _col(smp, 'time')
    present = np.fromiter((x is not None for x in found), bool, n)
    running = np.array([x.state == "RUNNING" for x in smp], bool)
    fresh = present & running & ~(now - t > s.stale_after_s)
    tot_mb, tot_vc = _col(smp, 'total.memory_mb', np.int64), _col(smp, 'total.vcores', np.int64)
    used_mb, used_vc = _col(smp, 'used.memory_mb', np.int64), _col(smp, 'used.vcores', np.int64)
    node_mem = _col(smp, 'node_memory_mb')
    primary = primary_cpu_cores_array(_col(smp, 'node_cpu_cores'),
                                      _col(smp, 'containers_cpu_vcores'), node_mem, phys, cap_vc, tot_vc)
    primary[~fresh] = np.nan
    known = fresh & ~np.isnan(primary)
    f = _Formula(s, phys, cap_mb, cap_vc, host, primary, reserve, node_mem,
                 np.nan_to_num(_col(smp, 'containers_memory_mb')))

    # an increase needs the previous fresh sample's consent (module docstring)
    has_prev, prev_mb, prev_vc, prev_primary, prev_alloc_vc, _ = gather_memos(ctx.previous, ids)
    bound_mb = np.maximum(tot_mb, np.where(has_prev, prev_mb, tot_mb))
    bound_vc = np.maximum(tot_vc, np.where(has_prev, prev_vc, tot_vc))
    held = known & ((f.target_mb > bound_mb) | (f.target_vc > bound_vc))
    want_mb, want_vc = np.minimum(f.target_mb, bound_mb), np.minimum(f.target_vc, bound_vc)

    # the kill plan: vectorised where nothing is shed and no kill is in flight, `plan_kills` elsewhere
    in_flight: dict[str, dict[str, KillRecord]] = {}
    for cid, rec in ctx.kills.items():
        in_flight.setdefault(rec.node_id, {})[cid] = rec
    fits = (used_mb <= f.limit_mb) & (used_vc <= f.limit_vc)
    if s.kill_mechanism is not KillMechanism.RM_OVERCOMMIT and in_flight:
        fits &= np.fromiter((x not in in_flight for x in ids), bool, n)
    shed = np.flatnonzero(known & ~fits).tolist()
    quiet_ams = not floor_is_allocation(s) and s.am_floor   # the quiet floor is then the AMs' allocation
    by_node, ams_by_node = _node_containers(snap, set(ids) if quiet_ams else {ids[i] for i in shed})
    timeout = cut_timeout(s)
    if floor_is_allocation(s):
        floor_mb, floor_vc = used_mb.copy(), used_vc.copy()
    elif s.am_floor:
        ams = [ams_by_node.get(x, ZERO) for x in ids]
        floor_mb, floor_vc = _col(ams, 'memory_mb', np.int64), _col(ams, 'vcores', np.int64)
    else:
        floor_mb, floor_vc = np.zeros(n, np.int64), np.zeros(n, np.int64)
    timeouts = np.full(n, timeout, np.int64)
    killing = np.zeros(n, bool)
    kills: dict[int, tuple[KillContainer, ...]] = {}
    notes: dict[int, str] = {}
    am_kills: list[tuple[str, str]] = []
    for i in shed:
        x, ns = smp[i], nss[i]
        target = Resources(int(f.target_mb[i]), int(f.target_vc[i]))
        plan = plan_kills(s, now, ctx.stimulus_id, in_flight.get(ids[i], {}), ns, x, target,
                          Resources(int(f.limit_mb[i]), int(f.limit_vc[i])), float(reserve[i]), by_node.get(ids[i], []),
                          ams_by_node.get(ids[i], ZERO), snap.containers_complete)
        killing[i] = plan.cut_to is not None and not x.used.fits_in(plan.cut_to) or bool(plan.kills)
        if plan.am_kill:
            am_kills.append((ids[i], plan.am_kill))
        if plan.cut_to is not None:  # a cut to what the primary leaves never raises past the consent either
            want_mb[i], want_vc[i] = min(plan.cut_to.memory_mb, bound_mb[i]), min(plan.cut_to.vcores, bound_vc[i])
        floor_mb[i], floor_vc[i], timeouts[i] = plan.floor.memory_mb, plan.floor.vcores, plan.timeout
        kills[i], notes[i] = plan.kills, plan.note

    with np.errstate(invalid="ignore"):
        rise = known & has_prev & (prev_alloc_vc > 0) & (primary - prev_primary >= RISE_FRACTION * phys)
    rises: Counter[str] = Counter()
    absorbed: Counter[str] = Counter()
    for i in np.flatnonzero(rise).tolist():
        rises[class_ids[i]] += 1
        absorbed[class_ids[i]] += not killing[i]

    # nodes without utilization: per node (few), `_unknown`
    memo_mb, memo_vc = f.target_mb.copy(), f.target_vc.copy()
    memo_amb, memo_avc, memo_seen = used_mb.copy(), used_vc.copy(), t.copy()
    freeze = np.zeros(n, bool)
    unknown_why: dict[int, str] = {}
    previous = ctx.previous
    for i in np.flatnonzero(fresh & ~known).tolist():
        memo, unknown_why[i], frozen = _unknown(smp[i], previous.get(ids[i]), now, s)
        memo_mb[i], memo_vc[i], memo_seen[i] = memo.target.memory_mb, memo.target.vcores, memo.seen_at
        if frozen is not None:
            freeze[i] = True
            want_mb[i], want_vc[i] = frozen.memory_mb, frozen.vcores
            floor_mb[i], floor_vc[i], timeouts[i] = frozen.memory_mb, frozen.vcores, -1
    rows = np.flatnonzero(fresh)
    memos = MemoTable([ids[i] for i in rows.tolist()], memo_mb[rows], memo_vc[rows], primary[rows], memo_amb[rows],
                      memo_avc[rows], memo_seen[rows])

    # the arbiter over every proposal at once
    prop = np.flatnonzero(known | freeze)
    prop_ids = [ids[i] for i in prop.tolist()]
    last = ctx.last_pushed
    p = Proposals(want_mb[prop], want_vc[prop], tot_mb[prop], tot_vc[prop], used_mb[prop], used_vc[prop],
                  floor_mb[prop], floor_vc[prop], cap_mb[prop], cap_vc[prop], freeze[prop],
                  np.fromiter((last[x].at if x in last else -math.inf for x in prop_ids), np.float64, len(prop)))
    r = arbitrate(p, now=now, strategy=s)
    rule_notes = {int(prop[k]): ruling_note(p, r, k, now, s)
                  for k in np.flatnonzero(r.sent | r.capped | r.raised | (r.label == RATE_LIMIT)).tolist()}
    ruled = np.full(n, -1, np.int64)
    ruled[prop] = np.arange(len(prop))

    whys: dict[int, str | tuple] = dict(unknown_why)

    def why(i: int) -> str | tuple:
        """Node i's reason before the arbiter's note: the formula's numbers, or an unknown's text."""
        got = whys.get(i)
        if got is None:
            got = whys[i] = _why(i)
        return got

    def _why(i: int) -> tuple:
        if not held[i]:
            hold = ""
        elif not has_prev[i]:
            hold = "; increase held: first sample of the node, unconfirmed"
        elif math.isnan(prev_primary[i]):
            hold = "; increase held: first sample with utilization, unconfirmed"
        else:
            hold = (f"; increase held to <{min(int(f.target_mb[i]), int(bound_mb[i]))} MB, "
                    f"{min(int(f.target_vc[i]), int(bound_vc[i]))} vc> (the previous sample's target)")
        note = notes.get(i, "")
        m = bool(f.mem_known[i])
        return (float(phys[i]), float(primary[i]), float(reserve[i]), float(frac[i]), class_ids[i], float(f.ratio[i]),
                int(f.target_vc[i]), int(host[i]) if m else None, float(f.p_mem[i]) if m else 0.0,
                float(f.r_mem[i]) if m else 0.0, float(f.free[i]) if m else 0.0, int(f.target_mb[i]),
                hold + (f"; {note}" if note else ""))

    updates: list[Action] = []
    for k in np.flatnonzero(r.sent).tolist():
        i = int(prop[k])
        text, note = why(i), rule_notes.get(i, "")
        updates.append(SetNodeCapacity(
            node_id=ids[i], resources=Resources(int(r.after_mb[k]), int(r.after_vc[k])),
            overcommit_timeout_ms=int(timeouts[i]) if r.cuts[k] else -1,
            reason=(text if isinstance(text, str) else render(text)) + (f" [{note}]" if note else ""),
            stimulus_id=ctx.stimulus_id, data_at=smp[i].time))
    actions = tuple(a for i in sorted(kills) for a in kills[i]) + tuple(updates)

    stale_rows = np.flatnonzero(~fresh)
    order = np.concatenate([stale_rows, rows])   # stale views first, then the decided ones (node order)

    def stale_why(i: int) -> tuple[str, str]:
        x = found[i]
        if x is None:
            return "not in the last snapshot", "stale:missing"
        return (f"node {x.state}" if x.state != "RUNNING" else f"sample {now - x.time:.0f}s old"), "stale:node"

    def outcome(i: int) -> str:
        k = ruled[i]
        if k < 0:
            return "stale:no_utilization"
        return f"{'sent' if r.sent[k] else 'skipped'}:{LABELS[r.label[k]]}"

    def build(j: int) -> NodeView:
        i = int(order[j])
        ns = nss[i]
        if not fresh[i]:
            w, o = stale_why(i)
            return NodeView(ns.node_id, ns.tenant, class_ids[i], ns.capacity, None, None, float(reserve[i]), True,
                            f"{w}: no new capacity, no kill", o)
        k = int(ruled[i])
        note = rule_notes.get(i, "")
        w = why(i)
        if note:
            w = w + f" [{note}]" if isinstance(w, str) else w + (f" [{note}]",)
        after = None if k < 0 else Resources(int(r.after_mb[k]), int(r.after_vc[k]))
        target = Resources(int(f.target_mb[i]), int(f.target_vc[i])) if known[i] else None
        return NodeView(ns.node_id, ns.tenant, class_ids[i], ns.capacity, target,
                        float(primary[i]) if known[i] else None, float(reserve[i]), target is None, w, outcome(i), after,
                        len(kills.get(i, ())))

    counts: Counter[str] = Counter(stale_why(i)[1] for i in stale_rows.tolist())
    counts["stale:no_utilization"] += int((fresh & ~known & ~freeze).sum())
    codes, many = np.unique(r.sent.astype(np.int64) * len(LABELS) + r.label, return_counts=True)
    for code, m in zip(codes.tolist(), many.tolist()):
        counts[f"{'sent' if code >= len(LABELS) else 'skipped'}:{LABELS[code % len(LABELS)]}"] += m
    has_after = np.zeros(n, bool)
    has_after[prop] = True
    after_mb, after_vc = np.zeros(n, np.int64), np.zeros(n, np.int64)
    after_mb[prop], after_vc[prop] = r.after_mb, r.after_vc
    views = NodeViews([ids[i] for i in order.tolist()], [class_ids[i] for i in order.tolist()], primary[order],
                      has_after[order], after_mb[order], after_vc[order], +counts, build, source=ctx.nodes,
                      nodes=NodeColumns(tuple(nss[i].tenant for i in order.tolist()), phys[order], cap_mb[order], cap_vc[order], fresh[order],
                                        np.where(fresh, used_mb, 0)[order], np.where(fresh, used_vc, 0)[order]),
                      stale=~known[order], harvestable_vc=np.where(known, f.target_vc, 0)[order])
    coverage = {c: (rises[c], absorbed[c]) for c in rises}
    return GuardDecision(now, actions, views, memos, coverage, tuple(am_kills))


def _unknown(sample: NodeSample, prev: NodeMemo | None, now: float, s: GuardStrategy
             ) -> tuple[NodeMemo, str, Resources | None]:
    """A fresh node sample without utilization: its memo, the reason, and the freeze (None: no write).

    The guard does not know the primary, so it computes nothing from this sample. The capacity
    the node has stays (no write) while its newest utilization is within the staleness limit —
    a first-heartbeat zero, a sidecar's first poll, a missed monitor sample (DESIGN.md principle
    16: data that old is still a basis). Past it, `freeze_on_stale` lowers the capacity to the
    allocation the RM reports in this sample (T = -1: nothing is killed; the arbiter's floor keeps
    it from going below), so no NEW work lands where the primary cannot be seen.
    """
    seen_at = sample.time if prev is None else prev.seen_at   # a first view: unknown since this sample
    blind = now - seen_at
    why = "no utilization reported (or a first-heartbeat zero: unknown)"
    age = f"none for {blind:.0f} s" if math.isfinite(blind) else "none for long"
    if blind <= s.stale_after_s or not s.freeze_on_stale:
        until = (f"; frozen at its allocation once unknown for more than {s.stale_after_s:g} s"
                 if s.freeze_on_stale else "; harvesting.guard.freeze_on_stale is false")
        return (NodeMemo(sample.total, math.nan, sample.used, seen_at),
                f"{why}, {age}: capacity kept at <{sample.total.memory_mb} MB, {sample.total.vcores} vc> (no write){until}",
                None)
    freeze = lower(sample.total, sample.used)
    return (NodeMemo(freeze, math.nan, sample.used, seen_at),
            f"{why}, {age} > {s.stale_after_s:g} s: freeze at allocation <{freeze.memory_mb} MB, {freeze.vcores} vc>; "
            "no kill", freeze)


def _stale_view(ns: NodeStrategy, ctx: GuardContext, why: str, outcome: str) -> NodeView:
    class_id = ctx.tenant_class.get(ns.tenant, "")
    reserve = ctx.reserves.fraction(class_id or None) * ns.physical_cores
    return NodeView(ns.node_id, ns.tenant, class_id, ns.capacity, None, None, reserve, True,
                    f"{why}: no new capacity, no kill", outcome)

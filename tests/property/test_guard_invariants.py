"""Guard invariants over random clusters (hypothesis): whatever the cluster looks like,

- every action carries its reason;
- nothing is done on stale data (old snapshot, node missing, old sample, node not RUNNING);
- a node without utilization (or a first-heartbeat zero) is never killed on and never given more capacity;
- a node is never raised above what its previous decision allowed (two fresh samples per increase);
- capacity is whole, never negative, never above the NodeManager's;
- capacity never drops below the allocation unless the same decision kills enough to fit
  (its signals plus those in flight) or hands the cut to the RM (overCommitTimeout ≥ 0, which
  takes AMs last, so never below the AMs' allocation — unless AMs may be signalled (`kill_ams`) or one
  is taken as a stated last
  resort, `GuardDecision.am_kills`);
- the RM mechanism sends no signal; signals never hit an AM unless allowed, never hit an
  in-flight victim twice, and escalate only graceful kills.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harvester.decisions.arbiter import PushRecord
from harvester.decisions.guard import NodeMemo, evaluate
from harvester.decisions.kills import KillPhase, transition
from harvester.decisions.strategy import KillMechanism
from harvester.domain import ContainerInfo, KillContainer, Resources, SetNodeCapacity
from harvester.models.tenant_series import primary_cpu_cores

from harvesting_builders import NOW, container, context, node_strategy, sample, snapshot


@st.composite
def clusters(draw):
    n_nodes = draw(st.integers(1, 5))
    strategies, samples, containers, kills, pushed, previous = [], [], [], {}, {}, {}
    for i in range(n_nodes):
        nid = f"n{i}:1"
        cores = draw(st.sampled_from([2.0, 8.0, 16.0]))
        vc = int(cores * draw(st.sampled_from([1, 2, 4])))
        mem = vc * 2048
        strategies.append(node_strategy(nid, cores=cores, vcores=vc, memory_mb=mem,
                                        host_memory_mb=draw(st.sampled_from([None, mem + 4096]))))
        cs = []
        for j in range(draw(st.integers(0, 6))):
            cs.append(container(f"c{i}_{j}", nid, vcores=draw(st.integers(1, 4)), memory_mb=draw(st.sampled_from([1024, 2048, 4096])),
                                started_at=NOW - draw(st.integers(1, 5000)), is_am=draw(st.booleans()),
                                priority=draw(st.integers(0, 3))))
        containers += cs
        used = Resources(sum(c.resources.memory_mb for c in cs), sum(c.resources.vcores for c in cs))
        for c in cs:
            if draw(st.integers(0, 5)) == 0:
                phase = draw(st.sampled_from([KillPhase.GRACEFUL, KillPhase.FORCEFUL]))
                kills[c.container_id] = transition(None, phase, NOW - draw(st.integers(0, 30)), "earlier",
                                                   container_id=c.container_id, node_id=nid)
        if draw(st.integers(0, 2)) == 0:
            pushed[nid] = PushRecord(Resources(mem, vc), NOW - draw(st.integers(0, 120)))
        if draw(st.booleans()):
            previous[nid] = NodeMemo(Resources(draw(st.integers(0, mem)), draw(st.integers(0, vc))),
                                     draw(st.one_of(st.just(math.nan), st.floats(0, cores))),
                                     Resources(0, draw(st.integers(0, vc))),
                                     NOW - draw(st.sampled_from([0, 10, 29, 31, 300, math.inf])))
        presence = draw(st.sampled_from(["fresh", "fresh", "fresh", "missing", "old", "unhealthy"]))
        if presence == "missing":
            continue
        samples.append(sample(
            nid, t=NOW - (300 if presence == "old" else draw(st.integers(0, 20))),
            state="UNHEALTHY" if presence == "unhealthy" else "RUNNING",
            total=Resources(draw(st.integers(0, mem)), draw(st.integers(0, vc))), used=used,
            node_cpu=draw(st.one_of(st.none(), st.floats(0, cores))), containers_vcores=draw(st.floats(0, vc)),
            node_mem=draw(st.floats(0, mem)), containers_mem=draw(st.floats(0, mem)), num_containers=len(cs),
        ))
    snap = snapshot(samples, containers, t=NOW - draw(st.sampled_from([1, 5, 29, 31, 500])),
                    complete=draw(st.booleans()))
    ctx = context(
        draw(st.one_of(st.just(snap), st.none())) if draw(st.integers(0, 9)) == 0 else snap, strategies,
        mechanism=draw(st.sampled_from(list(KillMechanism))), reserve=draw(st.floats(0, 0.5)),
        kills=kills, last_pushed=pushed, kill_ams=draw(st.booleans()),
        freeze_on_stale=draw(st.booleans()), escalation_delay_s=10.0, previous=previous,
        kill_when=draw(st.sampled_from(["reserve_exhausted", "reserve_used"])), am_floor=draw(st.booleans()),
    )
    return ctx


def _fresh(ctx, node_id: str):
    s = ctx.snapshot
    if s is None or ctx.now - s.time > ctx.strategy.stale_after_s:
        return None
    n = next((x for x in s.nodes if x.node_id == node_id), None)
    if n is None or n.state != "RUNNING" or ctx.now - n.time > ctx.strategy.stale_after_s:
        return None
    return n


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_guard_invariants(ctx) -> None:
    d = evaluate(ctx)
    listed: dict[str, ContainerInfo] = {c.container_id: c for c in (ctx.snapshot.containers if ctx.snapshot else ())}
    caps: dict[str, SetNodeCapacity] = {}
    kills_by_node: dict[str, list[KillContainer]] = {}
    for a in d.actions:
        assert a.reason, f"{a} has no reason"
        node = _fresh(ctx, a.node_id)
        assert node is not None, f"acted on stale node {a.node_id}: {a}"
        if isinstance(a, SetNodeCapacity):
            assert a.node_id not in caps, "one capacity update per node"
            caps[a.node_id] = a
            limit = ctx.nodes[a.node_id].capacity
            assert 0 <= a.resources.vcores <= limit.vcores and 0 <= a.resources.memory_mb <= limit.memory_mb
            assert isinstance(a.resources.vcores, int) and isinstance(a.resources.memory_mb, int)
        else:
            assert isinstance(a, KillContainer)
            assert ctx.strategy.kill_mechanism is not KillMechanism.RM_OVERCOMMIT, "the RM mechanism sends no signal"
            c = listed[a.container_id]
            assert c.node_id == a.node_id
            assert ctx.strategy.kill_ams or not c.is_am or a.node_id in dict(d.am_kills), "an AM was signalled"
            rec = ctx.kills.get(a.container_id)
            if a.graceful:
                assert rec is None, "an in-flight victim was picked again"
            else:
                assert rec is not None and rec.phase is KillPhase.GRACEFUL, "forceful only escalates a graceful kill"
            kills_by_node.setdefault(a.node_id, []).append(a)
    for node_id, a in caps.items():
        node = _fresh(ctx, node_id)
        ns = ctx.nodes[node_id]
        prev = ctx.previous.get(node_id)
        # above the current capacity only as far as the previous decision allowed, or up to the allocation
        # (never below what stays: no new room)
        consent = prev.target if prev is not None else node.total
        assert a.resources.vcores <= max(node.total.vcores, consent.vcores, node.used.vcores), "raised on one sample"
        assert a.resources.memory_mb <= max(node.total.memory_mb, consent.memory_mb, node.used.memory_mb), \
            "raised on one sample"
        if primary_cpu_cores(node, ns.physical_cores, ns.capacity.vcores) is None:  # no utilization: freeze only
            assert a.overcommit_timeout_ms == -1 and node_id not in kills_by_node
            assert a.resources.fits_in(node.total), "a node without utilization got more capacity"
            assert prev is not None and ctx.now - prev.seen_at > ctx.strategy.stale_after_s, \
                "a node whose utilization is unknown for less than the staleness limit keeps its capacity"
            assert Resources(min(node.total.memory_mb, node.used.memory_mb),
                             min(node.total.vcores, node.used.vcores)).fits_in(a.resources), \
                "unknown utilization lowered the capacity below the allocation"
            continue
        allocated = node.used
        if allocated.fits_in(a.resources):
            assert a.overcommit_timeout_ms == -1, "a cut that kills nothing must not arm the RM's kill"
            continue
        limit = ctx.nodes[node_id].capacity
        if a.overcommit_timeout_ms >= 0:
            # AMs not already being killed (an AM in flight was signalled earlier, when that was allowed)
            ams = [c for c in listed.values() if c.node_id == node_id and c.is_am and c.container_id not in ctx.kills]
            am = Resources(sum(c.resources.memory_mb for c in ams), sum(c.resources.vcores for c in ams))
            assert Resources(min(am.memory_mb, limit.memory_mb), min(am.vcores, limit.vcores)).fits_in(a.resources) or \
                not ctx.snapshot.containers_complete or not ctx.strategy.am_floor or ctx.strategy.kill_ams or \
                node_id in dict(d.am_kills)
        else:
            freed = {k.container_id for k in kills_by_node.get(node_id, [])}
            freed |= {cid for cid, r in ctx.kills.items() if r.node_id == node_id and cid in listed}
            left = allocated
            for cid in freed:
                left = left - listed[cid].resources
            floor = Resources(min(max(0, left.memory_mb), limit.memory_mb), min(max(0, left.vcores), limit.vcores))
            assert floor.fits_in(a.resources), f"{node_id}: {a.resources} below what stays allocated {left}"
    for v in d.nodes:
        if _fresh(ctx, v.node_id) is None:
            assert v.stale and v.capacity_after is None

"""Issue 25 (the guard's first minute): a node whose utilization is unknown keeps the capacity it
has — no write — until its newest utilization is older than the staleness limit; only then does
`freeze_on_stale` lower it, to the allocation the RM reports and never below it.

Seen live: right after `make run` every node read CPU 0.0 (a first-heartbeat zero: unknown) and
usedResource 0 (the RM had not allocated the demo's apps yet); the freeze decided from that poll
set every node to <0 MB, 0 vc> five seconds later, after containers had been allocated, and the
rate limit kept it there for a minute."""

from __future__ import annotations

import math

from harvester.decisions.guard import NodeMemo, evaluate
from harvester.domain import Resources, SetNodeCapacity

from harvesting_builders import NOW, agreed, context, node_strategy, sample, snapshot

NODE = node_strategy()  # 16 cores, 16 vcores, 64 GiB; reserve 0.125 × 16 = 2 cores
FIRST_HEARTBEAT = dict(node_cpu=0.0, node_mem=6000.0)  # unknown (models/tenant_series.primary_cpu_cores)


def caps(actions) -> list[SetNodeCapacity]:
    return [a for a in actions if isinstance(a, SetNodeCapacity)]


def test_a_first_view_without_utilization_keeps_the_capacity_no_write() -> None:
    for used in (Resources(0, 0), Resources(6144, 3)):
        snap = snapshot([sample(total=Resources(65536, 16), used=used, **FIRST_HEARTBEAT)])
        d = evaluate(context(snap, [NODE]))
        assert d.actions == (), "no computed freeze from a first view"
        [v] = d.nodes
        assert v.outcome == "stale:no_utilization" and v.capacity_after is None
        assert "capacity kept at <65536 MB, 16 vc>" in v.reason and "no write" in v.reason
        [memo] = d.memos.values()
        assert memo.seen_at == snap.nodes[0].time and math.isnan(memo.primary_cpu_cores)
        assert memo.target == Resources(65536, 16), "the kept capacity is what a later increase needs consent from"


def test_still_unknown_within_the_staleness_limit_keeps_it_then_freezes_at_the_allocation() -> None:
    first = evaluate(context(snapshot([sample(t=NOW - 2, used=Resources(0, 0), **FIRST_HEARTBEAT)]), [NODE]))
    later = NOW + 20.0  # 22 s without utilization < stale_after_s 30: still kept
    snap = snapshot([sample(t=later - 2, used=Resources(6144, 3), **FIRST_HEARTBEAT)], t=later - 1)
    d = evaluate(context(snap, [NODE], now=later, previous=first.memos))
    assert d.actions == () and d.nodes[0].outcome == "stale:no_utilization"
    blind = NOW + 40.0  # 42 s > 30 s: the view is stale, the freeze applies
    snap = snapshot([sample(t=blind - 2, used=Resources(6144, 3), **FIRST_HEARTBEAT)], t=blind - 1)
    d2 = evaluate(context(snap, [NODE], now=blind, previous=d.memos))
    [a] = caps(d2.actions)
    assert a.resources == Resources(6144, 3) and a.overcommit_timeout_ms == -1, "the allocation the RM reports"
    assert "freeze" in a.reason and "42 s" in a.reason and d2.nodes[0].outcome == "sent:freeze"
    assert not evaluate(context(snap, [NODE], now=blind, previous=d.memos, freeze_on_stale=False)).actions


def test_a_lost_utilization_keeps_the_capacity_for_the_staleness_limit() -> None:
    known = evaluate(context(snapshot([sample(node_cpu=4.0, used=Resources(4096, 2))]), [NODE]))
    assert known.memos[NODE.node_id].seen_at == NOW - 2
    gone = snapshot([sample(t=NOW + 8, node_cpu=None, used=Resources(4096, 2))], t=NOW + 9)
    d = evaluate(context(gone, [NODE], now=NOW + 10, previous=known.memos))
    assert d.actions == () and "12 s" in d.nodes[0].reason
    assert d.memos[NODE.node_id].seen_at == NOW - 2, "the time of the newest utilization is carried"


def test_a_freeze_never_lowers_below_the_allocation_the_rm_reports() -> None:
    snap = snapshot([sample(total=Resources(65536, 16), used=Resources(12288, 6), node_cpu=None)])
    [a] = caps(evaluate(context(snap, [NODE], previous=agreed())).actions)  # agreed(): utilization seen long ago
    assert a.resources == Resources(12288, 6)
    over = snapshot([sample(total=Resources(4096, 2), used=Resources(12288, 6), node_cpu=None)])
    assert all(c.resources.fits_in(Resources(12288, 6)) and Resources(4096, 2).fits_in(c.resources)
               for c in caps(evaluate(context(over, [NODE], previous=agreed())).actions))


def test_utilization_back_raises_nothing_on_its_first_sample() -> None:
    kept = evaluate(context(snapshot([sample(total=Resources(65536, 8), **FIRST_HEARTBEAT)]), [NODE]))
    back = snapshot([sample(t=NOW + 3, total=Resources(65536, 8), node_cpu=1.0)], t=NOW + 4)
    d = evaluate(context(back, [NODE], now=NOW + 5, previous=kept.memos))  # wants 13 vc
    assert caps(d.actions) == [] and "first sample with utilization, unconfirmed" in d.nodes[0].reason
    again = snapshot([sample(t=NOW + 13, total=Resources(65536, 8), node_cpu=1.0)], t=NOW + 14)
    [a] = caps(evaluate(context(again, [NODE], now=NOW + 15, previous=d.memos)).actions)
    assert a.resources.vcores == 13


def test_memos_of_known_nodes_carry_the_sample_time() -> None:
    d = evaluate(context(snapshot([sample(node_cpu=3.0)]), [NODE]))
    assert d.memos[NODE.node_id] == NodeMemo(d.memos[NODE.node_id].target, 3.0, Resources(0, 0), NOW - 2)

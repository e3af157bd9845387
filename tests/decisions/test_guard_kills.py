"""Issue 16's guard rules: kill only when the reserve is exhausted, the ApplicationMaster floor and
its last resort, no increase on one unconfirmed sample (first-heartbeat zero), reserve coverage."""

from __future__ import annotations

from harvester.decisions.guard import NodeMemo, evaluate
from harvester.decisions.strategy import KillMechanism
from harvester.domain import ClusterSnapshot, KillContainer, Resources, SetNodeCapacity
from harvester.models.tenant_series import primary_cpu_cores

from harvesting_builders import NOW, agreed, container, context, node_strategy, sample, snapshot

NODE = node_strategy()  # 16 cores, 16 vcores; reserve 0.125 × 16 = 2 cores


def caps(actions) -> list[SetNodeCapacity]:
    return [a for a in actions if isinstance(a, SetNodeCapacity)]


def kills(actions) -> list[KillContainer]:
    return [a for a in actions if isinstance(a, KillContainer)]


def _spike():
    cs = [container("am", vcores=1, is_am=True, started_at=NOW - 900)] + [
        container(f"w{i}", started_at=NOW - 500 + i * 100) for i in range(1, 6)]
    return snapshot([sample(used=Resources(4096 * 6, 11), node_cpu=10.0, containers_vcores=0.0)], cs)


def test_a_rise_into_the_reserve_lowers_capacity_and_kills_nothing() -> None:
    # primary 7: target 16 − 7 − 2 = 7 vc < allocation 8, but the primary leaves 9 vc: the reserve absorbs it
    snap = snapshot([sample(used=Resources(4096 * 4, 8), node_cpu=7.0)],
                    [container(f"w{i}") for i in range(4)])
    d = evaluate(context(snap, [NODE]))
    [a] = caps(d.actions)
    assert kills(d.actions) == [] and a.resources.vcores == 8 and a.overcommit_timeout_ms == -1
    assert "never below the allocation" in a.reason
    used = evaluate(context(snap, [NODE], kill_when="reserve_used"))
    assert caps(used.actions)[0].resources.vcores == 7 and caps(used.actions)[0].overcommit_timeout_ms == 0


def test_past_the_reserve_the_cut_frees_exactly_what_the_primary_needs() -> None:
    rm = evaluate(context(_spike(), [NODE]))
    [a] = caps(rm.actions)
    assert a.resources.vcores == 6 and a.overcommit_timeout_ms == 0  # 16 − 10 primary: the reserve is spent first
    sig = evaluate(context(_spike(), [NODE], mechanism=KillMechanism.SIGNALS))
    assert [k.container_id for k in kills(sig.actions)] == ["w5", "w4", "w3"]  # 11 − 6 = 5 vc: three of 2 vc


def test_the_cut_is_floored_at_the_ams_allocation() -> None:
    cs = [container("am", vcores=1, memory_mb=2048, is_am=True), container("w", vcores=2, started_at=NOW - 5)]
    snap = snapshot([sample(used=Resources(6144, 3), node_cpu=16.0, containers_vcores=0.0)], cs)
    d = evaluate(context(snap, [NODE]))
    [a] = caps(d.actions)
    assert a.resources.vcores == 1 and "non-AM containers (capacity floored" in a.reason
    assert d.am_kills == ()
    bare = evaluate(context(snap, [NODE], am_floor=False))
    assert caps(bare.actions)[0].resources.vcores == 0


def test_the_ams_are_known_from_the_apps_list_without_listing_containers() -> None:
    am = container("am", vcores=1, memory_mb=2048, is_am=True)
    snap = ClusterSnapshot(NOW - 1, "test", (sample(used=Resources(6144, 3), node_cpu=16.0, containers_vcores=0.0),),
                           (), False, (am,), True)
    [a] = caps(evaluate(context(snap, [NODE])).actions)
    assert a.resources.vcores == 1


def test_an_am_goes_only_as_a_last_resort_when_it_burns_the_reserve() -> None:
    am = [container("am", vcores=3, memory_mb=2048, is_am=True)]
    idle = snapshot([sample(used=Resources(2048, 3), node_cpu=16.0, containers_vcores=0.02)], am)
    d = evaluate(context(idle, [NODE]))
    assert caps(d.actions)[0].resources.vcores == 3 and d.am_kills == ()
    # the AM burns 2.5 cores ≥ reserve 2 and the primary (13.5) leaves 2 vc < its 3 vc
    busy = snapshot([sample(used=Resources(2048, 3), node_cpu=16.0, containers_vcores=2.5)], am)
    d = evaluate(context(busy, [NODE]))
    [a] = caps(d.actions)
    assert a.resources.vcores == 2 and a.overcommit_timeout_ms == 0 and "LAST RESORT" in a.reason  # the RM takes the AM
    [(node, why)] = d.am_kills
    assert node == NODE.node_id and why.startswith("primary_short:")
    sig = evaluate(context(busy, [NODE], mechanism=KillMechanism.SIGNALS))
    [k] = kills(sig.actions)
    assert k.container_id == "am" and "LAST RESORT" in k.reason and sig.am_kills


def test_an_increase_needs_a_second_fresh_sample() -> None:
    snap = snapshot([sample(total=Resources(65536, 8), node_cpu=1.0)])  # wants 13
    first = evaluate(context(snap, [NODE]))
    assert caps(first.actions) == [] and "increase held: first sample" in first.nodes[0].reason
    half = {NODE.node_id: NodeMemo(Resources(65536, 11), 3.0, Resources(0, 0))}
    [a] = caps(evaluate(context(snap, [NODE], previous=half)).actions)
    assert a.resources.vcores == 11 and "previous sample's target" in a.reason
    [b] = caps(evaluate(context(snap, [NODE], previous=first.memos)).actions)
    assert b.resources.vcores == 13


def test_a_first_heartbeat_zero_is_unknown_and_raises_nothing() -> None:
    zero = sample(total=Resources(16384, 4), used=Resources(6000, 2), node_cpu=0.0, node_mem=6000.0)
    assert primary_cpu_cores(zero, 16, 16) is None
    d = evaluate(context(snapshot([zero]), [NODE], previous=agreed()))
    assert all(a.resources.vcores <= 4 for a in caps(d.actions))
    assert d.nodes[0].outcome.endswith("freeze") and "first-heartbeat zero" in d.nodes[0].reason
    idle_host = sample(node_cpu=0.0, node_mem=None)
    assert primary_cpu_cores(idle_host, 16, 16) == 0.0  # no memory in use: a real zero


def test_coverage_counts_rises_and_which_the_reserve_absorbed() -> None:
    before = {NODE.node_id: NodeMemo(Resources(65536, 10), 4.0, Resources(16384, 8))}
    soft = snapshot([sample(used=Resources(16384, 8), node_cpu=7.0)], [container(f"w{i}") for i in range(4)])
    assert evaluate(context(soft, [NODE], previous=before)).coverage == {"periodic-0": (1, 1)}
    hard = snapshot([sample(used=Resources(16384, 8), node_cpu=12.0)], [container(f"w{i}") for i in range(4)])
    assert evaluate(context(hard, [NODE], previous=before)).coverage == {"periodic-0": (1, 0)}
    flat = snapshot([sample(used=Resources(16384, 8), node_cpu=4.05)], [container(f"w{i}") for i in range(4)])
    assert evaluate(context(flat, [NODE], previous=before)).coverage == {}

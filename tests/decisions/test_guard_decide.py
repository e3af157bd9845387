"""The guard: capacity = total − primary − reserve, kills on a spike, fail-safe on stale data."""

from __future__ import annotations

import pytest

from harvester.decisions.arbiter import PushRecord
from harvester.decisions.guard import decide, evaluate
from harvester.decisions.kills import KillPhase, transition
from harvester.decisions.strategy import KillMechanism
from harvester.domain import KillContainer, Resources, SetNodeCapacity

from harvesting_builders import NOW, agreed, container, context, node_strategy, sample, snapshot

NODE = node_strategy()  # 16 cores, 16 vcores, 64 GiB; reserve 0.125 × 16 = 2 cores in these tests


def caps(actions) -> list[SetNodeCapacity]:
    return [a for a in actions if isinstance(a, SetNodeCapacity)]


def kills(actions) -> list[KillContainer]:
    return [a for a in actions if isinstance(a, KillContainer)]


def test_capacity_formula_is_the_reason() -> None:
    snap = snapshot([sample(node_cpu=5.2)])
    [a] = decide(context(snap, [NODE]))
    assert a.resources == Resources(65536, 8) and a.overcommit_timeout_ms == -1
    assert "cpu 16 cores − primary 5.20 − reserve 2.00" in a.reason and "= 8.80 cores" in a.reason and "→ 8 vcores" in a.reason
    assert a.stimulus_id == "tick-1"


def test_containers_cpu_is_converted_from_vcores_before_subtracting() -> None:
    # 16 vcores on 16 cores: containers' 6 vcores = 6 cores; node 10 cores → primary 4
    snap = snapshot([sample(node_cpu=10.0, containers_vcores=6.0, used=Resources(8192, 4))])
    [a] = decide(context(snap, [NODE]))
    assert "primary 4.00" in a.reason and a.resources.vcores == 10


def test_vcores_use_the_nodes_vcores_per_core_ratio() -> None:
    node = node_strategy(cores=2, vcores=8, memory_mb=8192)  # the fixtures' pseudo-cluster ratio
    snap = snapshot([sample(total=Resources(8192, 8), node_cpu=0.5, containers_vcores=0.0)])
    [a] = decide(context(snap, [node], reserve=0.25))
    assert a.resources.vcores == 4  # (2 − 0.5 − 0.5) cores × 4 vc/core


def test_capacity_never_exceeds_the_nodemanager_nor_goes_negative() -> None:
    idle = evaluate(context(snapshot([sample(node_cpu=0.0, total=Resources(65536, 10))]), [NODE], reserve=0.0,
                            previous=agreed()))
    assert caps(idle.actions)[0].resources.vcores == 16
    busy = evaluate(context(snapshot([sample(node_cpu=16.0)]), [NODE]))
    assert caps(busy.actions)[0].resources == Resources(65536, 0)


def test_increase_waits_for_hysteresis_and_rate_limit() -> None:
    snap = snapshot([sample(total=Resources(65536, 8), node_cpu=1.0)])  # wants 13
    recent = {NODE.node_id: PushRecord(Resources(65536, 8), NOW - 30)}
    d = evaluate(context(snap, [NODE], last_pushed=recent, previous=agreed()))
    assert d.actions == () and d.nodes[0].outcome == "skipped:rate_limit"
    old = {NODE.node_id: PushRecord(Resources(65536, 8), NOW - 61)}
    [a] = decide(context(snap, [NODE], last_pushed=old, previous=agreed()))
    assert a.resources.vcores == 13
    small = snapshot([sample(total=Resources(65536, 12), node_cpu=1.0)])  # +1 < min_increase_vcores 2
    assert evaluate(context(small, [NODE], previous=agreed())).nodes[0].outcome == "skipped:hysteresis"


def test_small_decrease_is_skipped_but_a_big_one_is_sent_without_rate_limit() -> None:
    recent = {NODE.node_id: PushRecord(Resources(65536, 9), NOW - 1)}
    same = snapshot([sample(total=Resources(65536, 9), node_cpu=5.0)])  # wants 9
    assert evaluate(context(same, [NODE], last_pushed=recent)).nodes[0].outcome == "skipped:unchanged"
    drop = snapshot([sample(total=Resources(65536, 9), node_cpu=8.0)])  # wants 6
    [a] = decide(context(drop, [NODE], last_pushed=recent, min_decrease_vcores=2))
    assert a.resources.vcores == 6


def test_spike_rm_mechanism_cuts_with_overcommit_timeout_and_sends_no_signal() -> None:
    cs = [container("am", vcores=1, is_am=True, started_at=NOW - 900)] + [
        container(f"w{i}", started_at=NOW - 500 + i * 100) for i in range(5)]
    snap = snapshot([sample(used=Resources(5 * 4096 + 4096, 11), node_cpu=10.0, containers_vcores=0.0)], cs)
    d = evaluate(context(snap, [NODE], kill_when="reserve_used"))
    assert kills(d.actions) == []
    [a] = caps(d.actions)
    assert a.resources.vcores == 4 and a.overcommit_timeout_ms == 0
    assert "RM kills the youngest non-AM containers" in a.reason
    assert d.nodes[0].outcome == "sent:cut" and d.kills_by_reason() == {"rm_overcommit": 1}


def _spike(**kw):
    cs = [
        container("am", vcores=1, is_am=True, started_at=NOW - 900),
        container("w1", priority=0, started_at=NOW - 500),
        container("w2", priority=0, started_at=NOW - 400),
        container("w3", priority=0, started_at=NOW - 300),
        container("w4", priority=1, started_at=NOW - 200),
        container("w5", priority=1, started_at=NOW - 10),
    ]
    snap = snapshot([sample(used=Resources(4096 * 6, 11), node_cpu=10.0, containers_vcores=0.0)], cs, **kw)
    return snap


def test_spike_signals_kill_lowest_priority_youngest_first_never_the_am() -> None:
    d = evaluate(context(_spike(), [NODE], mechanism=KillMechanism.SIGNALS, kill_when="reserve_used"))
    ks = kills(d.actions)
    assert [k.container_id for k in ks] == ["w3", "w2", "w1", "w5"]  # need 11 − 4 = 7 vcores
    assert all(k.graceful and "GRACEFUL_SHUTDOWN" in k.reason for k in ks)
    [a] = caps(d.actions)
    assert a.resources.vcores == 4 and a.overcommit_timeout_ms == -1, "signals: the RM must not kill as well"
    assert d.actions.index(ks[0]) < d.actions.index(a), "kills go first"
    assert d.kills_by_reason() == {"signal_graceful": 4}


def test_signals_with_backstop_cut_carries_the_backstop_timeout() -> None:
    d = evaluate(context(_spike(), [NODE], mechanism=KillMechanism.SIGNALS_WITH_BACKSTOP, backstop_timeout_ms=15000,
                         kill_when="reserve_used"))
    assert len(kills(d.actions)) == 4 and caps(d.actions)[0].overcommit_timeout_ms == 15000


def test_kill_ams_allows_the_am_as_a_victim() -> None:
    d = evaluate(context(_spike(), [NODE], mechanism=KillMechanism.SIGNALS, kill_ams=True, reserve=0.0))
    # target 6 (16 − 10), need 5 vcores: w3, w2, w1 → 6 freed; AM not needed, priority 0 AM is oldest
    assert [k.container_id for k in kills(d.actions)] == ["w3", "w2", "w1"]
    busy = snapshot([sample(used=Resources(8192, 3), node_cpu=16.0)],
                    [container("am", vcores=1, is_am=True), container("w", vcores=2, started_at=NOW - 5)])
    d = evaluate(context(busy, [NODE], mechanism=KillMechanism.SIGNALS, kill_ams=True))
    assert {k.container_id for k in kills(d.actions)} == {"am", "w"}


def test_graceful_kill_escalates_to_forceful_after_the_delay() -> None:
    rec = transition(None, KillPhase.GRACEFUL, NOW - 15, "spike", container_id="w3", node_id=NODE.node_id)
    d = evaluate(context(_spike(), [NODE], mechanism=KillMechanism.SIGNALS, kills={"w3": rec}, escalation_delay_s=10,
                         kill_when="reserve_used"))
    ks = kills(d.actions)
    assert ks[0].container_id == "w3" and not ks[0].graceful and "FORCEFUL_SHUTDOWN" in ks[0].reason
    assert "w3" not in [k.container_id for k in ks[1:]], "an in-flight victim is not picked again"
    assert [k.container_id for k in ks[1:]] == ["w2", "w1", "w5"]
    fresh = transition(None, KillPhase.GRACEFUL, NOW - 3, "spike", container_id="w3", node_id=NODE.node_id)
    d = evaluate(context(_spike(), [NODE], mechanism=KillMechanism.SIGNALS, kills={"w3": fresh}, escalation_delay_s=10))
    assert all(k.graceful for k in kills(d.actions))


def test_signals_without_a_container_list_never_cut_below_allocation() -> None:
    # a partial list cannot show which containers are the lowest priority / youngest: no victim
    for snap in (_spike(complete=False), snapshot([sample(used=Resources(4096 * 6, 11), node_cpu=10.0)], [], complete=False)):
        d = evaluate(context(snap, [NODE], mechanism=KillMechanism.SIGNALS))
        assert kills(d.actions) == []
        [a] = caps(d.actions)
        assert a.resources.vcores == 11 and "never below the allocation" in a.reason and "no victim" in a.reason


def test_stale_snapshot_no_kill_and_no_capacity() -> None:
    snap = _spike(t=NOW - 120)
    d = evaluate(context(snap, [NODE], mechanism=KillMechanism.SIGNALS))
    assert d.actions == () and d.nodes[0].stale and "120s old" in d.nodes[0].reason
    assert evaluate(context(None, [NODE])).nodes[0].outcome == "stale:snapshot"


def test_missing_old_or_unhealthy_nodes_are_left_alone() -> None:
    others = [node_strategy("n2:8041"), node_strategy("n3:8041"), node_strategy("n4:8041")]
    snap = snapshot([
        sample("n1:8041", node_cpu=15.0, used=Resources(8192, 8)),        # fresh spike: acts
        sample("n3:8041", t=NOW - 300, node_cpu=15.0, used=Resources(8192, 8)),  # old sample
        sample("n4:8041", state="UNHEALTHY", node_cpu=15.0, used=Resources(8192, 8)),
    ])
    d = evaluate(context(snap, [NODE, *others]))
    assert {a.node_id for a in d.actions} == {"n1:8041"}
    out = {v.node_id: v.outcome for v in d.nodes}
    assert out == {"n1:8041": "sent:cut", "n2:8041": "stale:missing", "n3:8041": "stale:node", "n4:8041": "stale:node"}


def test_node_without_utilization_is_frozen_at_its_allocation_never_killed() -> None:
    """Once its utilization is older than the staleness limit (tests/decisions/test_guard_unknown_utilization.py:
    before that, and on a first view, the capacity is kept)."""
    snap = snapshot([sample(node_cpu=None, used=Resources(12288, 6))], [container("w", vcores=6)])
    assert evaluate(context(snap, [NODE], mechanism=KillMechanism.SIGNALS)).actions == (), "a first view: kept"
    d = evaluate(context(snap, [NODE], mechanism=KillMechanism.SIGNALS, previous=agreed()))
    [a] = d.actions
    assert isinstance(a, SetNodeCapacity) and a.resources == Resources(12288, 6) and a.overcommit_timeout_ms == -1
    assert "freeze" in a.reason and d.nodes[0].stale and d.nodes[0].outcome == "sent:freeze"
    assert evaluate(context(snap, [NODE], freeze_on_stale=False, previous=agreed())).actions == ()
    over = snapshot([sample(node_cpu=None, total=Resources(4096, 2), used=Resources(12288, 6))])
    assert evaluate(context(over, [NODE], previous=agreed())).actions == (), "a freeze never raises capacity"


def test_memory_is_harvested_when_host_ram_is_known() -> None:
    node = node_strategy(host_memory_mb=131072)
    snap = snapshot([sample(node_cpu=2.0, node_mem=70000.0, containers_mem=10000.0)])
    [a] = decide(context(snap, [node]))
    # 131072 − (70000 − 10000) − 0.1 × 131072 = 57964.8 → 57964, within the NM's 65536
    assert a.resources.memory_mb == 57964 and "mem 131072 − primary 60000" in a.reason


def test_decision_views_feed_metrics() -> None:
    snap = snapshot([sample(node_cpu=5.2)])
    d = evaluate(context(snap, [NODE, node_strategy("n9:1", tenant="db")], tenant_class={"web": "periodic-0", "db": "constant-0"}))
    assert d.harvested_vcores_by_node() == {"n1:8041": 8}
    assert d.harvested_vcores_by_class() == {"periodic-0": 8}
    assert d.outcomes() == {"sent:decrease": 1, "stale:missing": 1}
    assert all(a.reason for a in d.actions)


@pytest.mark.parametrize("mechanism", list(KillMechanism))
def test_no_spike_means_no_kill_in_any_mode(mechanism: KillMechanism) -> None:
    snap = snapshot([sample(used=Resources(8192, 4), node_cpu=3.0)], [container("w1"), container("w2")])
    assert kills(decide(context(snap, [NODE], mechanism=mechanism))) == []


def test_every_action_carries_the_time_of_its_node_sample() -> None:
    """Principle 16 (the RM actuator drops an action without data_at): cuts, freezes, increases,
    graceful kills and escalations all carry the time of the sample they were decided from."""
    rec = transition(None, KillPhase.GRACEFUL, NOW - 15, "spike", container_id="w3", node_id=NODE.node_id)
    other = node_strategy("n2:8041")
    spike = _spike()
    snap = snapshot(spike.nodes + (sample("n2:8041", t=NOW - 7, node_cpu=None),), spike.containers)
    for mechanism in KillMechanism:
        d = evaluate(context(snap, [NODE, other], mechanism=mechanism, kills={"w3": rec}, escalation_delay_s=10,
                             previous=agreed("n2:8041")))  # n2's utilization seen long ago: a freeze
        assert d.actions and {type(a) for a in d.actions} >= {SetNodeCapacity}
        if mechanism is KillMechanism.SIGNALS:
            assert any(not a.graceful for a in kills(d.actions)) and any(a.graceful for a in kills(d.actions))
        assert {a.node_id for a in d.actions} == {NODE.node_id, "n2:8041"}
        assert [a.data_at for a in d.actions] == [NOW - 7 if a.node_id == "n2:8041" else NOW - 2 for a in d.actions]
    up = evaluate(context(snapshot([sample(node_cpu=2.0)]), [NODE], previous=agreed()))
    assert [a.data_at for a in up.actions] == [NOW - 2]

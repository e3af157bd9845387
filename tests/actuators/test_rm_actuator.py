"""The RM actuator against the emulator over real HTTP: capacity updates, signals, errors as data."""

from __future__ import annotations

from typing import Iterator

import pytest

from harvester.actuators.rm import RMActuator
from harvester.domain import KillContainer, Resources, SetNodeCapacity

from emu_cluster import N1, N2, EmuCluster


@pytest.fixture()
def cluster() -> Iterator[EmuCluster]:
    with EmuCluster() as c:
        yield c


def _actuator(c: EmuCluster) -> RMActuator:
    return RMActuator(c.client, c.clock, stale_after_s=30.0, budget_s=5.0)


def test_a_cut_below_allocation_with_timeout_0_makes_the_rm_kill_the_youngest(cluster: EmuCluster) -> None:
    app = cluster.work.distributed_shell(4, Resources(1024, 1), duration_s=None)
    cluster.advance(15)
    busiest = max((N1, N2), key=lambda n: cluster.client.get_node(n).used_vcores)
    before = cluster.client.get_node(busiest).used_vcores
    assert before >= 2
    act = _actuator(cluster)
    cut = SetNodeCapacity(node_id=busiest, resources=Resources(8192, 1), overcommit_timeout_ms=0, reason="test cut", data_at=cluster.clock.now())
    assert act.apply([cut], "r1") == [cut]
    cluster.advance(3)
    node = cluster.client.get_node(busiest)
    assert node.total_resource.vcores == 1 and node.used_vcores <= 1, "the RM killed exactly enough to fit"
    preempted = cluster.client.get_app(app.app_id).num_non_am_container_preempted
    assert preempted == before - node.used_vcores
    assert act.poll_errors() == []


def test_an_intended_zero_is_sent(cluster: EmuCluster) -> None:
    act = _actuator(cluster)
    zero = SetNodeCapacity(node_id=N2, resources=Resources(8192, 0), overcommit_timeout_ms=-1, reason="primary uses all", data_at=cluster.clock.now())
    assert act.apply([zero], "r1") == [zero]
    cluster.advance(1)
    assert cluster.client.get_node(N2).total_resource.vcores == 0
    assert act.poll_errors() == []


def test_signals_graceful_then_forceful(cluster: EmuCluster) -> None:
    app = cluster.work.distributed_shell(3, Resources(1024, 1), duration_s=None)
    cluster.advance(15)
    am, w1, w2, w3 = cluster.work.containers(app.app_id)
    act = _actuator(cluster)
    kills = [KillContainer(container_id=w1, node_id=N1, graceful=True, reason="t", data_at=cluster.clock.now()),
             KillContainer(container_id=w2, node_id=N1, graceful=False, reason="t", data_at=cluster.clock.now())]
    assert act.apply(kills, "r1") == kills
    cluster.advance(3)
    assert cluster.work.containers(app.app_id) == [am, w3]
    exits = {cid: cluster.emu.containers[cid].nm_exit_code for cid in (w1, w2)}
    assert exits == {w1: 143, w2: 137}, "SIGTERM / SIGKILL exit codes (scenarios/signal-and-kill)"


def test_rm_errors_come_back_as_data_on_the_next_poll_and_are_not_retried(cluster: EmuCluster) -> None:
    act = _actuator(cluster)
    bad_signal = KillContainer(container_id="container_1_0001_01_000009", node_id=N1, reason="t", data_at=cluster.clock.now())
    negative = SetNodeCapacity(node_id=N1, resources=Resources(-1, 4), reason="t", data_at=cluster.clock.now())
    fine = SetNodeCapacity(node_id=N2, resources=Resources(8192, 6), reason="t", data_at=cluster.clock.now())
    assert act.apply([bad_signal, negative, fine], "r7") == [fine], "one failure does not stop the batch"
    errors = act.poll_errors()
    assert [e.action for e in errors] == [bad_signal, negative]
    assert errors[0].details["error_class"] != "RMValidationError" and "status" in errors[0].details
    assert errors[1].details["error_class"] == "RMValidationError", "refused before any HTTP was sent"
    assert all(e.time == cluster.clock.now() for e in errors)
    assert act.poll_errors() == [], "errors are returned once"


def test_rm_down_fails_every_action_without_raising(cluster: EmuCluster) -> None:
    act = _actuator(cluster)
    cluster.server.stop()
    cut = SetNodeCapacity(node_id=N1, resources=Resources(8192, 2), overcommit_timeout_ms=0, reason="t", data_at=cluster.clock.now())
    assert act.apply([cut], "r1") == []
    (err,) = act.poll_errors()
    assert err.action == cut and err.details["error_class"] in ("RMConnectionError", "RMTimeoutError")

"""rm_client (the typed client) against the emulator over real HTTP: the two halves agree.

Nodes, node resource update, apps (REST submission, attempts, containers, signal, kill, queue
and priority), reservations round trip and typed errors, each decoded by rm_client's models.
"""

from __future__ import annotations

from typing import Iterator

import pytest
from emu_world import N1, N2, World

from harvester.domain import Resources
from rm_client import RMClient, RMClientConfig
from rm_client.errors import RMBadRequestError, RMNotFoundError, RMServerError
from rm_client.wire.bodies import AppSubmission
from rm_client.wire.reservations import Interpreter, ReservationDefinition, ReservationRequest
from rm_client.wire.resources import Resource

TS = 1795430060362


@pytest.fixture()
def pair() -> Iterator[tuple[World, RMClient]]:
    world = World(TS)
    client = RMClient(RMClientConfig(urls=(world.server.url,), user="root", max_retries=0))
    try:
        yield world, client
    finally:
        client.close()
        world.close()


def test_nodes_and_a_node_resource_update(pair: tuple[World, RMClient]) -> None:
    world, client = pair
    assert {n.id for n in client.list_nodes()} == {N1, N2}
    client.update_node_resource(N1, Resource(6144, 6), -1)
    world.at(2.0)
    node = client.get_node(N1)
    assert (node.total_resource.memory_mb, node.total_resource.vcores) == (6144, 6)
    assert node.resource_utilization is not None and node.http_address == "localhost:8042"
    assert client.get_cluster_metrics() is not None and client.get_scheduler() is not None
    with pytest.raises(RMNotFoundError):
        client.get_node("localhost:1")


def test_app_submission_attempts_containers_signal_and_kill(pair: tuple[World, RMClient]) -> None:
    world, client = pair
    app_id = client.new_application().application_id
    client.submit_application(AppSubmission(application_id=app_id, application_name="via-rm-client",
                                            queue="root.default", command="sleep 600",
                                            resource=Resource(512, 1)))
    ds = world.work.distributed_shell(2, Resources(1024, 1), duration_s=300.0)
    world.at(12.0)
    assert client.get_app(app_id).state == "ACCEPTED"  # a plain command AM never registers
    app = client.get_app(ds.app_id)
    assert (app.state, app.running_containers) == ("RUNNING", 3)
    (attempt,) = client.list_app_attempts(ds.app_id)
    assert client.get_app_attempt(ds.app_id, attempt.attempt_id).state == "RUNNING"
    containers = client.list_containers(ds.app_id, attempt.attempt_id)
    assert len(containers) == 3
    worker = max(c.container_id for c in containers)
    assert client.get_container(ds.app_id, attempt.attempt_id, worker).container_id == worker
    client.signal_container(worker, "GRACEFUL_SHUTDOWN")
    world.at(14.0)
    assert worker not in {c.container_id for c in client.list_containers(ds.app_id, attempt.attempt_id)}
    assert world.emu.containers[worker].nm_exit_code == 143
    assert client.move_app(ds.app_id, "default") == "default" and client.get_app_queue(ds.app_id) == "default"
    with pytest.raises(RMServerError) as priority:  # "default" names the reservable root.default (a PlanQueue)
        client.set_app_priority(ds.app_id, 5)
    assert priority.value.remote_exception == "ClassCastException" and "reservable" in (priority.value.hint or "")
    with pytest.raises(RMServerError):
        client.move_app(ds.app_id, "root.default")
    client.kill_app(ds.app_id)
    assert client.get_app_state(ds.app_id) == "KILLED"
    assert {a.id for a in client.list_apps(states=("ACCEPTED",))} == {app_id}


def test_priorities_change_in_a_queue_that_is_not_reservable() -> None:
    """queue-move-and-priority: in a plain leaf (root.q2) priority 5 is clamped to the cluster
    maximum 0 and -1 is accepted."""
    from harvester.emulator import QueueConfig

    world = World(TS, (QueueConfig("default", 60.0, reservable=True), QueueConfig("q2", 40.0)))
    client = RMClient(RMClientConfig(urls=(world.server.url,), user="root", max_retries=0))
    try:
        ds = world.work.distributed_shell(1, Resources(1024, 1), duration_s=300.0, queue="root.q2")
        world.at(8.0)
        assert client.set_app_priority(ds.app_id, 5) == 0 and client.set_app_priority(ds.app_id, -1) == -1
        assert client.get_app_priority(ds.app_id) == -1
    finally:
        client.close()
        world.close()


def test_reservation_round_trip(pair: tuple[World, RMClient]) -> None:
    world, client = pair
    rid = client.new_reservation()
    now = int(world.clock.now() * 1000)
    definition = ReservationDefinition(
        arrival_ms=now + 60_000, deadline_ms=now + 3_540_000, interpreter=Interpreter.R_ORDER_NO_GAP,
        name="rm-client", recurrence_period_ms=3_600_000,
        requests=(ReservationRequest(Resource(1024, 1), 2, 2, 600_000), ReservationRequest(Resource(512, 1), 4, 4,
                                                                                            300_000)))
    client.submit_reservation(rid, "root.default", definition)
    (info,) = client.list_reservations("root.default", rid)
    assert info.reservation_id == rid and info.definition.recurrence_period_ms == 3_600_000
    assert [(a.end_ms - a.start_ms, a.resource.memory_mb) for a in info.allocations] == [(600_000, 2048),
                                                                                          (300_000, 2048)]
    client.update_reservation(rid, definition)
    client.delete_reservation(rid)
    assert client.list_reservations("root.default", rid) == ()
    with pytest.raises(RMBadRequestError):
        client.delete_reservation(rid)  # "... does not exist in the plan"

"""rm_client against a REAL Hadoop 3.3.6 ResourceManager (the reservation system on; the
reservable queue and the queue for plain apps are found in its /scheduler, or named by
HARVESTER_TEST_PLAN_QUEUE / HARVESTER_TEST_QUEUE: conftest.py).

Every test cleans up after itself in ``finally``: apps are killed, reservations deleted, node
capacity restored, so the module can run twice in a row. It makes no assumption about the
cluster being fresh, idle or laid out like deploy/hadoop: other tenants' apps, reservations,
queues, node labels and queue users may exist; where a busy or small cluster has no room (the
plan cannot take a small reservation, no AM container within minutes, a node too small to
shrink) the test skips with the reason rather than fail. Expectations come from the recorded
captures and scenarios (../shared/fixtures/yarn-3.3.6) and, where noted, from a live
single-host 3.3.6 cluster; no error text is asserted that was not recorded.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator

import pytest
from live_cluster import plan_queue as plan_queue_of, recurring_allocation_problems
from rest_apps import kill_quietly, sleep_app, submit_sleep_app, wait_for, wait_for_am_container, wait_for_state

from rm_client import (
    DAY_MS,
    Interpreter,
    ReservationDefinition,
    ReservationInfo,
    ReservationRequest,
    Resource,
    RMBadRequestError,
    RMClient,
    RMClientConfig,
    RMNotFoundError,
    RMServerError,
)
from rm_client.wire.scheduler import iter_queues

pytestmark = pytest.mark.integration

MIN = 60_000


@pytest.fixture(scope="module")
def client(live_hadoop: object) -> Iterator[RMClient]:
    cfg = RMClientConfig(urls=(live_hadoop.rm_url,), user=live_hadoop.user, read_timeout_s=30.0)  # type: ignore[attr-defined]
    with RMClient(cfg) as c:
        yield c


def mem_vc(r: Resource | None) -> tuple[int, int] | None:
    """Memory and vcores only: a cluster with extra resource types (GPUs) carries more."""
    return None if r is None else (r.memory_mb, r.vcores)


def rm_now_ms(client: RMClient) -> int:
    """'Now' on the RM's clock side: local time, never before the RM's start."""
    return max(int(time.time() * 1000), client.get_cluster_info().started_on_ms)


def test_reads(client: RMClient, live_hadoop: object, plan_queue: str) -> None:
    info = client.get_cluster_info()
    assert info.ha_state == "ACTIVE" and info.state == "STARTED" and info.rm_version.startswith("3.3")
    assert client.get_cluster_user_info().requested_user == live_hadoop.user  # type: ignore[attr-defined]
    metrics = client.get_cluster_metrics()
    assert metrics.active_nodes >= 1 and metrics.total_mb > 0 and metrics.total_vcores > 0
    scheduler = client.get_scheduler()
    assert scheduler.type == "capacityScheduler" and scheduler.root is not None
    assert plan_queue in [q.path for _, q in iter_queues(scheduler.root)]
    nodes = client.list_nodes()
    running = [n for n in nodes if n.state == "RUNNING"]
    capacity = sum(n.total_resource.memory_mb for n in running)  # type: ignore[union-attr]
    # totalMB = allocated + available clamped at 0 (fixtures README): the capacity, or the allocation
    # when the cluster runs over-committed; one node may change between the two calls on a busy cluster
    biggest = max(n.total_resource.memory_mb for n in running)  # type: ignore[union-attr]
    assert running and abs(metrics.total_mb - max(capacity, metrics.allocated_mb)) <= biggest
    node = client.get_node(running[0].id)
    assert node.id == running[0].id and node.resource_utilization is not None
    assert node.resource_utilization.node_cpu_cores >= 0 and node.total_resource is not None
    assert {n.state for n in client.list_nodes(states=("RUNNING",))} == {"RUNNING"}
    assert isinstance(client.list_apps(states=("RUNNING", "ACCEPTED"), limit=50), tuple)
    assert client.check_queue_access(plan_queue, live_hadoop.user).allowed  # type: ignore[attr-defined]
    labels = client.get_node_labels()
    assert isinstance(labels, tuple) and isinstance(client.get_labels_on_node(node.id), tuple)
    if not labels:  # node labels disabled or none defined (the recorded cluster): every view is empty
        assert client.get_labels_on_node(node.id) == () and client.get_node_to_labels() == {}
    assert {s.state for s in client.get_app_statistics()} >= {"RUNNING", "ACCEPTED", "FINISHED"}


def test_node_resource_update_and_restore(client: RMClient) -> None:
    running = [n for n in client.list_nodes(states=("RUNNING",)) if n.total_resource is not None]
    node = max(running, key=lambda n: (n.total_resource.vcores, n.total_resource.memory_mb))  # type: ignore[union-attr]
    original = node.total_resource
    assert original is not None
    if original.memory_mb <= 2048 or original.vcores <= 1:
        pytest.skip(f"the largest RUNNING node {node.id} has {original}: too small to shrink by 1024 MB and 1 vcore")
    smaller = Resource(original.memory_mb - 1024, original.vcores - 1)
    try:
        client.update_node_resource(node.id, smaller, overcommit_timeout_ms=-1)  # -1: never kill
        wait_for(lambda: mem_vc(client.get_node(node.id).total_resource) == mem_vc(smaller), timeout_s=20,
                 what=f"{node.id} to report {smaller}")
    finally:
        client.update_node_resource(node.id, Resource(original.memory_mb, original.vcores), overcommit_timeout_ms=-1)
    wait_for(lambda: mem_vc(client.get_node(node.id).total_resource) == mem_vc(original),
             timeout_s=20, what=f"{node.id} restored to {original}")


def _definition(arrival_ms: int, window_ms: int, period_ms: int = 0, containers: int = 1,
                duration_ms: int = 5 * MIN) -> ReservationDefinition:
    return ReservationDefinition(
        arrival_ms=arrival_ms, deadline_ms=arrival_ms + window_ms, name="harvester-it",
        interpreter=Interpreter.R_ALL, recurrence_period_ms=period_ms,
        requests=(ReservationRequest(Resource(1024, 1), containers, 1, duration_ms),),
    )


def _listed(client: RMClient, queue: str, rid: str) -> tuple[ReservationInfo, ...]:
    return client.list_reservations(queue, rid, include_resource_allocations=True)


def _delete_quietly(client: RMClient, rid: str) -> None:
    """For finalizers: an already deleted or never accepted id answers 400, a malformed one 404."""
    try:
        client.delete_reservation(rid)
    except (RMBadRequestError, RMNotFoundError):
        pass


def _submit_or_skip(client: RMClient, queue: str, rid: str, definition: ReservationDefinition) -> None:
    """A used cluster's plan may have no room left for even a small reservation: skip then."""
    try:
        client.submit_reservation(rid, queue, definition)
    except RMBadRequestError as err:
        if "Planning" in (err.remote_message or "") or "Quota" in (err.remote_message or ""):
            pytest.skip(f"the plan of {queue} has no room for a 1 x 1024 MB reservation: {err.remote_message}")
        raise


def _am_or_skip(client: RMClient, app_id: str) -> tuple[str, str]:
    """The app's AM container; skips when a busy cluster grants none within 3 minutes."""
    try:
        return wait_for_am_container(client, app_id, timeout_s=180)
    except AssertionError as err:
        pytest.skip(f"no room for a 512 MB AM container on this cluster within 180 s ({err})")


def _reservable(client: RMClient, queue: str) -> bool:
    """Whether `queue` (a REST `queue` value, full or short) is a plan queue."""
    return plan_queue_of(client.get_scheduler(), queue if queue.startswith("root.") else f"root.{queue}") is not None


def test_one_off_reservation_lifecycle(client: RMClient, plan_queue: str) -> None:
    rid = client.new_reservation()
    arrival = rm_now_ms(client) + 10 * MIN
    definition = _definition(arrival, 20 * MIN)
    try:
        _submit_or_skip(client, plan_queue, rid, definition)
        (listed,) = _listed(client, plan_queue, rid)
        assert listed.reservation_id == rid and listed.definition.arrival_ms == arrival
        assert listed.definition.deadline_ms == definition.deadline_ms
        assert listed.definition.interpreter is Interpreter.R_ALL and listed.definition.recurrence_period_ms == 0
        assert [(mem_vc(r.capability), r.num_containers, r.min_concurrency, r.duration_ms)
                for r in listed.definition.requests] == [((1024, 1), 1, 1, 5 * MIN)]
        held = [a for a in listed.allocations or () if a.holds]  # zero-resource ranges are gaps
        assert held, "an accepted reservation has allocations"
        for a in held:  # one-off: epoch times inside the window
            assert arrival <= a.start_ms < a.end_ms <= definition.deadline_ms
        bigger = dataclasses.replace(definition, requests=(ReservationRequest(Resource(1024, 1), 2, 1, 5 * MIN),))
        client.update_reservation(rid, bigger)
        wait_for(lambda: _listed(client, plan_queue, rid)[0].definition.requests[0].num_containers == 2, timeout_s=10,
                 what="the update to show")
        client.delete_reservation(rid)
        assert _listed(client, plan_queue, rid) == ()  # a deleted (well-formed) id lists as {}
        with pytest.raises(RMBadRequestError) as again:  # captures/err-reservation-delete-already-deleted
            client.delete_reservation(rid)
        assert again.value.remote_exception == "IllegalArgumentException"
        assert f"The specified Reservation with ID {rid} does not exist in the plan" == again.value.remote_message
        never = f"reservation_{client.get_cluster_info().cluster_id}_9997"
        with pytest.raises(RMBadRequestError) as unknown:  # scenarios/recurring-reservation-update, t=483.784
            client.delete_reservation(never)
        assert f"The specified reservation with ID: {never} is unknown." in (unknown.value.remote_message or "")
    finally:
        _delete_quietly(client, rid)


def test_recurring_reservation_lifecycle(client: RMClient, plan_queue: str) -> None:
    period = 3_600_000
    assert DAY_MS % period == 0
    rid = client.new_reservation()
    arrival = rm_now_ms(client) + 5 * MIN
    definition = _definition(arrival, 30 * MIN, period_ms=period, duration_ms=10 * MIN)
    try:
        _submit_or_skip(client, plan_queue, rid, definition)
        (listed,) = _listed(client, plan_queue, rid)
        assert listed.definition.recurrence_period_ms == period
        # offsets within the period; zero-resource ranges are gaps of any length (a live 3.3.6 listed
        # [5, 55) min at <0, 0> when the 10 minutes wrapped the hour); held ranges fit the 30-min window
        assert recurring_allocation_problems(listed, window_ms=30 * MIN) == []
        windows = listed.allocation_windows(arrival)
        assert windows and all(arrival - period < w.start_ms < definition.deadline_ms + period for w in windows)
        client.update_reservation(rid, dataclasses.replace(definition, name="harvester-it-v2"))
        assert _listed(client, plan_queue, rid)[0].definition.name == "harvester-it-v2"
        client.delete_reservation(rid)
        assert _listed(client, plan_queue, rid) == ()
    finally:
        _delete_quietly(client, rid)


def test_reservation_refused_by_the_rm_is_parsed(client: RMClient, plan_queue: str) -> None:
    rid = client.new_reservation()
    past = rm_now_ms(client) - 60 * MIN
    try:
        with pytest.raises(RMBadRequestError) as raised:
            client.submit_reservation(rid, plan_queue, _definition(past, 20 * MIN))
        assert raised.value.remote_exception == "BadRequestException" and "deadline" in (raised.value.remote_message or "")
    finally:
        _delete_quietly(client, rid)


def test_app_submitted_before_its_reservation_window_fails(client: RMClient, plan_queue: str) -> None:
    rid = client.new_reservation()
    app_id = None
    try:
        _submit_or_skip(client, plan_queue, rid, _definition(rm_now_ms(client) + 15 * MIN, 20 * MIN))
        app_id = submit_sleep_app(client, seconds=60, queue=plan_queue, reservation_id=rid)
        wait_for_state(client, app_id, ("FAILED",), timeout_s=30)
        assert "not currently active" in (client.get_app(app_id).diagnostics or "")
    finally:
        if app_id:
            kill_quietly(client, app_id)
        _delete_quietly(client, rid)


def test_rest_app_attempts_containers_queue_priority_and_kill(client: RMClient, submit_queue: str) -> None:
    with sleep_app(client, seconds=300, queue=submit_queue) as app_id:
        attempt_id, am_container = _am_or_skip(client, app_id)
        app = client.get_app(app_id)
        assert app.state in ("ACCEPTED", "RUNNING") and app.application_type == "YARN"
        assert "harvester-it" in app.application_tags
        (attempt,) = client.list_app_attempts(app_id)
        assert attempt.attempt_id == attempt_id and attempt.attempt_number == 1
        detail = client.get_app_attempt(app_id, attempt_id)
        assert detail.am_container_id == am_container
        containers = wait_for(lambda: client.list_containers(app_id, attempt_id), timeout_s=30,
                              what="the AM container to be listed")
        assert am_container in [c.container_id for c in containers]
        am = client.get_container(app_id, attempt_id, am_container)
        assert am.allocated_mb >= 512 and am.allocated_vcores >= 1 and am.node_id

        queue = client.get_app_queue(app_id)
        assert client.move_app(app_id, queue) == queue  # same queue: 200, nothing moves (recorded)
        short = queue.rsplit(".", 1)[-1]
        try:
            moved = client.move_app(app_id, short)  # the short leaf name worked on 3.3.6
            assert moved == short
            wait_for(lambda: client.get_app_queue(app_id) == short, timeout_s=10, what="the move")
        except RMServerError as err:  # the recorded failure form of a move on 3.3.6
            assert err.remote_exception == "UndeclaredThrowableException" and err.hint
            assert client.get_app_queue(app_id) == queue

        current = client.get_app_queue(app_id)
        if _reservable(client, current):
            # captures/err-apps-id-priority-put-app-in-reservation-queue: the RM casts the queue the app
            # names to a LeafQueue; a reservable queue is a PlanQueue -> 500, and the client says why
            with pytest.raises(RMServerError) as refused:
                client.set_app_priority(app_id, 5)
            assert refused.value.remote_exception == "ClassCastException" and "PlanQueue" in (
                refused.value.remote_message or "")
            assert refused.value.hint and "reservable" in refused.value.hint
        else:
            applied = client.set_app_priority(app_id, 5)
            assert applied <= 5 and client.get_app_priority(app_id) == applied  # clamped to the cluster max

        assert client.kill_app(app_id) in ("KILLING", "KILLED", "ACCEPTED", "RUNNING")  # the echo is unreliable
        wait_for_state(client, app_id, ("KILLED",), timeout_s=30)
        assert client.kill_app(app_id) == "KILLED"  # recorded: a second kill answers 200 KILLED
        assert client.get_app(app_id).final_status == "KILLED"


def test_graceful_shutdown_signal_ends_the_am(client: RMClient, submit_queue: str) -> None:
    with sleep_app(client, seconds=300, name="harvester-it-signal", queue=submit_queue) as app_id:
        attempt_id, am_container = _am_or_skip(client, app_id)
        wait_for(lambda: client.get_container(app_id, attempt_id, am_container).state == "RUNNING",
                 timeout_s=30, what="the AM container to run")
        time.sleep(1)  # the NodeManager has just forked the launch script
        client.signal_container(am_container, "GRACEFUL_SHUTDOWN")  # SIGTERM ~1 s later (recorded)
        wait_for_state(client, app_id, ("FAILED", "FINISHED"), timeout_s=60)
        app = client.get_app(app_id)
        assert app.final_status == "FAILED" and "143" in (app.diagnostics or "")  # 128 + SIGTERM

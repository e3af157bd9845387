"""The emulator reproduces the recorded RM dynamics, part 2: reservations and queue moves.

reservation-early-submit and reservation-lifecycle ran one after the other on one cluster, so
they are replayed on one emulator (the lifecycle starts by deleting the early reservations).
The MapReduce sleep clients of the recording are `Workload.mapreduce_sleep` steps at the
recorded submission times. Beyond the shapes, the reservation list must carry the recorded
values: which reservations exist and their allocation intervals (recurring ones modulo the
period) at every poll; apps go through the recorded states.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from emu_timeline import Exchange, as_list, field, load, quiet, replay, shape_mismatches, start_epoch
from emu_world import World
from test_emulator_scenarios_recurring import SCENARIOS as RECURRING
from test_emulator_scenarios import CLUSTER, UNSUPPORTED_SCENARIOS, _burn_ids, _other_scenarios_apps, _writes

from harvester.domain import Resources
from harvester.emulator import QueueConfig

SCENARIOS = ("reservation-early-submit", "reservation-lifecycle")


def _mr(maps: int, reservation: str):  # type: ignore[no-untyped-def]
    return lambda w: w.work.mapreduce_sleep(maps, Resources(1024, 1), map_duration_s=400.0,
                                            reservation_id=f"reservation_{CLUSTER}_{reservation}")


@pytest.fixture(scope="module")
def reservations(fixtures_dir: Path) -> dict[str, tuple[list[Exchange], list[dict[str, Any]]]]:
    root = fixtures_dir / "yarn-3.3.6" / "scenarios"
    world = World(CLUSTER)
    out = {}
    clients = {
        "reservation-early-submit": [(0.0, _burn_ids(5)), (2.153, _mr(2, "0001")), (4.177, _mr(1, "0002"))],
        "reservation-lifecycle": [(32.246, _mr(2, "0004")), (35.276, _mr(1, "0005"))],
    }
    try:
        for name in SCENARIOS:
            rows, events = load(root / name)
            base = start_epoch(events)
            world.clock.set(max(world.clock.now(), base))
            out[name] = (list(replay(world, rows, base, clients[name])), events)
    finally:
        world.close()
    return out


def _allocations(doc: Any) -> dict[str, list[tuple[str, str, str, str]]]:
    got = {}
    for res in as_list(field(doc, "reservations")):
        got[res.get("reservation-id")] = [
            (a.get("startTime"), a.get("endTime"), a.get("resource").get("memory"), a.get("resource").get("vCores"))
            for a in as_list(res.get("resource-allocations"))]
    return got


# Reservation window starts/ends (s after each scenario's start; README): the plan follower acts
# on its own 1 s beat, so answers within ~1.5 s of these are in transition.
BOUNDARIES = {"reservation-early-submit": (30.0, 90.0), "reservation-lifecycle": (30.0, 90.0, 120.0, 150.0)}


def _windows(exchanges: list[Exchange], events: list[dict[str, Any]], name: str) -> list[tuple[float, float]]:
    clients = [(e["t_ms"] / 1000, 4.0) for e in events if e["event"] in ("app_submitted", "client_started")]
    # after R2's end its app starts: AM launch -> registration -> first map (~7 s)
    starts = [(120.0, 7.0)] if name == "reservation-lifecycle" else []
    return clients + _writes(exchanges) + [(t, 1.5) for t in BOUNDARIES[name]] + starts


@pytest.mark.parametrize("name", SCENARIOS)
def test_reservation_answers_have_the_recorded_shapes(name: str, reservations: dict) -> None:  # type: ignore[type-arg]
    exchanges, events = reservations[name]
    assert shape_mismatches(exchanges, _windows(exchanges, events, name), _other_scenarios_apps) == []


@pytest.mark.parametrize("name", SCENARIOS)
def test_reservation_list_carries_the_recorded_allocations(name: str, reservations: dict) -> None:  # type: ignore[type-arg]
    exchanges, _ = reservations[name]
    polls = [ex for ex in exchanges if ex.method == "GET" and ex.path.startswith("/ws/v1/cluster/reservation/list")]
    assert len(polls) > 50
    for ex in polls:
        assert _allocations(ex.emu()) == _allocations(ex.rec()), ex.t


def test_apps_submitted_before_the_window_fail_at_once(reservations: dict) -> None:  # type: ignore[type-arg]
    exchanges, _ = reservations["reservation-early-submit"]
    for app, res in (("0006", "0001"), ("0007", "0002")):
        polls = [ex for ex in exchanges if ex.path == f"/ws/v1/cluster/apps/application_{CLUSTER}_{app}"]
        first = polls[0].emu()
        assert (field(first, "app", "state"), field(first, "app", "finalStatus")) == ("FAILED", "FAILED")
        assert field(first, "app", "diagnostics") == field(polls[0].rec(), "app", "diagnostics") == (
            f"Application application_{CLUSTER}_{app} submitted to a reservation which is not currently active: "
            f"reservation_{CLUSTER}_{res}")


def test_app_states_follow_the_recorded_lifecycle(reservations: dict) -> None:  # type: ignore[type-arg]
    exchanges, events = reservations["reservation-lifecycle"]
    busy = _windows(exchanges, events, "reservation-lifecycle")
    compared = 0
    for ex in exchanges:
        if ex.method == "GET" and ex.path.count("/") == 5 and "/apps/application_" in ex.path and quiet(ex.t, busy):
            for key in ("state", "queue", "runningContainers"):
                assert field(ex.emu(), "app", key) == field(ex.rec(), "app", key), (ex.t, ex.path, key)
            compared += 1
    assert compared > 150


def test_reservation_queues_appear_at_window_start(reservations: dict) -> None:  # type: ignore[type-arg]
    exchanges, events = reservations["reservation-lifecycle"]

    def queues(doc: Any) -> set[str]:
        plan = as_list(field(doc, "scheduler", "schedulerInfo", "queues", "queue"))[0]
        return {q.get("queueName") for q in as_list(field(plan, "queues", "queue"))}

    busy = [(t, 1.5) for t in BOUNDARIES["reservation-lifecycle"]] + _writes(exchanges)
    polls = [ex for ex in exchanges if ex.method == "GET" and ex.path == "/ws/v1/cluster/scheduler"]
    for ex in polls:
        if quiet(ex.t, busy):
            assert queues(ex.emu()) == queues(ex.rec()), ex.t
    assert any(f"reservation_{CLUSTER}_0004" in queues(ex.emu()) for ex in polls)


def test_deleted_reservation_moves_its_app_without_killing_it(reservations: dict) -> None:  # type: ignore[type-arg]
    exchanges, _ = reservations["reservation-lifecycle"]
    polls = [ex for ex in exchanges if ex.path == f"/ws/v1/cluster/apps/application_{CLUSTER}_0008"]
    after = [p.emu() for p in polls if 152.0 <= p.t <= 200.0]
    assert after and all(field(d, "app", "state") == "ACCEPTED" for d in after)
    assert all("Queue's AM resource limit exceeded" in field(d, "app", "diagnostics") for d in after)
    r2_app = [p.emu() for p in polls if p.t > 203.0]
    assert field(r2_app[-1], "app", "state") == "KILLED"


# --- queue-move-and-priority ----------------------------------------------------------------

@pytest.fixture(scope="module")
def queue_move(fixtures_dir: Path) -> list[Exchange]:
    rows, events = load(fixtures_dir / "yarn-3.3.6" / "scenarios" / "queue-move-and-priority")
    base = start_epoch(events)
    queues = (QueueConfig("default", 60.0, reservable=True), QueueConfig("q2", 40.0))
    world = World(CLUSTER, queues)
    world.clock.set(base)
    ds = (lambda w: w.work.distributed_shell(2, Resources(1024, 1), duration_s=300.0, queue="root.q2",
                                             am=Resources(1024, 1)))
    try:
        return list(replay(world, rows, base, [(0.0, _burn_ids(11)), (2.052, ds)]))
    finally:
        world.close()


def _not_recorded_here(ex: Exchange) -> bool:
    """App 0013 failed only because of the earlier queue refresh (unsupported scenario)."""
    return _other_scenarios_apps(ex) or "_0013" in ex.path


def test_queue_moves_and_priorities_answer_as_recorded(queue_move: list[Exchange]) -> None:
    for ex in queue_move:
        if ex.method == "PUT" and not ex.path.split("?")[0].endswith("/state"):
            assert (ex.emulated.status, ex.emulated.body) == (ex.recorded.status, ex.recorded.body), ex.t
    gets = [ex for ex in queue_move if ex.method == "GET" and "/queue" in ex.path or "/priority" in ex.path]
    for ex in gets:
        assert ex.emulated.body == ex.recorded.body, (ex.t, ex.path)


def test_a_move_keeps_the_running_containers(queue_move: list[Exchange]) -> None:
    polls = [ex for ex in queue_move if ex.method == "GET" and ex.path.endswith("/containers") and 8.0 <= ex.t <= 26.0]
    ids = [{c.get("containerId") for c in as_list(field(ex.emu(), "container"))} for ex in polls]
    assert polls and all(x == ids[0] and len(x) == 3 for x in ids)


def test_queue_move_answers_have_the_recorded_shapes(queue_move: list[Exchange]) -> None:
    busy = [(2.052, 6.0)] + _writes(queue_move)
    assert shape_mismatches(queue_move, busy, _not_recorded_here) == []


def test_unsupported_scenarios_are_named_with_a_reason(fixtures_dir: Path) -> None:
    present = {p.name for p in (fixtures_dir / "yarn-3.3.6" / "scenarios").iterdir() if p.is_dir()}
    covered = {"overcommit-timeout", "cpu-burn", "signal-and-kill", *SCENARIOS, "queue-move-and-priority",
               "cpu-contention", *RECURRING}
    assert present - covered == set(UNSUPPORTED_SCENARIOS)
    assert all(len(why) > 40 for why in UNSUPPORTED_SCENARIOS.values())

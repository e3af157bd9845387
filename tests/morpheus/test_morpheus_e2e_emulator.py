"""End to end against the emulator over real HTTP: Morpheus's loops in the real composition root
(`cluster.source: rm` pointing at an emulated 3.3.6 RM on a SimClock) plan a recurring job
from its history, submit its reservations, and an app submitted into our reservation gets its
containers — in the SECOND period too, which is the crux: a 3.3.6 recurring reservation gets
capacity in its first period only (scenarios/recurring-reservation*, reproduced by the
emulator), so the one-off-per-period mode must give period 2 its own reservation, and the
nudge must make its queue's capacity effective. The recurring mode is run beside it to show the
defect the one-off mode works around. Every assertion reads what the RM reports.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from harvester.domain import Resources
from harvester.emulator.queues import QueueConfig

from harvester.emulator.demo_recurring import RecurringJob

from morpheus_rig import JOB, PERIOD, Rig

@pytest.fixture()
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    r = Rig(**request.param) if isinstance(request.param, dict) else Rig(request.param)
    try:
        yield r
    finally:
        r.close()


def window_start(now: float) -> float:
    return (now // PERIOD + 1) * PERIOD + 60.0


def run_in_window(rig: Rig) -> tuple[str, str]:
    """Wait for the next window, submit a 2-map MR job into the job's reservation (the id from
    `GET /v1/morpheus/slo`, as a user's scheduler would), return (reservation id, app id)."""
    c = rig.cluster
    arrival = window_start(c.clock.now())
    rig.until(arrival + 1)  # the plan follower created the queue (it is there <= 1 s early)
    doc = rig.admin(f"/v1/morpheus/slo?job={JOB.name}")
    res = doc["reservation"]
    assert res is not None and res["state"] == "ACTIVE", doc["reservation"]
    assert res["key"].endswith("@recurring") or res["arrival_ms"] == int(arrival * 1000), "the window of this period"
    app = c.work.mapreduce_sleep(2, Resources(1024, 1), map_duration_s=60.0, reservation_id=res["reservation_id"])
    return res["reservation_id"], app.app_id


def job_app_in_window(rig: Rig, workers: int, duration_s: float) -> tuple[str, str]:
    """Wait for the next window, submit a distributed shell NAMED as the job (apps are matched to
    its reservation by name) into the job's reservation; (reservation id, app id)."""
    rig.step(2)
    rig.until(window_start(rig.cluster.clock.now()) + 1)
    rid = rig.admin(f"/v1/morpheus/slo?job={JOB.name}")["reservation"]["reservation_id"]
    app = rig.cluster.work.distributed_shell(workers, Resources(1024, 1), duration_s=duration_s,
                                             name=f"{JOB.name}-20261124T1001", reservation_id=rid)
    return rid, app.app_id


def queue_capacity(rig: Rig, rid: str) -> tuple[float, int]:
    """(capacity %, effective min memory MB) of the reservation's queue, as /scheduler shows it."""
    from rm_client.wire.scheduler import iter_queues

    root = rig.cluster.client.get_scheduler().root
    for _, q in iter_queues(root):
        if q.name == rid:
            eff = q.capacities[0].effective_min_resource if q.capacities else None
            return q.capacity_percent, eff.memory_mb if eff else 0
    raise AssertionError(f"no queue {rid}")


@pytest.mark.parametrize("rig", ["one_off"], indirect=True)
def test_an_app_in_our_reservation_gets_containers_in_the_first_and_the_second_period(rig: Rig) -> None:
    c = rig.cluster
    rig.step(2)
    slos = rig.admin("/v1/morpheus/slos")
    (job,) = slos["jobs"]
    assert job["job"] == JOB.name and job["actionable"] and job["planned"], job
    assert job["period_s"] == PERIOD and job["plan_reason"].startswith("LowCost: steps 1..3 of every 5-step period")
    for period in (1, 2):
        rid, app_id = run_in_window(rig)
        rig.step(8)  # the guard's next ticks nudge: activation was 9 s ago
        cap, eff = queue_capacity(rig, rid)
        assert cap == pytest.approx(100.0 * 3072 / 16384, abs=0.01), f"period {period}: the plan follower's share"
        assert eff == 3072, f"period {period}: the nudge made the queue's capacity effective"
        rig.step(10)  # the MR AM registers (~3 s), then asks for its maps
        got = c.client.get_app(app_id)
        assert got.state == "RUNNING" and got.running_containers == 3, f"period {period}: {got.state} {got.diagnostics}"
        assert got.allocated_mb == 3072, "AM + both maps inside the 3072 MB reservation"
        nudges = rig.admin("/v1/morpheus/reservations")["nudges"]
        assert any(n["done"] and f"activation of {rid}" in " ".join(n["reasons"]) for n in nudges)
        rig.step(220)
    listed = {r.reservation_id for r in c.client.list_reservations(queue="root.default")}
    records = rig.admin("/v1/morpheus/reservations")["reservations"]
    ours = [r for r in records if r["reservation_id"]]
    assert len({r["reservation_id"] for r in ours}) >= 3, "one reservation per period"
    assert all(r["state"] in ("SCHEDULED", "ACTIVE", "ENDED", "DELETING", "DELETED") for r in ours)
    assert {r["reservation_id"] for r in ours if r["state"] in ("SCHEDULED", "ACTIVE")} <= listed


ODD = RecurringJob("it-odd", 330.0, 30.0, 2, 120.0, 10.0, 300.0)  # 5.5 minutes: no whole number of steps


@pytest.mark.parametrize("rig", [{"job": ODD}], indirect=True)
def test_a_period_that_does_not_divide_the_day_gets_one_off_reservations_instance_by_instance(rig: Rig) -> None:
    """§6: a period that does not divide the LCM is reserved one instance at a time
    (decisions/reservation_schedule.plannable_terms): two consecutive instances each get their own
    reservation at their own phase, 330 s apart, on the RM."""
    c = rig.cluster
    rig.step(2)
    (job,) = rig.admin("/v1/morpheus/slos")["jobs"]
    period_ms = round(job["period_s"] * 1000)  # 12 jittered runs: within a few seconds of 330
    assert abs(job["period_s"] - ODD.period_s) <= 3 and not job["lcm_aligned"] and job["planned"], job
    arrivals: set[int] = set()
    for _ in range(4):
        arrivals |= {r.definition.arrival_ms for r in c.client.list_reservations(queue="root.default")}
        rig.step(120)
    first = sorted(arrivals)
    assert len(first) >= 2, first
    gaps = {b - a for a, b in zip(first, first[1:])}
    # one per instance: each gap is whole periods, give or take the window rounded to whole steps
    assert all(min(g % period_ms, period_ms - g % period_ms) <= 60_000 and g >= period_ms - 60_000 for g in gaps), gaps


@pytest.mark.parametrize("rig", ["recurring"], indirect=True)
def test_recurring_mode_shows_the_336_defect_in_the_second_period(rig: Rig) -> None:
    c = rig.cluster
    rig.step(2)
    rid1, app1 = run_in_window(rig)
    rig.step(8)
    assert queue_capacity(rig, rid1)[1] == 3072 and c.client.get_app(app1).running_containers >= 1
    rig.step(230)
    rid2, app2 = run_in_window(rig)
    assert rid2 == rid1, "one recurring reservation for every period"
    rig.step(8)
    assert queue_capacity(rig, rid2) == (0.0, 0), "3.3.6 re-creates the queue at 0 % after the first period"
    assert c.client.get_app(app2).running_containers <= 2, "at most the AM + one map in a 0 % queue (recording: app2)"


@pytest.mark.parametrize("rig", ["one_off"], indirect=True)
def test_dra_grows_the_open_reservation_for_a_job_asking_for_more(rig: Rig) -> None:
    c = rig.cluster
    rid, app_id = job_app_in_window(rig, 8, 150.0)
    rig.step(25)  # AM + workers ask for 9 containers > the 3 reserved: DRA grants min(9, ρ·3 = 6) for a minute
    grants = rig.admin("/v1/morpheus/reservations")["grants"]
    assert grants and grants[0]["level"] == 6 and grants[0]["fate"] == "sent", grants
    assert "DRA §7" in grants[0]["reason"] and "cap max(ρ·max(R_recent), static share) = max(2×3, 0) = 6" in grants[0]["reason"]
    (listed,) = [r for r in c.client.list_reservations(queue="root.default") if r.reservation_id == rid]
    assert max(r.num_containers for r in listed.definition.requests) == 6, "the RM holds the grant"
    rig.step(6)  # the update's nudge: the queue's capacity follows
    assert queue_capacity(rig, rid)[1] == 6144
    got = c.client.get_app(app_id)
    assert 6 <= got.running_containers <= 7, "up to the grant (+ one container: the CapacityScheduler's user limit)"


@pytest.mark.parametrize("rig", ["one_off"], indirect=True)
def test_dra_leaves_alone_an_app_of_the_job_that_is_not_inside_its_reservation(rig: Rig) -> None:
    """An app of the job submitted to the plan queue before its window opened (3.3.6 refuses it
    the reservation then: it runs in root.default-default, its REST queue still root.default) asks
    for 9 containers while the window is open. Before: DRA matched it by name and grew the
    reservation for it, capacity nobody in the reservation uses. Now it is left alone."""
    c = rig.cluster
    rig.step(2)
    arrival = window_start(c.clock.now())
    rig.until(arrival - 10)
    app = c.work.distributed_shell(8, Resources(1024, 1), duration_s=300.0, name=f"{JOB.name}-20261124T1001")
    rig.until(arrival + 30)
    doc = rig.admin("/v1/morpheus/reservations")
    assert c.client.get_app(app.app_id).queue == "root.default"
    assert doc["grants"] == [], doc["grants"]
    assert any("no app of the job inside its reservation" in why for why in doc["dra_not_now"].values()), doc["dra_not_now"]
    assert doc["services"][JOB.name]["service"] == "reserved"


@pytest.mark.parametrize("rig", [{"queues": (QueueConfig("default", 60.0, reservable=True), QueueConfig("etl", 40.0)),
                                  "dra": {"enabled": False}, "fallback": {"home_queues": {JOB.name: "root.etl"}}}],
                         indirect=True)
def test_an_app_still_running_when_its_reservation_ends_goes_back_to_its_own_queue(rig: Rig) -> None:
    """3.3.6 moves the apps of an ended reservation to root.default-default (the plan's leftover);
    the loop moves ours on to the job's own queue (root.etl), where its static share is, with
    its containers (decisions/static_fallback.py; PUT /apps/{id}/queue)."""
    c = rig.cluster
    rid, app_id = job_app_in_window(rig, 2, 400.0)
    (rec,) = [r for r in rig.admin("/v1/morpheus/reservations")["reservations"] if r["reservation_id"] == rid]
    rig.until(rec["deadline_ms"] / 1000 + 3)
    assert c.client.get_app(app_id).queue == "root.default", "the RM moved it to the plan's default queue"
    rig.step(10)  # fallback.settle_s (5 s), then the loop's next tick
    got = c.client.get_app(app_id)
    assert got.queue == "root.etl" and got.state == "RUNNING" and got.running_containers >= 1, (got.queue, got.state)
    doc = rig.admin("/v1/morpheus/reservations")
    (move,) = [a for a in doc["actions"] if a["kind"] == "move"]
    assert move["fate"] == "sent" and "back to its own queue root.etl" in move["reason"]
    (rec,) = [r for r in doc["reservations"] if r["reservation_id"] == rid]
    assert any(f"static fallback: {app_id} to root.etl: sent" in e["event"] for e in rec["events"])

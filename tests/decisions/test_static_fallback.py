"""Never worse than static (decisions/static_fallback.py): who a reservation serves, what a run
holds at each instant, and which apps go back to their own queue."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harvester.decisions.reprovisioning import AppDemand, JobDemand
from harvester.decisions.reservation_actions import spec_from_steps
from harvester.decisions.reservation_lifecycle import ReservationState, new_record
from harvester.decisions.static_fallback import (
    Service, fallback_moves, home_queue, job_service, run_share, start_at_once, start_by,
)
from harvester.domain import Resources
from harvester.models.job_history import JobRun

C = Resources(1024, 1)
S = ReservationState
SPEC = spec_from_steps("hv|etl|0", 600_000, (4, 4, 2), 60_000, C)  # [600 s, 780 s)


def rec(state: ReservationState = S.ACTIVE, job: str = "etl"):  # type: ignore[no-untyped-def]
    return replace(new_record(f"{job}@0", job, 0, SPEC, state, 0.0, "test"), reservation_id="reservation_1_0001")


def test_a_job_is_reserved_only_when_placed_and_not_refused() -> None:
    assert job_service("etl", True, "LowCost: steps 10..12").service is Service.RESERVED
    s = job_service("etl", False, "rejected by its owner")
    assert s.service is Service.STATIC and s.why == "static fallback (its own queue and static share): rejected by its owner"
    refused = replace(rec(S.REJECTED), last_error="PlanningQuotaException")
    s = job_service("etl", True, "LowCost", refused)
    assert s.service is Service.STATIC and "the RM refused its reservation (PlanningQuotaException)" in s.why


@pytest.mark.parametrize(("now_s", "started", "service", "containers"), [
    (500.0, False, Service.RESERVED, 0),     # before the window: it waits for it
    (610.0, False, Service.RESERVED, 4),
    (730.0, True, Service.RESERVED, 2),
    (780.0, True, Service.STATIC, 9),        # its reservation ended with it running: its static share
    (800.0, False, Service.STATIC, 9),       # its input arrived after its reservation ended
])
def test_what_a_run_holds(now_s: float, started: bool, service: Service, containers: int) -> None:
    got = run_share(SPEC, int(now_s * 1000), 9, started)
    assert (got.service, got.containers) == (service, containers)
    assert run_share(None, 0, 9, False).service is Service.STATIC


@pytest.mark.parametrize(("now_s", "deadline_s", "longest_s", "at_once"), [
    (100.0, 900.0, 250.0, True),    # the longest run would be over (350 s) before the window opens (600 s)
    (500.0, 900.0, 250.0, False),   # it would not; the reservation holds it (600 + 250 <= 900)
    (500.0, 800.0, 250.0, True),    # the reservation cannot hold it (850 > 800), starting now can (750)
    (500.0, 700.0, 250.0, False),   # neither can: it waits for the reservation
    (100.0, 900.0, 0.0, False),     # no history: it waits
    (610.0, 900.0, 50.0, False),    # the window is open
])
def test_a_run_that_can_start_before_its_window(now_s: float, deadline_s: float, longest_s: float, at_once: bool) -> None:
    assert start_at_once(SPEC, int(now_s * 1000), int(deadline_s * 1000), int(longest_s * 1000)) is at_once
    share = run_share(SPEC, int(now_s * 1000), 9, False, int(deadline_s * 1000), int(longest_s * 1000))
    assert (share.service is Service.STATIC) is at_once


@pytest.mark.parametrize(("deadline_s", "longest_s", "until_s"), [
    (900.0, 250.0, 350.0),     # the reservation (600 s) holds the longest run: only if over before it opens
    (800.0, 250.0, 550.0),     # it cannot (850 > 800): whenever starting now meets d_j
    (900.0, 0.0, None),        # no history: never
])
def test_until_when_a_run_starts_at_once(deadline_s: float, longest_s: float, until_s: float | None) -> None:
    by = start_by(SPEC, int(deadline_s * 1000), int(longest_s * 1000))
    assert by == (None if until_s is None else int(until_s * 1000))
    assert start_by(SPEC, 800_000, 250_000, rules=()) is None


def test_each_reason_to_start_at_once_can_be_turned_off() -> None:
    over_before, cannot_hold = (100_000, 900_000, 250_000), (500_000, 800_000, 250_000)
    assert not start_at_once(SPEC, *over_before, rules=("cannot-hold",)) and start_at_once(SPEC, *cannot_hold, rules=("cannot-hold",))
    assert start_at_once(SPEC, *over_before, rules=("over-before-window",))
    assert not start_at_once(SPEC, *cannot_hold, rules=("over-before-window",)) and not start_at_once(SPEC, *over_before, rules=())
    assert start_at_once(SPEC, *over_before, static_level=4) and not start_at_once(SPEC, *over_before, static_level=3), \
        "on less than the reservation's 4 containers the run would be slower than the longest run judged by"


def demand(*apps: tuple[str, str, float]) -> dict[str, JobDemand]:
    one = tuple(AppDemand(a, q, t, Resources(1024, 1), Resources(0, 0)) for a, q, t in apps)
    return {"etl": JobDemand("etl", tuple(a for a, _, _ in apps), Resources(1024, 1), Resources(0, 0), one)}


def test_an_app_whose_reservation_ended_goes_back_to_its_own_queue() -> None:
    d = demand(("app_in", "root.default", 610.0), ("app_before", "root.default", 500.0), ("app_home", "root.etl", 650.0))
    moves, stays = fallback_moves(790.0, d, [rec(S.ENDED)], {"etl": "root.etl"}, "root.default")
    assert [(m.app_id, m.queue) for m in moves] == [("app_in", "root.etl")] and stays == {}
    assert "ended at 780 with the app running; back to its own queue root.etl" in moves[0].why
    assert fallback_moves(782.0, d, [rec(S.ENDED)], {"etl": "root.etl"}, "root.default")[0] == [], "settle_s first"
    assert fallback_moves(790.0, d, [rec(S.ACTIVE)], {"etl": "root.etl"}, "root.default")[0] == []
    moves, stays = fallback_moves(790.0, d, [rec(S.ENDED)], {}, "root.default")
    assert moves == [] and "no own queue known" in stays["app_in"]
    assert fallback_moves(790.0, d, [rec(S.ENDED, job="other")], {"etl": "root.etl"}, "root.default")[0] == [], \
        "apps of a job without a reservation are never moved"


def test_a_jobs_own_queue_is_that_of_its_last_run_outside_the_plan() -> None:
    def run(q: str, end: float) -> JobRun:
        return JobRun("etl", f"app_{end:.0f}", end - 10, end, queue=q)
    assert home_queue([run("root.etl", 10.0), run("root.default", 20.0), run("etl2", 15.0)], "root.default") == "root.etl2"
    assert home_queue([run("root.default", 20.0), run("default-default", 30.0)], "root.default") is None

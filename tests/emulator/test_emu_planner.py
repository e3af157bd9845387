"""Reservation placement and quota (harvester/emulator/planner.py) against recorded placements."""

from __future__ import annotations

import pytest

from harvester.domain import Resources as R
from harvester.emulator.planner import Commitment, Interval, Planner, PlanningError, Stage, check_quota

CAP = R(16384, 16)
HOUR = 3_600_000


def offsets(ivs: list[Interval], period: int = HOUR) -> tuple[Interval, ...]:
    return tuple(Interval(i.start % period, i.start % period + i.end - i.start, i.resources) for i in ivs)


def test_an_empty_plan_places_order_no_gap_stages_at_the_arrival() -> None:
    # captures/reservation-list-with-allocations: [212044, 812044) 2048/2 then [812044, 1112044) 2048/4
    got = Planner(CAP, [], "dr.who", 1.0).place(
        [Stage(R(1024, 1), 2, 2, 600_000), Stage(R(512, 1), 4, 4, 300_000)], 3, 1795421012044, 1795424492044)
    assert [(i.start % HOUR, i.end % HOUR, i.resources) for i in got] == [
        (212044, 812044, R(2048, 2)), (812044, 1112044, R(2048, 4))]


def test_a_slot_overlapping_load_loses_to_a_free_one_later() -> None:
    first = Planner(CAP, [], "dr.who", 1.0).place(
        [Stage(R(1024, 1), 2, 2, 600_000), Stage(R(512, 1), 4, 4, 300_000)], 3, 1795421012044, 1795424492044)
    hourly = Commitment("r1", "dr.who", offsets(first), HOUR)
    # captures/reservation-list-two: the R_ALL reservation went to [deadline - 900 s, deadline)
    got = Planner(CAP, [hourly], "dr.who", 1.0).place([Stage(R(1024, 1), 4, 4, 900_000)], 1, 1795420991339,
                                                      1795422791339)
    assert [(i.start, i.end, i.resources) for i in got] == [(1795421891339, 1795422791339, R(4096, 4))]


def test_recurring_r3_of_the_lifecycle_scenario_is_placed_late() -> None:
    base = 1795430914928
    r1 = Planner(CAP, [], "root", 1.0).place([Stage(R(1024, 1), 3, 3, 180_000)], 0, base + 30_000, base + 210_000)
    r2 = Planner(CAP, [Commitment("r1", "root", tuple(r1))], "root", 1.0).place(
        [Stage(R(1024, 1), 2, 2, 90_000)], 0, base + 30_000, base + 120_000)
    plan = [Commitment("r1", "root", tuple(r1)), Commitment("r2", "root", tuple(r2))]
    r3 = Planner(CAP, plan, "root", 1.0).place([Stage(R(1024, 1), 2, 2, 60_000)], 0, base + 30_000, base + 150_000)
    assert [(i.start % HOUR, i.end % HOUR) for i in r3] == [(3004928, 3064928)]  # "placed late", mod the period


def test_a_definition_that_does_not_fit_is_refused() -> None:
    full = Commitment("big", "u", (Interval(0, 10_000_000, R(16384, 16)),))
    with pytest.raises(PlanningError) as err:
        Planner(CAP, [full], "u", 1.0).place([Stage(R(1024, 1), 1, 1, 60_000)], 1, 1_000_000, 2_000_000)
    assert err.value.java_class == "PlanningException" and "cannot be satisfied" in str(err.value)


@pytest.mark.parametrize("stage,message", [
    (Stage(R(1024, 1), 3, 2, 60_000), "Parallelism must be an exact multiple of gang size"),
    (Stage(R(1024, 1), 0, 1, 60_000), "Num containers should be > 0"),
    (Stage(R(1024, 1), 2, 0, 60_000), "Gang Size should be >= 1"),
])
def test_stage_contract_errors(stage: Stage, message: str) -> None:
    with pytest.raises(PlanningError, match=message):
        Planner(CAP, [], "u", 1.0).place([stage], 1, 0, 10_000_000)


def test_integral_quota_over_the_window() -> None:
    new = Commitment("r6", "dr.who", (Interval(1_000_000, 1_240_000, R(3072, 3)),))
    check_quota(CAP, [], new, 1.0, 1.0, 86_400_000)  # 8.5 MB average over a day: fine
    with pytest.raises(PlanningError) as err:          # 1228 MB average over 10 min > 5 % of 16 GB
        check_quota(CAP, [], new, 1.0, 0.05, 600_000)
    assert err.value.java_text().startswith(
        "org.apache.hadoop.yarn.server.resourcemanager.reservation.exceptions.PlanningQuotaException: Integral "
        "(avg over time) quota capacity 0.05 over a window of 600 seconds,  would be exceeded")


def test_instantaneous_quota_counts_only_the_users_reservations() -> None:
    other = Commitment("x", "alice", (Interval(0, 1000, R(12288, 12)),))
    mine = Commitment("y", "bob", (Interval(0, 1000, R(4096, 4)),))
    check_quota(CAP, [other], mine, 0.5, 1.0, 86_400_000)
    with pytest.raises(PlanningError, match="Instantaneous quota"):
        check_quota(CAP, [], Commitment("z", "bob", (Interval(0, 1000, R(9216, 9)),)), 0.5, 1.0, 86_400_000)

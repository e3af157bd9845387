"""Jockey's allocation as the job's reservation (decisions/deadline_reservation.py): resizing from
a cut keeps the window and the past, containers per plan step for LowCost's admission."""

from __future__ import annotations

import pytest

from harvester.decisions.deadline_reservation import cut_at, is_open, max_per_step, resized
from harvester.decisions.reservation_actions import ReservationSpec, SpecStage
from harvester.domain import Resources

C = Resources(1024, 1)
A = 1_795_504_820_000  # the arrival of scenarios/recurring-reservation
# its definition: 2 containers for 180 s, then 4 for 120 s (R_ORDER_NO_GAP, window = the stages)
REC = ReservationSpec("r", A, A + 300_000, (SpecStage(C, 2, 2, 180_000), SpecStage(C, 4, 4, 120_000)))


def shape(spec: ReservationSpec) -> list[tuple[int, int]]:
    return [(s.containers, s.duration_ms // 1000) for s in spec.stages]


@pytest.mark.parametrize(("cut_s", "n", "expected"), [
    (0, 5, [(5, 300)]),                      # from the arrival: one stage
    (60, 5, [(2, 60), (5, 240)]),            # inside the first stage: split it
    (180, 6, [(2, 180), (6, 120)]),          # at the boundary: the recorded update (stage 2: 4 -> 6)
    (215, 6, [(2, 180), (4, 35), (6, 85)]),  # inside the second stage
    (215, 4, [(2, 180), (4, 120)]),          # the same size: nothing changes
    (60, 2, [(2, 300)]),                     # merged with the stage it continues
])
def test_resized_keeps_the_window_and_what_came_before_the_cut(cut_s: int, n: int, expected: list) -> None:
    out = resized(REC, A + cut_s * 1000, n)
    assert out is not None and shape(out) == expected
    assert (out.arrival_ms, out.deadline_ms, out.length_ms) == (REC.arrival_ms, REC.deadline_ms, 300_000)
    assert all(s.gang == s.containers for s in out.stages[-1:]), "a gang of all its containers, as Morpheus pins"
    assert out.containers_at(A + cut_s * 1000) == n


def test_outside_the_window_nothing_is_resized_and_bad_sizes_are_refused() -> None:
    assert resized(REC, A - 1000, 3) is None and resized(REC, A + 300_000, 3) is None
    with pytest.raises(ValueError):
        resized(REC, A, 0)


def test_a_recurring_reservation_is_resized_in_its_current_occurrence() -> None:
    rec = ReservationSpec("r", A, A + 300_000, REC.stages, recurrence_ms=600_000)
    later = A + 600_000 + 200_000  # the second period, 200 s into its window
    assert is_open(rec, later) and not is_open(rec, A + 600_000 + 300_000)
    out = resized(rec, later, 7)
    assert out is not None and shape(out) == [(2, 180), (4, 20), (7, 100)] and out.arrival_ms == A


def test_cut_rounds_up_to_the_plan_followers_second() -> None:
    assert cut_at(1_000_000_400, 2000) == 1_000_003_000 and cut_at(1_000_000_000, 0) == 1_000_000_000


def test_max_per_step_takes_the_most_held_within_each_step() -> None:
    out = resized(REC, A + 215_000, 6)
    assert out is not None
    assert max_per_step(out, 60_000, 5) == (2, 2, 2, 6, 6)  # step 3 holds 4 then 6
    assert max_per_step(REC, 60_000, 6) == (2, 2, 2, 4, 4, 0)

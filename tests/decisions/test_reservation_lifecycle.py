"""The managed reservation's lifecycle (DESIGN.md principle 6): its transition table, terminal
states, names that survive a restart, and where the window puts a reservation."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harvester.decisions.reservation_actions import ReservationSpec, spec_from_steps
from harvester.decisions.reservation_lifecycle import (
    TERMINAL, TRANSITIONS, ReservationState, by_time, new_record, parse_name, reservation_name,
)
from harvester.domain import Resources
from harvester.lifecycle import InvalidTransition, check_table

S = ReservationState
C = Resources(1024, 1)

ALLOWED = {
    (S.PLANNED, S.SUBMITTED), (S.PLANNED, S.REJECTED), (S.PLANNED, S.WITHDRAWN),
    (S.SUBMITTED, S.SCHEDULED), (S.SUBMITTED, S.ACTIVE), (S.SUBMITTED, S.ENDED), (S.SUBMITTED, S.DRIFTED),
    (S.SUBMITTED, S.LOST), (S.SUBMITTED, S.DELETING),
    (S.SCHEDULED, S.ACTIVE), (S.SCHEDULED, S.ENDED), (S.SCHEDULED, S.DRIFTED), (S.SCHEDULED, S.DELETING),
    (S.SCHEDULED, S.LOST),
    (S.ACTIVE, S.ENDED), (S.ACTIVE, S.SCHEDULED), (S.ACTIVE, S.DRIFTED), (S.ACTIVE, S.DELETING), (S.ACTIVE, S.LOST),
    (S.DRIFTED, S.SCHEDULED), (S.DRIFTED, S.ACTIVE), (S.DRIFTED, S.ENDED), (S.DRIFTED, S.DELETING),
    (S.DRIFTED, S.LOST),
    (S.ENDED, S.DELETING), (S.ENDED, S.DELETED),
    (S.DELETING, S.DELETED),
}


def spec(arrival_ms: int = 600_000, alloc: tuple[int, ...] = (2, 2, 4), recurrence_ms: int = 0) -> ReservationSpec:
    return spec_from_steps("n", arrival_ms, alloc, 60_000, C, recurrence_ms)


def test_the_table_is_closed_and_terminal_states_have_no_exit() -> None:
    check_table(TRANSITIONS)
    assert set(TRANSITIONS) == set(S)
    assert TERMINAL == {s for s, targets in TRANSITIONS.items() if not targets}


@pytest.mark.parametrize(("src", "dst"), list(itertools.product(S, S)))
def test_every_move_is_allowed_exactly_when_the_table_says(src: ReservationState, dst: ReservationState) -> None:
    r = new_record("job@1", "job", 1, spec(), src, 0.0, "start")
    if (src, dst) in ALLOWED:
        moved = r.to(dst, 5.0, "why")
        assert moved.state is dst and moved.lifecycle.history[-1].reason == "why" and moved.lifecycle.since == 5.0
        assert r.state is src, "records are immutable values"
    elif src is dst:
        assert r.to(dst, 5.0, "same") is r, "staying is no move"
    else:
        with pytest.raises(InvalidTransition, match=f"{src.value} -> {dst.value}"):
            r.to(dst, 5.0, "bad")


def test_a_full_one_off_life_keeps_its_status_history() -> None:
    r = new_record("job@0", "job", 0, spec(), S.PLANNED, 0.0, "planned")
    for i, s in enumerate((S.SUBMITTED, S.SCHEDULED, S.ACTIVE, S.ENDED, S.DELETING, S.DELETED), 1):
        r = r.to(s, float(i), s.value.lower())
    assert [c.state for c in r.lifecycle.history] == [S.PLANNED, S.SUBMITTED, S.SCHEDULED, S.ACTIVE, S.ENDED, S.DELETING,
                                                     S.DELETED]
    assert r.terminal and r.lifecycle.entered(S.ACTIVE) == 3.0


def test_a_recurring_reservation_goes_back_and_forth_and_the_history_stays_bounded() -> None:
    r = new_record("job@recurring", "job", 0, spec(recurrence_ms=600_000), S.SCHEDULED, 0.0, "listed")
    for i in range(50):
        r = r.to(S.ACTIVE if i % 2 == 0 else S.SCHEDULED, float(i + 1), "window")
    assert len(r.lifecycle.history) == 20 and r.lifecycle.history[0].reason == "listed", "the first entry is kept"


@given(job=st.text(min_size=1, max_size=30).filter(lambda j: not j.startswith("|")),
       start=st.one_of(st.none(), st.integers(0, 10**13)))
def test_names_round_trip(job: str, start: int | None) -> None:
    assert parse_name("hv", reservation_name("hv", job, start)) == (job, start)


@pytest.mark.parametrize("name", ["", "hv", "hv|", "hv||1", "other|job|1", "hvx|job|1", "hv|job|12a", "job|1"])
def test_names_that_are_not_ours(name: str) -> None:
    assert parse_name("hv", name) is None


@pytest.mark.parametrize(("now_ms", "state"), [
    (0, S.SCHEDULED), (599_999, S.SCHEDULED), (600_000, S.ACTIVE), (779_999, S.ACTIVE), (780_000, S.ENDED),
])
def test_a_one_off_by_time(now_ms: int, state: ReservationState) -> None:
    assert by_time(spec(), now_ms) is state  # window [600 s, 780 s)


@pytest.mark.parametrize(("now_ms", "state"), [
    (599_999, S.SCHEDULED), (600_000, S.ACTIVE), (780_000, S.SCHEDULED), (1_200_000, S.ACTIVE), (1_379_999, S.ACTIVE),
])
def test_a_recurring_one_by_time(now_ms: int, state: ReservationState) -> None:
    assert by_time(spec(recurrence_ms=600_000), now_ms) is state

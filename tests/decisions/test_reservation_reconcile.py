"""Reconciliation of Morpheus's reservations with the RM's list, and folding in the actuator's
results (decisions/reservation_reconcile.py). Error texts are the recorded ones
(captures err-reservation-*, reservation-submit-quota-*)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harvester.decisions.reservation_actions import (
    DeleteReservation, Outcome, ReservationResult, SubmitReservation, UpdateReservation, spec_from_steps,
)
from harvester.decisions.reservation_lifecycle import ReservationState, new_record, reservation_name
from harvester.decisions.reservation_reconcile import Listed, ReconcileParams, fold, reconcile
from harvester.decisions.reservation_schedule import Desired
from harvester.domain import Resources

S = ReservationState
C = Resources(1024, 1)
P = ReconcileParams("hv", "root.default", confirm_grace_s=60, delete_ended_after_s=300)
PERIOD_MS = 600_000
QUOTA = ("java.lang.Exception: org.apache.hadoop.yarn.server.resourcemanager.reservation.exceptions."
         "PlanningQuotaException: Integral (avg over time) quota capacity 1.0 over a window of 86400 seconds,  "
         "would be exceeded by accepting reservation: reservation_1795420810582_0006")


def window(start_ms: int, alloc: tuple[int, ...] = (2, 2, 4), job: str = "etl") -> Desired:
    spec = spec_from_steps(reservation_name("hv", job, start_ms), start_ms + 60_000, alloc, 60_000, C)
    return Desired(f"{job}@{start_ms}", job, start_ms, spec, True)


def listed_of(d: Desired, rid: str, spec=None) -> Listed:  # type: ignore[no-untyped-def]
    return Listed(rid, d.spec.name, spec or d.spec, "root")


def submitted(d: Desired, rid: str, at: float = 0.0):  # type: ignore[no-untyped-def]
    r = new_record(d.key, d.job, d.period_start_ms, d.spec, S.PLANNED, at, "planned")
    return replace(r.to(S.SUBMITTED, at, "sent"), reservation_id=rid, submitted_at=at)


def test_a_wanted_window_is_planned_and_submitted_once() -> None:
    d = window(PERIOD_MS)
    out = reconcile(0.0, {}, [], {d.key: d}, P, "s1")
    (a,) = out.actions
    assert isinstance(a, SubmitReservation) and a.spec == d.spec and a.queue == "root.default" and a.as_of == 0.0
    assert a.reason == "renew: the window of etl opens at 1970-01-01T00:11:00Z (in 11m00s)"
    assert out.records[d.key].state is S.PLANNED
    sent, _ = fold(out.records, [ReservationResult(a, Outcome.SENT, "reservation_1_0001")], 1.0)
    assert sent[d.key].state is S.SUBMITTED and sent[d.key].reservation_id == "reservation_1_0001"
    again = reconcile(2.0, sent, [], {d.key: d}, P)
    assert again.actions == [] and again.records[d.key].state is S.SUBMITTED, "not listed yet, within the grace"
    listed = reconcile(3.0, sent, [listed_of(d, "reservation_1_0001")], {d.key: d}, P)
    assert listed.records[d.key].state is S.SCHEDULED and listed.actions == []


def test_a_refused_submit_is_rejected_with_the_rms_reason_and_not_asked_again() -> None:
    d = window(PERIOD_MS)
    out = reconcile(0.0, {}, [], {d.key: d}, P)
    res = ReservationResult(out.actions[0], Outcome.REFUSED, "reservation_1_0006", QUOTA, "BadRequestException")
    records, _ = fold(out.records, [res], 0.5)
    r = records[d.key]
    assert r.state is S.REJECTED and "PlanningQuotaException" in r.lifecycle.history[-1].reason
    assert reconcile(5.0, records, [], {d.key: d}, P).actions == [], "the RM refused this window: not again"
    nxt = window(2 * PERIOD_MS)
    assert [a.key for a in reconcile(5.0, records, [], {d.key: d, nxt.key: nxt}, P).actions] == [nxt.key]


@pytest.mark.parametrize(("outcome", "rid", "state"), [
    (Outcome.FAILED, "reservation_1_0002", S.SUBMITTED),  # the id exists: the list will tell
    (Outcome.FAILED, None, S.PLANNED),                    # new-reservation itself failed
    (Outcome.DROPPED, None, S.PLANNED),                   # stale: never sent, decided again next tick
])
def test_unknown_and_dropped_submits(outcome: Outcome, rid: str | None, state: ReservationState) -> None:
    d = window(PERIOD_MS)
    out = reconcile(0.0, {}, [], {d.key: d}, P)
    records, _ = fold(out.records, [ReservationResult(out.actions[0], outcome, rid, "connection refused")], 0.5)
    assert records[d.key].state is state
    if state is S.PLANNED:
        assert [type(a) for a in reconcile(1.0, records, [], {d.key: d}, P).actions] == [SubmitReservation]


def test_a_submitted_reservation_never_listed_is_lost_after_the_grace() -> None:
    d = window(PERIOD_MS)
    records = {d.key: submitted(d, "reservation_1_0003", at=0.0)}
    assert reconcile(59.0, records, [], {d.key: d}, P).records[d.key].state is S.SUBMITTED
    out = reconcile(61.0, records, [], {d.key: d}, P)
    lost = out.records[f"{d.key}~reservation_1_0003"]
    assert lost.state is S.LOST and out.counts["lost"] == 1 and "does not list it" in lost.lifecycle.history[-1].reason
    assert out.records[d.key].state is S.PLANNED and [type(a) for a in out.actions] == [SubmitReservation], \
        "the window is still wanted: submitted again"


def test_the_window_moves_the_state_and_an_ended_one_off_is_cleaned_up() -> None:
    d = window(PERIOD_MS)  # window [660 s, 840 s)
    rid = "reservation_1_0004"
    records = {d.key: submitted(d, rid)}
    for now, state in ((100.0, S.SCHEDULED), (660.0, S.ACTIVE), (839.0, S.ACTIVE), (840.0, S.ENDED)):
        wanted = {d.key: d} if now < 840 else {}  # desired_windows stops wanting it at its deadline
        records = reconcile(now, records, [listed_of(d, rid)], wanted, P).records
        assert records[d.key].state is state, now
    assert reconcile(1139.0, records, [listed_of(d, rid)], {}, P).actions == []
    out = reconcile(1141.0, records, [listed_of(d, rid)], {}, P)
    (a,) = out.actions
    assert isinstance(a, DeleteReservation) and a.reservation_id == rid and out.records[d.key].state is S.DELETING
    gone, _ = fold(out.records, [ReservationResult(a, Outcome.REFUSED, rid, f"The specified Reservation with ID {rid} "
                                                   "does not exist in the plan", "IllegalArgumentException")], 1142.0)
    assert gone[d.key].state is S.DELETED, "already deleted counts as deleted"


def test_an_ended_one_the_rm_archived_is_deleted_and_one_gone_early_is_lost() -> None:
    d = window(PERIOD_MS)
    records = {d.key: submitted(d, "r_1").to(S.SCHEDULED, 1.0, "listed")}
    assert reconcile(950.0, records, [], {}, P).records[d.key].state is S.DELETED
    out = reconcile(100.0, records, [], {}, P)
    assert out.records[d.key].state is S.LOST and "outside Harvester" in out.records[d.key].lifecycle.history[-1].reason


def test_drift_is_reported_and_corrected_then_matches_again() -> None:
    d = window(PERIOD_MS)
    rid = "reservation_1_0005"
    records = {d.key: submitted(d, rid).to(S.SCHEDULED, 1.0, "listed")}
    theirs = spec_from_steps(d.spec.name, d.spec.arrival_ms, (2, 2, 6), 60_000, C)
    out = reconcile(10.0, records, [listed_of(d, rid, theirs)], {d.key: d}, P)
    (a,) = out.actions
    assert out.records[d.key].state is S.DRIFTED and out.counts["drifted"] == 1
    assert isinstance(a, UpdateReservation) and a.spec == d.spec and a.reason.startswith("drift: back to")
    fixed, nudges = fold(out.records, [ReservationResult(a, Outcome.SENT, rid)], 11.0)
    assert fixed[d.key].state is S.SCHEDULED and nudges == [f"update of {rid}"]
    report_only = reconcile(10.0, records, [listed_of(d, rid, theirs)], {d.key: d}, replace(P, correct_drift=False))
    assert report_only.actions == [] and report_only.records[d.key].state is S.DRIFTED


def test_a_refused_update_is_not_sent_again_as_is() -> None:
    d = window(PERIOD_MS)
    rid = "reservation_1_0007"
    records = {d.key: submitted(d, rid).to(S.SCHEDULED, 1.0, "listed")}
    moved = window(PERIOD_MS, alloc=(3, 3, 3))
    out = reconcile(10.0, records, [listed_of(d, rid)], {d.key: moved}, P)
    (a,) = out.actions
    assert isinstance(a, UpdateReservation) and a.rebase and a.reason.startswith("re-planned")
    refused, _ = fold(out.records, [ReservationResult(a, Outcome.REFUSED, rid, QUOTA, "BadRequestException")], 11.0)
    assert refused[d.key].state is S.SCHEDULED and QUOTA in refused[d.key].last_error
    assert reconcile(15.0, refused, [listed_of(d, rid)], {d.key: moved}, P).actions == []


def test_adoption_after_a_restart_and_clean_up_of_unplanned_ones_others_untouched() -> None:
    planned, open_now, stale = window(PERIOD_MS), window(0), window(3 * PERIOD_MS, job="gone")
    foreign = Listed("reservation_1_0100", "someone-elses", planned.spec, "alice")
    listed = [listed_of(planned, "r_10"), listed_of(open_now, "r_11"), listed_of(stale, "r_12"), foreign]
    out = reconcile(100.0, {}, listed, {planned.key: planned}, P)
    assert out.records[planned.key].state is S.SCHEDULED and out.records[planned.key].reservation_id == "r_10"
    assert out.records[open_now.key].state is S.ACTIVE, "an open window is adopted even if the plan moved"
    assert out.nudges and "r_11" in out.nudges[0], "its queue's capacity may be stale: nudge"
    (delete,) = out.actions
    assert isinstance(delete, DeleteReservation) and delete.reservation_id == "r_12" and "no longer planned" in delete.reason
    assert all(r.reservation_id != "reservation_1_0100" for r in out.records.values()), "not ours: never touched"
    assert out.counts == {"adopted": 2, "orphans": 1}


def test_a_future_window_no_longer_planned_is_deleted_and_a_planned_but_unsent_one_withdrawn() -> None:
    d = window(PERIOD_MS)
    records = {d.key: submitted(d, "r_20").to(S.SCHEDULED, 1.0, "listed")}
    out = reconcile(10.0, records, [listed_of(d, "r_20")], {}, P)
    assert [type(a) for a in out.actions] == [DeleteReservation] and out.records[d.key].state is S.DELETING
    planned = {d.key: new_record(d.key, d.job, d.period_start_ms, d.spec, S.PLANNED, 0.0, "planned")}
    assert reconcile(10.0, planned, [], {}, P).records[d.key].state is S.WITHDRAWN
    late = replace(d, submittable=False, why_not="opens in 2 s")
    assert reconcile(10.0, planned, [], {d.key: late}, P).records[d.key].state is S.WITHDRAWN


def test_an_active_window_no_longer_planned_is_left_to_run() -> None:
    d = window(0)  # window [60 s, 300 s)
    records = {d.key: submitted(d, "r_30").to(S.ACTIVE, 61.0, "open")}
    out = reconcile(100.0, records, [listed_of(d, "r_30")], {}, P)
    assert out.actions == [] and out.records[d.key].state is S.ACTIVE


def test_an_adopted_reservation_of_another_shape_is_updated_to_the_plan_next_tick() -> None:
    d = window(PERIOD_MS)
    old = spec_from_steps(d.spec.name, d.spec.arrival_ms, (1, 1), 60_000, C)
    first = reconcile(10.0, {}, [listed_of(d, "r_40", old)], {d.key: d}, P)
    assert first.actions == [] and first.records[d.key].spec == old
    (a,) = reconcile(15.0, first.records, [listed_of(d, "r_40", old)], {d.key: d}, P).actions
    assert isinstance(a, UpdateReservation) and a.spec == d.spec and a.rebase


def test_a_handed_over_reservation_follows_the_rms_list_and_is_neither_corrected_nor_replanned() -> None:
    d = window(PERIOD_MS)
    rid = "reservation_1_0009"
    records = {d.key: submitted(d, rid).to(S.SCHEDULED, 1.0, "listed")}
    jockeys = spec_from_steps(d.spec.name, d.spec.arrival_ms, (2, 5, 5), 60_000, C)  # the owner resized it
    moved = window(PERIOD_MS, alloc=(3, 3, 3))  # and the plan would re-place it
    out = reconcile(10.0, records, [listed_of(d, rid, jockeys)], {d.key: moved}, P, handed_over=frozenset({rid}))
    assert out.actions == [] and out.counts.get("drifted") is None
    r = out.records[d.key]
    assert r.state is S.SCHEDULED and r.spec == jockeys and "resized by its owner" in r.events[-1][1]
    # once handed back, the same list is drift again (and the re-plan applies)
    back = reconcile(20.0, records, [listed_of(d, rid, jockeys)], {d.key: moved}, P)
    assert back.records[d.key].state is S.DRIFTED and back.actions


GANG = ("java.lang.Exception: The size of the largest gang in the reservation definition (<memory:5120, vCores:5>) "
        "exceed the capacity available (<memory:2048, vCores:2> )")  # captures err-reservation-submit-gang-larger-than-cluster
RETRY = ReconcileParams("hv", "root.default", retry_first_s=5.0, retry_max_s=20.0)


def test_a_submit_refused_for_lack_of_capacity_is_retried_with_a_bounded_backoff() -> None:
    """Issue 25: right after start the guard had cut every node, the plan queue's capacity was
    <2048 MB, 2 vc> and the RM refused the demo's gangs; they were never tried again that period."""
    d = window(PERIOD_MS)
    out = reconcile(0.0, {}, [], {d.key: d}, RETRY)
    sent_at, waits = [0.0], []
    records = out.records
    action = out.actions[0]
    for _ in range(4):
        now = sent_at[-1] + 0.5
        records, _ = fold(records, [ReservationResult(action, Outcome.REFUSED, None, GANG, "BadRequestException")], now,
                          RETRY)
        r = records[d.key]
        assert r.state is S.PLANNED and r.retry_at is not None and "lack of capacity" in r.events[-1][1]
        assert reconcile(r.retry_at - 0.1, records, [], {d.key: d}, RETRY).actions == [], "waits out the backoff"
        nxt = reconcile(r.retry_at, records, [], {d.key: d}, RETRY)
        (action,) = nxt.actions
        assert isinstance(action, SubmitReservation) and action.reason.startswith(f"retry {r.refusals}")
        waits.append(r.retry_at - now)
        sent_at.append(r.retry_at)
        records = nxt.records
    assert waits == [5.0, 10.0, 20.0, 20.0], "doubling from one control period, bounded"
    accepted, _ = fold(records, [ReservationResult(action, Outcome.SENT, "reservation_1_0009")], sent_at[-1] + 0.5, RETRY)
    assert accepted[d.key].state is S.SUBMITTED and accepted[d.key].reservation_id == "reservation_1_0009"


def test_a_capacity_refusal_becomes_rejected_when_its_window_can_no_longer_be_submitted() -> None:
    d = window(PERIOD_MS)
    out = reconcile(0.0, {}, [], {d.key: d}, RETRY)
    records, _ = fold(out.records, [ReservationResult(out.actions[0], Outcome.REFUSED, None, GANG, "BadRequestException")],
                      0.5, RETRY)
    late = replace(d, submittable=False, why_not="opens in 3 s < min_lead_s 5 s")
    gone = reconcile(30.0, records, [], {d.key: late}, RETRY)
    r = gone.records[d.key]
    assert gone.actions == [] and r.state is S.REJECTED
    assert "1 time(s) for lack of capacity" in r.lifecycle.history[-1].reason and "min_lead_s" in r.lifecycle.history[-1].reason

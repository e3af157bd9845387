"""Reconcile Morpheus's reservations with the RM's reservation list, and fold in what the
actuator did (DESIGN.md principles 2, 6, 16) — pure: records + the RM's list + the wanted
windows in, new records + actions (each with its reason and the list's time) out.

One tick, `reconcile(...)`:
1. Adopt: a listed reservation whose name carries our prefix (reservation_lifecycle.parse_name)
   but that no record knows (a restart) is adopted when the plan wants that window (or it is
   open now: a running window is never disturbed); otherwise it is ours but unplanned, and
   deleted. Reservations without our prefix belong to someone else and are never touched.
2. Every live record: the list confirms it (SUBMITTED → SCHEDULED), the clock moves it
   (SCHEDULED → ACTIVE → ENDED), a listed definition other than the one we sent makes it
   DRIFTED (and, with `correct_drift`, decides an update back), its absence makes it LOST
   (or DELETED once its window is over: the RM archives ended reservations). A future window
   the plan no longer wants is deleted; one the plan re-placed is updated to the new spec; an
   ended one-off is deleted `delete_ended_after_s` after its window. A reservation HANDED OVER
   to another owner (`handed_over`: Jockey drives its size, loop/jockey.py) follows the RM's
   list instead: its record takes the listed definition, and no drift correction or re-plan
   update is decided for it (one owner per reservation).
3. Every wanted window without a live record (and not refused for this window before) gets a
   PLANNED record and a submit, if it is still `submittable`.
`fold(...)` then applies the actuator's results: sent submits become SUBMITTED with their id,
4xx answers REJECTED (the RM's reason kept), unknown outcomes are left to the next list;
dropped actions leave the record as it was (the next tick decides again from fresh data).

A submit refused for lack of CAPACITY (`for_lack_of_capacity`: the RM's plan is too small NOW —
the plan queue's capacity follows the nodes' capacity, which the guard lowers when primaries
rise, and with it the gang check and the planner's room) is not the RM's verdict on the
window: the record stays PLANNED and the submit is retried after `retry_first_s` (one control
period), doubling up to `retry_max_s`, until the RM accepts it or the window can no longer be
submitted (then REJECTED with the last refusal). Quota refusals (the user's share over time)
and invalid definitions stay REJECTED at once: waiting does not change them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from harvester.decisions.reservation_actions import (
    DeleteReservation, MoveApp, Outcome, ReservationAction, ReservationResult, ReservationSpec, SubmitReservation,
    UpdateReservation,
)
from harvester.decisions.reservation_lifecycle import (
    HELD, TERMINAL, ManagedReservation, ReservationState, by_time, new_record, parse_name, record_key,
)
from harvester.decisions.reservation_schedule import Desired
from harvester.timefmt import when

S = ReservationState
GONE_MESSAGES = ("does not exist in the plan", "is unknown")  # delete of a deleted / never accepted id (captures)
#: The RM's refusals for lack of capacity now (3.3.6 ReservationInputValidator's gang check, fixtures
#: err-reservation-submit-gang-larger-than-cluster; the planner's "cannot be satisfied"; the plan's
#: ResourceOverCommitException) — retried (module docstring).
CAPACITY_REFUSALS = ("exceed the capacity available", "The request cannot be satisfied", "would be overcommitted")


def for_lack_of_capacity(error: str) -> bool:
    """Whether an RM refusal says the plan has too little capacity now (retried), not that the
    reservation is wrong or over its quota."""
    return any(m in error for m in CAPACITY_REFUSALS)
TERMINAL_KEPT_S = 86_400.0  # terminal records stay visible this long


@dataclass(frozen=True)
class Listed:
    """One entry of the RM's reservation list, decoded."""

    reservation_id: str
    name: str
    spec: ReservationSpec
    user: str = ""


@dataclass(frozen=True)
class ReconcileParams:
    prefix: str
    queue: str
    confirm_grace_s: float = 60.0
    delete_ended_after_s: float = 300.0
    correct_drift: bool = True
    retry_first_s: float = 5.0     # a capacity refusal's first retry (the loop's control period)
    retry_max_s: float = 60.0      # the backoff's bound

    def retry_after(self, refusals: int) -> float:
        """Wait before the retry that follows the `refusals`-th capacity refusal (1, 2, ...)."""
        return min(self.retry_max_s, self.retry_first_s * 2.0 ** max(0, min(refusals - 1, 30)))


@dataclass
class _Tick:
    now: float
    params: ReconcileParams
    records: dict[str, ManagedReservation]
    actions: list[ReservationAction] = field(default_factory=list)
    nudges: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    handed_over: frozenset[str] = frozenset()

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def act(self, action: ReservationAction) -> None:
        self.actions.append(action)


@dataclass(frozen=True)
class Reconciled:
    records: dict[str, ManagedReservation]
    actions: list[ReservationAction]
    nudges: list[str]                 # reasons for a nudge found here (an adopted open window)
    counts: Mapping[str, int]         # adopted, drifted, lost, orphans ...


def _move(r: ManagedReservation, state: ReservationState, now: float, reason: str) -> ManagedReservation:
    """Move along the table; a window passed between two ticks goes through ACTIVE to ENDED."""
    if state is r.state:
        return r
    if not r.lifecycle.can(state) and state is S.DELETED and r.lifecycle.can(S.ENDED):
        r = r.to(S.ENDED, now, reason)
    return r.to(state, now, reason)


def reconcile(now: float, records: Mapping[str, ManagedReservation], listed: Sequence[Listed],
              desired: Mapping[str, Desired], params: ReconcileParams, stimulus_id: str = "",
              handed_over: frozenset[str] = frozenset()) -> Reconciled:
    """One reconciliation step (module docstring)."""
    t = _Tick(now, params, {k: r for k, r in records.items()
                            if not (r.terminal and now - r.lifecycle.since > TERMINAL_KEPT_S)},
              handed_over=handed_over)
    by_id = {entry.reservation_id: entry for entry in listed}
    known = {r.reservation_id for r in t.records.values() if r.reservation_id}
    held = list(t.records.items())  # adopted ones were decided on in `_adopt`
    for entry in listed:
        if entry.reservation_id not in known and parse_name(params.prefix, entry.name) is not None:
            _adopt(t, entry, desired, stimulus_id)
    for key, r in held:
        if not r.terminal:
            t.records[key] = _one(t, r, by_id.get(r.reservation_id or ""), desired.get(key), stimulus_id)
    for key, d in desired.items():
        r = t.records.get(key)
        if r is not None and (not r.terminal or r.state is S.REJECTED):
            continue  # held, or the RM refused this very window: not asked again
        if not d.submittable:
            continue
        if r is not None:  # a lost / deleted / withdrawn one is kept beside the new one, for its history
            t.records[f"{key}~{r.reservation_id or int(r.lifecycle.since)}"] = r
        t.records[key] = new_record(key, d.job, d.period_start_ms, d.spec, S.PLANNED, now,
                                    f"planned: window {d.spec.arrival_ms}..{d.spec.deadline_ms} ms")
        t.act(SubmitReservation(key=key, as_of=now, queue=params.queue, spec=d.spec, stimulus_id=stimulus_id,
                                reason=f"renew: the window of {d.job} opens at {when(d.spec.arrival_ms / 1000, now)}"))
        t.count("submits")
    return Reconciled(t.records, t.actions, t.nudges, t.counts)


def _adopt(t: _Tick, entry: Listed, desired: Mapping[str, Desired], stimulus_id: str) -> None:
    job, start = parse_name(t.params.prefix, entry.name)  # type: ignore[misc]
    key = record_key(job, start)
    now_ms = int(t.now * 1000)
    state = by_time(entry.spec, now_ms)
    held = t.records.get(key)
    wanted = key in desired or state is S.ACTIVE
    if wanted and (held is None or held.terminal):
        r = new_record(key, job, start if start is not None else entry.spec.arrival_ms, entry.spec, state, t.now,
                       "adopted from the RM's list (ours by name, unknown to this run)", entry.reservation_id)
        t.records[key] = r  # a plan that differs is applied by the next tick's re-plan update
        t.count("adopted")
        if state is S.ACTIVE:
            t.nudges.append(f"adopted open window {entry.reservation_id}: its queue's capacity may be stale")
        return
    why = "a duplicate of a held one" if wanted else "no longer planned"
    orphan = new_record(f"orphan:{entry.reservation_id}", job, start or entry.spec.arrival_ms, entry.spec,
                        state, t.now, f"found in the RM's list: ours by name, {why}", entry.reservation_id)
    t.records[orphan.key] = orphan.to(S.DELETING, t.now, f"cleaning up: {why}")
    t.act(DeleteReservation(key=orphan.key, as_of=t.now, reservation_id=entry.reservation_id, stimulus_id=stimulus_id,
                            reason=f"ours ({entry.name}) but {why}"))
    t.count("orphans")


def _one(t: _Tick, r: ManagedReservation, entry: Listed | None, want: Desired | None,
         stimulus_id: str) -> ManagedReservation:
    now, p = t.now, t.params
    now_ms = int(now * 1000)
    if r.state is S.PLANNED:
        if want is None:
            return r.to(S.WITHDRAWN, now, "no longer planned before it was submitted")
        if not want.submittable:
            if r.refusals:
                return r.to(S.REJECTED, now, f"refused {r.refusals} time(s) for lack of capacity and no time left for "
                                             f"another try ({want.why_not}); last: {r.last_error}")
            return r.to(S.WITHDRAWN, now, f"not submitted in time: {want.why_not}")
        if r.retry_at is not None and now < r.retry_at:
            return r  # a capacity refusal's backoff
        reason = (f"retry {r.refusals}: the RM refused it for lack of capacity" if r.refusals else "renew (again)") + \
            f": the window of {r.job} opens at {when(want.spec.arrival_ms / 1000, now)}"
        t.act(SubmitReservation(key=r.key, as_of=now, queue=p.queue, spec=want.spec, stimulus_id=stimulus_id,
                                reason=reason))
        if r.refusals:
            t.count("retries")
        return replace(r, spec=want.spec, base=want.spec)
    if entry is None:
        return _absent(t, r)
    if r.state is S.DELETING:
        t.act(DeleteReservation(key=r.key, as_of=now, reservation_id=entry.reservation_id, stimulus_id=stimulus_id,
                                reason=f"still listed: delete {r.key} again"))
        return r
    handed = entry.reservation_id in t.handed_over
    if handed and not entry.spec.equivalent(r.spec):
        r = replace(r, spec=entry.spec).note(now, f"resized by its owner: {_shape(entry.spec)} (the RM's list)")
    timed = by_time(r.spec, now_ms)
    if r.state is S.SUBMITTED:
        r = _move(r, timed, now, "listed by the RM")
    drift = not entry.spec.equivalent(r.spec)
    if drift:
        if r.state is not S.DRIFTED:
            t.count("drifted")
            r = _move(r, S.DRIFTED, now, f"the RM lists another definition ({_shape(entry.spec)}) than ours "
                                          f"({_shape(r.spec)})")
        if p.correct_drift and timed is not S.ENDED and r.refused != r.spec:
            t.act(UpdateReservation(key=r.key, as_of=now, reservation_id=entry.reservation_id, spec=r.spec,
                                    stimulus_id=stimulus_id, reason=f"drift: back to our definition {_shape(r.spec)}"))
        return r
    r = _move(r, timed, now, "the definition matches again" if r.state is S.DRIFTED else "its window")
    if r.state is S.SCHEDULED and want is None:
        t.act(DeleteReservation(key=r.key, as_of=now, reservation_id=entry.reservation_id, stimulus_id=stimulus_id,
                                reason=f"{r.job}'s window is no longer planned"))
        return r.to(S.DELETING, now, "no longer planned")
    if r.state is S.SCHEDULED and want is not None and not want.spec.equivalent(r.base) and r.refused != want.spec \
            and not handed:
        t.act(UpdateReservation(key=r.key, as_of=now, reservation_id=entry.reservation_id, spec=want.spec, rebase=True,
                                stimulus_id=stimulus_id, reason=f"re-planned: {_shape(r.base)} -> {_shape(want.spec)}"))
    if r.state is S.ENDED and r.spec.recurrence_ms == 0 and now_ms - r.spec.deadline_ms >= p.delete_ended_after_s * 1000:
        t.act(DeleteReservation(key=r.key, as_of=now, reservation_id=entry.reservation_id, stimulus_id=stimulus_id,
                                reason=f"window ended {(now_ms - r.spec.deadline_ms) / 1000:.0f}s ago"))
        return r.to(S.DELETING, now, "ended: cleaning up")
    return r


def _absent(t: _Tick, r: ManagedReservation) -> ManagedReservation:
    now = t.now
    if r.state is S.SUBMITTED:
        if r.submitted_at is not None and now - r.submitted_at > t.params.confirm_grace_s:
            t.count("lost")
            return r.to(S.LOST, now, f"submitted {now - r.submitted_at:.0f}s ago but the RM does not list it")
        return r
    if r.state is S.DELETING:
        return r.to(S.DELETED, now, "no longer listed")
    over = r.spec.recurrence_ms == 0 and now * 1000 >= r.spec.deadline_ms
    if over:
        return _move(r, S.DELETED, now, "the RM no longer lists it after its window (archived)")
    t.count("lost")
    return r.to(S.LOST, now, "the RM no longer lists it before its window ended (deleted outside Harvester?)")


def _shape(spec: ReservationSpec) -> str:
    stages = "+".join(f"{s.containers}x{s.duration_ms // 1000}s" for s in spec.stages)
    return f"{stages} from {spec.arrival_ms}"


def fold(records: Mapping[str, ManagedReservation], results: Sequence[ReservationResult],
         now: float, params: ReconcileParams | None = None) -> tuple[dict[str, ManagedReservation], list[str]]:
    """Records after the actuator's results, and reasons for a nudge (updates of open windows);
    `params` gives the capacity refusals' backoff (default: ReconcileParams's)."""
    out = dict(records)
    nudges: list[str] = []
    for res in results:
        a = res.action
        r = out.get(a.key)
        if r is None:
            continue
        if res.outcome is Outcome.DROPPED:
            out[a.key] = r.note(now, f"dropped, not sent: {res.error}")
            continue
        if isinstance(a, SubmitReservation):
            out[a.key] = _submitted(r, res, now, params or ReconcileParams("", ""))
        elif isinstance(a, UpdateReservation):
            out[a.key], nudge = _updated(r, res, a, now)
            nudges += nudge
        elif isinstance(a, MoveApp):
            out[a.key] = r.note(now, f"static fallback: {a.app_id} to {a.queue}: {res.outcome.value}"
                                + (f": {res.error}" if res.error else ""), error=res.error)
        elif isinstance(a, DeleteReservation):
            gone = res.outcome is Outcome.SENT or (res.outcome is Outcome.REFUSED
                                                   and any(m in res.error for m in GONE_MESSAGES))
            out[a.key] = r.to(S.DELETED, now, f"deleted: {a.reason}") if gone and r.state is S.DELETING \
                else r.note(now, f"delete {res.outcome.value}: {res.error}", error=res.error)
    return out, nudges


def _submitted(r: ManagedReservation, res: ReservationResult, now: float, p: ReconcileParams) -> ManagedReservation:
    if res.outcome is Outcome.SENT:
        return replace(r.to(S.SUBMITTED, now, f"submitted as {res.reservation_id}"),
                       reservation_id=res.reservation_id, submitted_at=now, retry_at=None)
    if res.outcome is Outcome.REFUSED and for_lack_of_capacity(res.error):
        n = r.refusals + 1
        wait = p.retry_after(n)
        return replace(r.note(now, f"refused by the RM for lack of capacity ({res.remote_exception or 'error'}: "
                                   f"{res.error}); retry {n} in {wait:g} s (backoff from {p.retry_first_s:g} s, doubling "
                                   f"up to {p.retry_max_s:g} s)", error=res.error),
                       refusals=n, retry_at=now + wait)
    if res.outcome is Outcome.REFUSED:
        return r.to(S.REJECTED, now, f"refused by the RM: {res.remote_exception or 'error'}: {res.error}")
    if res.reservation_id:  # the id was allocated, the submit's fate is unknown: the list will tell
        return replace(r.to(S.SUBMITTED, now, f"submit of {res.reservation_id} may have failed: {res.error}"),
                       reservation_id=res.reservation_id, submitted_at=now, last_error=res.error)
    return r.note(now, f"submit failed before an id was allocated: {res.error}", error=res.error)


def _updated(r: ManagedReservation, res: ReservationResult, a: UpdateReservation,
             now: float) -> tuple[ManagedReservation, list[str]]:
    if res.outcome is not Outcome.SENT:
        refused = a.spec if res.outcome is Outcome.REFUSED else r.refused
        return replace(r, refused=refused).note(now, f"update {res.outcome.value}: {res.error}", error=res.error), []
    r = replace(r, spec=a.spec, refused=None, base=a.spec if a.rebase else r.base,
                grant_until=a.grant_until if a.grant_until is not None else (None if a.rebase else r.grant_until),
                last_error="").note(now, f"updated: {a.reason}")
    if r.state is S.DRIFTED:
        r = _move(r, by_time(a.spec, int(now * 1000)), now, "updated back to our definition")
    nudge = [f"update of {r.reservation_id}"] if r.state in HELD and r.state is not S.SUBMITTED else []
    return r, nudge


def live(records: Mapping[str, ManagedReservation]) -> list[ManagedReservation]:
    return [r for r in records.values() if r.state not in TERMINAL]

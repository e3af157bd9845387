"""Tick of Morpheus's reservation loop (paper 002 §6-§8; scenarios/recurring-reservation*):
LowCost's plan, the RM's reservations, DRA and nudges, every `morpheus.reservations.control_period_s`.

One tick, in order:
1. Plan (§6, incremental): each job's terms (models/slo_contract.effective_terms: accepted,
   overridden, or the proposal) become a LowCost request (decisions/reservation_schedule);
   new jobs and jobs whose terms changed are placed by `lowcost` in the plan (name order), jobs
   whose terms are gone are removed; every other placement stays where it is. The plan's
   capacity is the plan queue's (× `plan.capacity_fraction`), read when the model changes.
2. Reconcile with the RM's reservation list (decisions/reservation_reconcile): adoption,
   confirmation, the window's states, drift, loss, clean-up, and the renewal of the windows
   that open within `renew_lead_s` (one-off mode) or the job's recurring reservation.
3. DRA (§7, one-off mode): for open windows, the running apps' demand against the reservation
   (decisions/reprovisioning: only apps in the plan queue submitted inside the window count; the
   cap is raised to the job's static share where `fallback.static_containers` states it);
   grants are reservation updates. Never worse than static (decisions/static_fallback.py): an app
   still running when its one-off reservation has ended (3.3.6 moved it to the plan's default
   queue) is moved to its job's own queue (`fallback.home_queues`, else its last run's queue
   outside the plan), where its static share is; apps of jobs without a reservation are never
   touched. Each job's service (reserved, or static fallback and why) is published.
4. With `actuate`, the actions go to the reservation actuator once; their results are folded
   into the records (a DRA grant's extra containers stay in the plan only if it was sent).
5. Nudges: every activation, stage boundary and window end of a reservation the RM holds that
   passed since the last tick (plus `settle_s`), each update sent and each adopted open window
   is asked of the guard (loop/nudge.NudgeChannel; decisions/nudge.py says why).
6. The plan, the records with their status histories, grants, nudges and the recent actions
   with their fate are published on the board (board/morpheus.py).
One owner per reservation: an open reservation Jockey drives (loop/jockey.py) is HANDED OVER
(`hand_over` / `hand_back`, the `ReservationCoordinator` port): reconciliation follows its size
from the RM's list and decides no drift correction, re-plan or DRA grant for it; its resizes
pass LowCost's admission first (`admit`: the job's placement with the new size must fit the
plan beside every other placement) and are kept in the plan once sent (`commit`), until it is
handed back (then the job's own placement is restored).
The ports are small so the simulator can tick this very object: a `ReservationObserver`
(list, plan capacity, demands) and a `ReservationActuator` (apply → results).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from typing import Mapping, Protocol, Sequence

from harvester.board.morpheus import ActionEntry, GrantEntry, MorpheusBoard, MorpheusModel, PlannedEntry, ReservationsView
from harvester.config_morpheus import MorpheusSettings
from harvester.decisions.nudge import NudgeOutcome
from harvester.decisions.deadline_reservation import max_per_step
from harvester.decisions.reprovisioning import DraContext, DraParams, JobDemand, decide_reprovisioning
from harvester.decisions.reservation_actions import (
    DeleteReservation, MoveApp, Outcome, ReservationAction, ReservationResult, ReservationSpec, SubmitReservation,
    UpdateReservation,
)
from harvester.decisions.reservation_lifecycle import ManagedReservation, ReservationState
from harvester.decisions.reservation_packing import lowcost
from harvester.decisions.reservation_plan import Placement, Plan, PlanError, empty_plan
from harvester.decisions.reservation_reconcile import Listed, ReconcileParams, fold, reconcile
from harvester.decisions.reservation_schedule import PlannedJob, desired_windows, due_nudges, plannable_terms, request_for
from harvester.decisions.static_fallback import JobService, fallback_moves, job_service
from harvester.domain import Resources
from harvester.loop.nudge import NudgeChannel
from harvester.loop.runner import TickResult
from harvester.models.slo_contract import SloContract, Terms, effective_terms, fit_warning
from harvester.observability.metrics import Metrics

log = logging.getLogger(__name__)
ENDED = (ReservationState.ENDED, ReservationState.DELETING, ReservationState.DELETED)

ACTIONS_KEPT = 200
GRANTS_KEPT = 100


class ReservationObserver(Protocol):
    """What the loop reads (live: telemetry/rm_reservations.RMReservationView). Each method
    raises TelemetryError when the cluster cannot be read."""

    def list(self, queue: str) -> list[Listed]: ...

    def plan_capacity(self, queue: str) -> Resources: ...

    def demands(self) -> Mapping[str, JobDemand]: ...


class ReservationActuator(Protocol):
    """What the loop writes (live: actuators/reservations.RMReservationActuator): every action
    gets a `ReservationResult`; nothing raises."""

    def apply(self, actions: Sequence[ReservationAction], request_id: str) -> list[ReservationResult]: ...


def _kind(a: ReservationAction) -> str:
    return {SubmitReservation: "submit", UpdateReservation: "update", DeleteReservation: "delete",
            MoveApp: "move"}.get(type(a), "other")


class MorpheusReservations:
    """`tick(now)`: one reservation-loop period (module docstring)."""

    def __init__(self, settings: MorpheusSettings, board: MorpheusBoard, observer: ReservationObserver,
                 actuator: ReservationActuator | None, metrics: Metrics, nudges: NudgeChannel | None = None) -> None:
        self._s = settings
        self._board = board
        self._observer = observer
        self._actuator = actuator if settings.actuate else None
        self._metrics = metrics
        self._nudges = nudges
        self._lock = threading.Lock()
        self._plan: Plan | None = None
        self._model_version: int | None = None
        self._planned: dict[str, PlannedEntry] = {}
        self._not_planned: dict[str, str] = {}
        self._unplaceable: dict[str, str] = {}     # job → fit_warning of its terms (logged when it appears)
        self._grants: dict[str, float] = {}         # grant placement id → until
        self._grant_log: deque[GrantEntry] = deque(maxlen=GRANTS_KEPT)
        self._records: dict[str, ManagedReservation] = {}
        self._actions: deque[ActionEntry] = deque(maxlen=ACTIONS_KEPT)
        self._nudge_log: deque[NudgeOutcome] = deque(maxlen=50)
        self._checked: float | None = None
        self._dra_skipped: dict[str, str] = {}
        self._handed: dict[str, str] = {}          # reservation id → its owner (loop/jockey.py)
        self._services: dict[str, JobService] = {}  # job → reserved / static fallback (decisions/static_fallback.py)
        self._stays: dict[str, str] = {}            # app → why it stays in the plan's default queue
        self._moved: dict[str, str] = {}            # app → the fate of its move home
        self._resized: set[str] = set()             # jobs whose placement an owner's resize replaced
        self._seq = 0
        self._container = Resources(settings.plan.container_memory_mb, settings.plan.container_vcores)
        self._params = ReconcileParams(settings.reservations.name_prefix, settings.queue,
                                       settings.reservations.confirm_grace_s, settings.reservations.delete_ended_after_s,
                                       settings.reservations.correct_drift,
                                       retry_first_s=settings.reservations.control_period_s,
                                       retry_max_s=settings.reservations.refused_retry_max_s)

    def on_nudge(self, outcome: NudgeOutcome) -> None:
        """NudgeChannel callback (from the guard's thread): kept for the next publication."""
        self._nudge_log.append(outcome)
        self._metrics.record_nudge(("covered" if outcome.node_id is None else "sent") if outcome.done else "deferred")

    def tick(self, now: float) -> TickResult:
        with self._lock:
            model = self._board.model()
            if model is None:
                self._publish(now, ("no SLO / skyline model yet (the refit loop publishes it)",), None)
                return TickResult({"planned": 0, "why": "no model yet"})
            self._seq += 1
            stimulus = f"morpheus-{now:.0f}-{self._seq}"
            self._replan(now, model, self._board.contracts())
            listed = self._observer.list(self._s.queue)
            r = self._s.reservations
            desired, problems = desired_windows(now, [PlannedJob(e.job, e.terms, e.placement) for e in self._planned.values()],
                                                step_s=self._s.step_s, lead_s=r.renew_lead_s, min_lead_s=r.min_lead_s,
                                                recurring=r.mode == "recurring", prefix=r.name_prefix)
            rec = reconcile(now, self._records, listed, desired, self._params, stimulus,
                            handed_over=frozenset(self._handed))
            actions = list(rec.actions)
            demands = self._demands(now, rec.records)
            grants = self._dra(now, rec.records, stimulus, demands)
            actions += [g.action for g in grants]
            actions += self._moves(now, rec.records, demands, model, stimulus)
            results = self._apply(actions, stimulus, now)
            self._records, updated = fold(rec.records, results, now, self._params)
            self._admit_grants(now, grants, results)
            self._note_moves(results)
            self._services = self._serve(now)
            self._nudge(now, rec.nudges + updated)
            self._publish(now, tuple(problems), now)
            states = Counter(rec.state.value for rec in self._records.values())
            return TickResult({"planned": len(self._planned), "not_planned": len(self._not_planned),
                               "listed": len(listed), "actions": len(actions), "grants": len(grants),
                               **{f"state_{k.lower()}": v for k, v in sorted(states.items())}, **rec.counts})

    # --- 1. the plan ----------------------------------------------------------------------

    def _replan(self, now: float, model: MorpheusModel, contracts: Mapping[str, SloContract]) -> None:
        p = self._s.plan
        lcm_steps = int(round(self._s.lcm_s / self._s.step_s))
        if self._plan is None or model.version != self._model_version:
            cap = self._observer.plan_capacity(self._s.queue)
            cap = Resources(int(cap.memory_mb * p.capacity_fraction), int(cap.vcores * p.capacity_fraction))
            if self._plan is None or (int(self._plan.capacity[0, 0]), int(self._plan.capacity[1, 0])) != (cap.memory_mb, cap.vcores):
                self._plan = self._rebuilt(empty_plan(cap, lcm_steps, self._s.step_s))
            self._model_version = model.version
        assert self._plan is not None
        self._expire_grants(now)
        wanted: dict[str, tuple[Terms | None, str]] = {}
        for jm in model.jobs:
            wanted[jm.job] = effective_terms(jm.proposal, contracts.get(jm.job), self._s.slo.require_sign_off)
        for job, c in contracts.items():
            if job not in wanted:
                wanted[job] = effective_terms(None, c, self._s.slo.require_sign_off)
        # a period not dividing the LCM: the instance whose deadline is still ahead, as a one-off (§6)
        wanted = {job: (t if t is None else plannable_terms(t, lcm_steps, now - t.deadline_s), why)
                  for job, (t, why) in wanted.items()}
        for job in list(self._planned):
            terms = wanted.get(job, (None, "no longer in the model"))[0]
            if terms != self._planned[job].terms:
                self._plan = self._plan.remove(job)
                del self._planned[job]
        self._not_planned = {}
        self._warn_unplaceable(wanted)
        for job in sorted(wanted):
            terms, why = wanted[job]
            if job in self._planned:
                continue
            if terms is None:
                self._not_planned[job] = why
                continue
            try:
                req = request_for(job, terms, self._container, self._s.step_s, p.gang, lcm_steps)
                decision = lowcost(self._plan, req, self._s.packing_params())
            except PlanError as exc:
                self._not_planned[job] = str(exc)
                continue
            if not decision.accepted or decision.placement is None:
                self._not_planned[job] = decision.reason
                continue
            self._plan = self._plan.add(decision.placement)
            self._planned[job] = PlannedEntry(job, terms, decision.placement, why)
        statuses = Counter("actionable" if j.proposal.actionable else "not_actionable" for j in model.jobs)
        self._metrics.record_morpheus_jobs({"actionable": statuses["actionable"], "not_actionable": statuses["not_actionable"],
                                            "planned": len(self._planned), "not_planned": len(self._not_planned),
                                            "skyline_longer_than_window": len(self._unplaceable)})

    def _warn_unplaceable(self, wanted: Mapping[str, tuple[Terms | None, str]]) -> None:
        """Terms LowCost must reject (a skyline longer than its window): logged once when they
        appear, counted in harvester_morpheus_jobs, and LowCost's rejection stays the plan reason."""
        now = {job: w for job, (terms, _) in wanted.items() if terms is not None and (w := fit_warning(terms))}
        for job, w in now.items():
            if self._unplaceable.get(job) != w:
                log.warning("morpheus: %s cannot be reserved: %s", job, w)
        self._unplaceable = now

    def _rebuilt(self, plan: Plan) -> Plan:
        """The admitted placements on a plan of another capacity; those that no longer fit are
        dropped (and placed again as new jobs, with LowCost's reason)."""
        for job, e in list(self._planned.items()):
            try:
                plan = plan.add(e.placement)
            except PlanError:
                del self._planned[job]
        if self._plan is not None:
            for gid in list(self._grants):
                placement = self._plan.placements.get(gid)
                try:
                    plan = plan.add(placement) if placement is not None else plan
                except PlanError:
                    self._grants.pop(gid)
        return plan

    def _expire_grants(self, now: float) -> None:
        assert self._plan is not None
        for gid, until in list(self._grants.items()):
            if until <= now:
                if gid in self._plan.placements:
                    self._plan = self._plan.remove(gid)
                del self._grants[gid]

    # --- one owner per reservation (the ReservationCoordinator port of loop/jockey.py) -------

    def hand_over(self, reservation_id: str, owner: str) -> None:
        with self._lock:
            self._handed[reservation_id] = owner

    def hand_back(self, reservation_id: str) -> None:
        with self._lock:
            self._handed.pop(reservation_id, None)
            job = self._job_of(reservation_id)
            if job is None or job not in self._resized or self._plan is None:
                return
            self._resized.discard(job)
            entry = self._planned.get(job)
            try:
                plan = self._plan.remove(job) if job in self._plan.placements else self._plan
                self._plan = plan.add(entry.placement) if entry is not None else plan
            except PlanError:
                pass  # the plan changed meanwhile: the job is placed again when its terms change

    def admit(self, reservation_id: str, spec: ReservationSpec) -> str | None:
        """None when LowCost's plan admits `spec` as the size of this reservation (or the plan
        does not hold its job: then the RM's own admission applies), else why not."""
        with self._lock:
            try:
                self._resize(reservation_id, spec)
            except PlanError as exc:
                return f"LowCost admission: {exc}"
            return None

    def commit(self, reservation_id: str, spec: ReservationSpec) -> None:
        with self._lock:
            try:
                plan = self._resize(reservation_id, spec)
            except PlanError:
                return  # the RM holds it anyway; the plan catches up when it is handed back
            job = self._job_of(reservation_id)
            if plan is not None and job is not None:
                self._plan = plan
                self._resized.add(job)

    def _job_of(self, reservation_id: str) -> str | None:
        return next((r.job for r in self._records.values() if r.reservation_id == reservation_id), None)

    def _resize(self, reservation_id: str, spec: ReservationSpec) -> Plan | None:
        job = self._job_of(reservation_id)
        if job is None or self._plan is None or job not in self._plan.placements:
            return None
        cur = self._plan.placements[job]
        step_ms = int(round(self._s.step_s * 1000))
        alloc = max_per_step(spec, step_ms, max(len(cur.alloc), -(-spec.length_ms // step_ms)))
        return self._plan.remove(job).add(Placement(job, cur.container, cur.period_steps, cur.start, alloc,
                                                    "resized by its owner (Jockey)"))

    # --- 3. DRA ----------------------------------------------------------------------------

    def _demands(self, now: float, records: Mapping[str, ManagedReservation]) -> Mapping[str, JobDemand]:
        """The running apps, read only when a one-off window is open or ended with apps to move."""
        if self._s.reservations.mode != "one_off":
            return {}
        move = self._s.fallback.move_home and self._actuator is not None
        if any(r.state is ReservationState.ACTIVE or (move and r.state in ENDED and r.reservation_id)
               for r in records.values()):
            return self._observer.demands()
        return {}

    def _dra(self, now: float, records: Mapping[str, ManagedReservation], stimulus: str,
             demands: Mapping[str, JobDemand]) -> list:  # type: ignore[type-arg]
        d = self._s.dra
        self._dra_skipped = {}
        if not d.enabled or self._s.reservations.mode != "one_off" or self._plan is None:
            return []
        active = [r for r in records.values() if r.state is ReservationState.ACTIVE and r.reservation_id
                  and r.reservation_id not in self._handed]
        if not active:
            return []
        decision = decide_reprovisioning(DraContext(
            now, now, active, demands, self._plan, self._s.slo.grid_origin_s, self._container,
            DraParams(d.rho, d.recent_window_s, d.grant_s, d.max_extension_s), stimulus,
            static=dict(self._s.fallback.static_containers), plan_queue=self._s.queue))
        self._dra_skipped = dict(decision.skipped)
        return list(decision.grants)

    # --- never worse than static (decisions/static_fallback.py) ---------------------------------

    def _homes(self, model: MorpheusModel) -> dict[str, str]:
        homes = {j.job: j.home_queue for j in model.jobs if j.home_queue}
        return {**homes, **self._s.fallback.home_queues}

    def _moves(self, now: float, records: Mapping[str, ManagedReservation], demands: Mapping[str, JobDemand],
               model: MorpheusModel, stimulus: str) -> list[ReservationAction]:
        f = self._s.fallback
        if not f.move_home or not demands:
            self._stays = {}
            return []
        moves, self._stays = fallback_moves(now, demands, list(records.values()), self._homes(model), self._s.queue,
                                            f.settle_s)
        by_job = {r.job: r for r in records.values()}
        out: list[ReservationAction] = []
        for m in moves:
            if m.app_id in self._moved:  # one try per app: a refused move is not repeated every tick
                self._stays[m.app_id] = f"a move to {m.queue} was {self._moved[m.app_id]}"
                continue
            key = next((r.key for r in records.values() if r.job == m.job and r.state in ENDED), by_job[m.job].key)
            out.append(MoveApp(key=key, as_of=now, app_id=m.app_id, queue=m.queue, reason=m.why, stimulus_id=stimulus))
        return out

    def _note_moves(self, results: list[ReservationResult]) -> None:
        for res in results:
            if isinstance(res.action, MoveApp):
                self._moved[res.action.app_id] = res.outcome.value + (f" ({res.error})" if res.error else "")

    def _serve(self, now: float) -> dict[str, JobService]:
        """How each job is served now: reserved (placed, this period's reservation not refused) or
        static fallback, with why."""
        out = {}
        for job, e in self._planned.items():
            mine = sorted((r for r in self._records.values() if r.job == job),
                          key=lambda r: (r.spec.arrival_ms, r.lifecycle.since))
            cur = next((r for r in mine if r.spec.deadline_ms > now * 1000), mine[-1] if mine else None)
            out[job] = job_service(job, True, f"{e.placement.reason} (terms: {e.why})", cur)
        for job, why in self._not_planned.items():
            out[job] = job_service(job, False, why)
        return out

    def _admit_grants(self, now: float, grants: list, results: list[ReservationResult]) -> None:  # type: ignore[type-arg]
        sent = {id(res.action) for res in results if res.outcome is Outcome.SENT}
        fates = {id(res.action): res.outcome.value for res in results}
        for g in grants:
            fate = fates.get(id(g.action), "dry_run")
            self._grant_log.append(GrantEntry(now, g.key, g.job, g.level, g.until, g.action.reason, fate,
                                                 g.action.as_of))
            if id(g.action) in sent and self._plan is not None:
                try:
                    self._plan = self._plan.add(g.placement)
                    self._grants[g.placement.job_id] = g.until
                except PlanError:
                    pass  # the plan changed under it (cannot happen in one tick); the RM holds the grant anyway
        self._metrics.record_dra_grants(sum(1 for g in grants if id(g.action) in sent))

    # --- 4. actuation ----------------------------------------------------------------------

    def _apply(self, actions: list[ReservationAction], stimulus: str, now: float) -> list[ReservationResult]:
        if not actions:
            return []
        results = self._actuator.apply(actions, stimulus) if self._actuator is not None else []
        fates = {id(res.action): res for res in results}
        counts: Counter[tuple[str, str]] = Counter()
        for a in actions:
            res = fates.get(id(a))
            fate = "dry_run" if res is None else res.outcome.value
            counts[(_kind(a), fate)] += 1
            detail = "" if res is None or not res.error else f": {res.error}"
            rid = f" ({res.reservation_id})" if res is not None and res.reservation_id else ""
            self._actions.append(ActionEntry(now, _kind(a), a.key + rid, a.reason, fate + detail, a.as_of))
        self._metrics.record_reservation_actions(counts)
        return results

    # --- 5. nudges ----------------------------------------------------------------------------

    def _nudge(self, now: float, extra: list[str]) -> None:
        n = self._s.nudge
        settle = n.settle_s
        lo = now - settle if self._checked is None else self._checked - settle
        reasons = extra + due_nudges(self._records.values(), lo, now - settle)
        self._checked = now
        if n.enabled and self._nudges is not None and reasons and self._actuator is not None:
            self._nudges.request(reasons, now)

    # --- 6. publication -----------------------------------------------------------------------

    def _publish(self, now: float, problems: tuple[str, ...], listed_at: float | None) -> None:
        plan = self._plan
        peak = float(plan.cost().max()) if plan is not None else None
        records = tuple(sorted(self._records.values(), key=lambda r: (r.spec.arrival_ms, r.key)))
        self._board.publish_reservations(ReservationsView(
            at=now, mode=self._s.reservations.mode, actuate=self._actuator is not None,
            planned=tuple(self._planned.values()), not_planned=dict(self._not_planned), records=records,
            grants=tuple(self._grant_log), nudges=tuple(self._nudge_log),
            plan_capacity=None if plan is None else (int(plan.capacity[0, 0]), int(plan.capacity[1, 0])),
            plan_peak_cost=peak, listed_at=listed_at, problems=problems, actions=tuple(self._actions),
            dra_skipped=dict(self._dra_skipped), handed_over=dict(self._handed), services=dict(self._services),
            fallback_stays=dict(self._stays)))
        self._metrics.record_morpheus_reservations(Counter(r.state.value for r in records), peak)

"""Tick of Jockey's control loop (EuroSys'12 §4.3, live): each deadline job's running app is kept
on its deadline by resizing its YARN reservation, every `jockey.control_period_s`.

One tick, per configured job (`jockey.jobs`, by recurring name):
1. Observe (`DeadlineJobSource`): the job's running app, its live worker containers and
   outstanding asks per priority → tasks done / running / pending per stage
   (models/stage_counts.py) → progress p (totalworkWithQ, models/progress.py) and demand.
2. Find its reservation in the RM's list of the plan queue: the window open now named for the
   job (Morpheus's names, or the job's `reservation_name`). Its current stage's container count
   is the allocation a.
3. Decide (decisions/deadline_control.decide): the smallest allocation whose predicted finish at
   the quantile meets the deadline, with slack, early over-allocation, hysteresis, dead zone and
   the demand cap. The deadline / utility is the config's unless one was set through the admin
   API (board/jockey.UTILITIES).
4. Coordinate (`ReservationCoordinator`, Morpheus's reservation loop when Morpheus runs): the
   reservation is handed over to Jockey while its job runs (Morpheus then neither re-plans nor
   corrects it, nor grants DRA on it) and handed back when the run ends; a resize must pass
   LowCost's admission in Morpheus's plan — when the wanted size does not fit, the largest size
   between the current and the wanted one that does is taken, and the reason says so.
5. Actuate (the reservation actuator Morpheus uses, actuators/reservations.py): a changed
   allocation is one `reservation/update` — the same window, the stages before the cut kept,
   `a` containers from the cut (decisions/deadline_reservation.py); with a cool-down of
   `min_update_interval_s` per job. A sent update asks for a nudge once the cut's plan-follower
   step has passed (3.3.6 leaves the queue's effective capacity stale until a node-resource
   update: scenarios/recurring-reservation-update), through the guard (loop/nudge.py).
6. Publish every job's progress, prediction, decision with its reason and the update's fate on
   the board (board/jockey.py) and in metrics.
A job without a running app is idle; without an open reservation it is still decided (and
published) but nothing is resized. The ports are small so the simulator can tick this object.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass, replace
from typing import Callable, Collection, Mapping, Protocol

from harvester.board.jockey import ControlView, DecisionEntry, JobControl, JockeyBoard
from harvester.config_jockey import JockeyJob, JockeySettings
from harvester.decisions.deadline_control import DeadlineContext, DeadlineDecision, decide
from harvester.decisions.deadline_reservation import cut_at, is_open, resized
from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.decisions.reservation_actions import Outcome, ReservationSpec, UpdateReservation
from harvester.decisions.reservation_lifecycle import parse_name
from harvester.decisions.reservation_reconcile import Listed
from harvester.loop.morpheus_reservations import ReservationActuator
from harvester.loop.nudge import NudgeChannel
from harvester.loop.runner import TickResult
from harvester.models.deadline_job import DeadlineJob, load_deadline_job
from harvester.models.progress import demand
from harvester.models.stage_counts import stage_counts
from harvester.observability.metrics import Metrics
from harvester.telemetry.rm_deadline_jobs import RunningApp

DECISIONS_KEPT = 200
NUDGE_SETTLE_S = 1.5  # the plan follower steps every second (morpheus.nudge.settle_s's reasoning)


class DeadlineJobSource(Protocol):
    """Running apps of the named jobs (live: telemetry/rm_deadline_jobs.RMDeadlineJobs); raises
    TelemetryError when the RM cannot be read."""

    def running(self, jobs: Collection[str]) -> Mapping[str, RunningApp]: ...


class ReservationLister(Protocol):
    """The RM's reservation list of a queue (live: telemetry/rm_reservations.RMReservationView)."""

    def list(self, queue: str) -> list[Listed]: ...


class ReservationCoordinator(Protocol):
    """Who plans the plan queue (loop/morpheus_reservations.MorpheusReservations)."""

    def hand_over(self, reservation_id: str, owner: str) -> None: ...

    def hand_back(self, reservation_id: str) -> None: ...

    def admit(self, reservation_id: str, spec: ReservationSpec) -> str | None: ...

    def commit(self, reservation_id: str, spec: ReservationSpec) -> None: ...


JobLoader = Callable[[str, JockeyJob], DeadlineJob]


def default_loader(j: JockeySettings) -> JobLoader:
    """Each job's models from its prior runs (models/deadline_job.py), with the section's C(p, a) settings."""
    def load(name: str, cfg: JockeyJob) -> DeadlineJob:
        return load_deadline_job(name, cfg.runs, predictor=cfg.predictor, table=cfg.table, levels=j.levels,
                                 runs_per_level=j.runs_per_level, seed=j.seed, max_allocation=cfg.max_allocation,
                                 priorities=cfg.stage_priorities)
    return load


@dataclass(frozen=True)
class _Update:
    action: UpdateReservation
    decision: DeadlineDecision
    containers: int
    cut_ms: int


class JockeyControl:
    """`tick(now)`: one control period for every deadline job (module docstring)."""

    def __init__(self, settings: JockeySettings, board: JockeyBoard, source: DeadlineJobSource,
                 reservations: ReservationLister, actuator: ReservationActuator | None, metrics: Metrics,
                 load: JobLoader, *, coordinator: ReservationCoordinator | None = None,
                 nudges: NudgeChannel | None = None, morpheus_prefix: str = "harvester-morpheus") -> None:
        self._s = settings
        self._board = board
        self._source = source
        self._reservations = reservations
        self._actuator = actuator if settings.actuate else None
        self._metrics = metrics
        self._load = load
        self._coordinator = coordinator
        self._nudges = nudges
        self._prefix = morpheus_prefix
        self._lock = threading.Lock()
        self._models: dict[str, DeadlineJob] = {}
        self._model_errors: dict[str, str] = {}
        self._seen: dict[str, tuple[bool, ...]] = {}    # app id → stages started (stage_counts)
        self._owned: dict[str, str] = {}                # job → reservation id handed over to us
        self._last_update: dict[str, float] = {}        # job → time of its last sent update
        self._log: deque[DecisionEntry] = deque(maxlen=DECISIONS_KEPT)
        self._seq = 0

    def model(self, job: str) -> DeadlineJob | None:
        """The job's models, loaded on first use (a failure is kept as the job's note and retried)."""
        if job not in self._models:
            try:
                self._models[job] = self._load(job, self._s.jobs[job])
                self._model_errors.pop(job, None)
            except (OSError, ValueError) as exc:  # FitError is a ValueError
                self._model_errors[job] = f"{type(exc).__name__}: {exc}"
                return None
        return self._models[job]

    def tick(self, now: float) -> TickResult:
        with self._lock:
            self._seq += 1
            stimulus = f"jockey-{now:.0f}-{self._seq}"
            apps = self._source.running(list(self._s.jobs))
            listed = self._reservations.list(self._s.queue) if apps else []
            utilities = self._board.utilities()
            controls: dict[str, JobControl] = {}
            updates: dict[str, _Update] = {}
            for job in sorted(self._s.jobs):
                controls[job], upd = self._job(now, job, apps.get(job), listed, utilities, stimulus)
                if upd is not None:
                    updates[job] = upd
            self._apply(now, controls, updates)
            for job in [j for j in self._owned if controls[j].state != "running"]:
                self._release(job)
            self._seen = {a.app_id: self._seen[a.app_id] for a in apps.values() if a.app_id in self._seen}
            self._publish(now, controls)
            states = Counter(c.state for c in controls.values())
            return TickResult({"jobs": len(controls), "updates": len(updates),
                               **{f"state_{k}": v for k, v in sorted(states.items())}})

    # --- one job ---------------------------------------------------------------------------------

    def _job(self, now: float, job: str, app: RunningApp | None, listed: list[Listed],
             utilities: Mapping[str, DeadlineUtility], stimulus: str) -> tuple[JobControl, _Update | None]:
        cfg = self._s.jobs[job]
        override = utilities.get(job)
        utility = override if override is not None else cfg.utility()
        base = JobControl(job, now, "idle", utility=utility,
                          utility_source="api" if override is not None else "config")
        if app is None:
            return _with(base, note="no running app of this job"), None
        base = _with(base, app_id=app.app_id, started_at=app.started_at, elapsed_s=now - app.started_at)
        m = self.model(job)
        if m is None:
            return _with(base, state="model_error", note=self._model_errors.get(job, "")), None
        counts = stage_counts(m.model, m.priorities, app.running, app.pending, self._seen.get(app.app_id, ()))
        self._seen[app.app_id] = counts.started
        p = m.indicator.of(counts.done)
        names = [s.name for s in m.model.stages]
        res = self._reservation(job, cfg, listed, now)
        running_now = int(counts.running.sum())
        current = res.spec.containers_at(int(now * 1000)) if res is not None else max(running_now, 1)
        # the demand is known once the AM has asked (a stage started); before — ACCEPTED, or registered
        # but not yet through its first allocate call — nothing caps the early over-allocation
        asked = app.state == "RUNNING" and any(counts.started)
        wants = demand(m.model, counts.done, counts.running, counts.pending) if asked else None
        decision = decide(DeadlineContext(now, app.started_at, counts.done, current, m.predictor, utility,
                                          self._s.params(cfg), p, app.app_id, wants))
        ctl = _with(base, state="running" if res is not None else "no_reservation", progress=p,
                    done=dict(zip(names, counts.done.tolist())), running=dict(zip(names, counts.running.tolist())),
                    pending=dict(zip(names, counts.pending.tolist())), allocation=current,
                    decided=decision.allocation, target=decision.target, rule=decision.rule.value,
                    predicted_finish_s=decision.predicted_finish_s,
                    predicted_finish_current_s=decision.predicted_finish_current_s, predictor=m.source,
                    reason=decision.reason, reservation_id=res.reservation_id if res is not None else "",
                    container=res.spec.stages[-1].container if res is not None else None,
                    note="" if res is not None else self._no_reservation(job, cfg), fate="none")
        if res is None:
            return ctl, None
        self._own(job, res.reservation_id, now)
        if decision.allocation == current:
            return ctl, None
        last = self._last_update.get(job)
        if last is not None and now - last < self._s.min_update_interval_s:
            return _with(ctl, fate=f"cooldown: last update {now - last:.0f}s ago < {self._s.min_update_interval_s:g}s"), None
        return self._resize(now, ctl, res, decision, stimulus)

    def _resize(self, now: float, ctl: JobControl, res: Listed, decision: DeadlineDecision,
                stimulus: str) -> tuple[JobControl, _Update | None]:
        now_ms = int(now * 1000)
        cut = cut_at(now_ms, int(self._s.update_lead_s * 1000))
        want, current = decision.allocation, int(ctl.allocation or 0)
        spec = resized(res.spec, cut, want)
        if spec is None:
            return _with(ctl, fate=f"not resized: the window ends before {cut / 1000:.0f}"), None
        admission = ""
        if self._coordinator is not None:
            why = self._coordinator.admit(res.reservation_id, spec)
            if why is not None and want > current:  # the largest size between current and wanted LowCost admits
                lo, hi = current, want - 1
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    candidate = resized(res.spec, cut, mid)
                    if candidate is not None and self._coordinator.admit(res.reservation_id, candidate) is None:
                        lo = mid
                    else:
                        hi = mid - 1
                if lo <= current:
                    return _with(ctl, admitted=current, fate=f"not admitted: {why}"), None
                spec = resized(res.spec, cut, lo)
                assert spec is not None
                admission, want = f"; admitted {lo} of {want} ({why})", lo
            elif why is not None:
                return _with(ctl, admitted=current, fate=f"not admitted: {why}"), None
            ctl = _with(ctl, admitted=want)
        action = UpdateReservation(key=f"jockey:{ctl.job}", as_of=now, reservation_id=res.reservation_id, spec=spec,
                                   stimulus_id=stimulus, reason=f"Jockey: {decision.reason}{admission}; "
                                                                f"{want} containers from {cut / 1000:.0f}")
        return _with(ctl, reason=decision.reason + admission), _Update(action, decision, want, cut)

    def _reservation(self, job: str, cfg: JockeyJob, listed: list[Listed], now: float) -> Listed | None:
        now_ms = int(now * 1000)
        for entry in listed:
            named = (entry.name == cfg.reservation_name) if cfg.reservation_name else \
                (parse_name(self._prefix, entry.name) or ("",))[0] == job
            if named and is_open(entry.spec, now_ms) and entry.spec.containers_at(now_ms) > 0:
                return entry
        return None

    def _no_reservation(self, job: str, cfg: JockeyJob) -> str:
        name = f"named {cfg.reservation_name!r}" if cfg.reservation_name else f"Morpheus named for {job}"
        return f"no open reservation {name} in {self._s.queue}: decided, nothing to resize"

    # --- ownership, actuation, publication ---------------------------------------------------

    def _own(self, job: str, reservation_id: str, now: float) -> None:
        if self._owned.get(job) not in (None, reservation_id):
            self._release(job)
        if self._owned.get(job) is None and self._nudges is not None and self._actuator is not None:
            # as for Morpheus's adopted windows: 3.3.6 leaves an open window's queue at 0/0 until a nudge
            self._nudges.request([f"Jockey took over open window {reservation_id}: its queue's capacity may be stale"],
                                 now)
        self._owned[job] = reservation_id
        if self._coordinator is not None:
            self._coordinator.hand_over(reservation_id, f"jockey:{job}")

    def _release(self, job: str) -> None:
        rid = self._owned.pop(job, None)
        self._last_update.pop(job, None)
        if rid is not None and self._coordinator is not None:
            self._coordinator.hand_back(rid)

    def _apply(self, now: float, controls: dict[str, JobControl],
               updates: Mapping[str, _Update]) -> None:
        actions = [u.action for u in updates.values()]
        results = self._actuator.apply(actions, actions[0].stimulus_id) if self._actuator and actions else []
        fates = {id(r.action): r for r in results}
        outcomes: Counter[str] = Counter()
        for job, u in updates.items():
            action, decision = u.action, u.decision
            res = fates.get(id(action))
            fate = "dry_run" if res is None else res.outcome.value + (f": {res.error}" if res.error else "")
            outcomes["dry_run" if res is None else res.outcome.value] += 1
            if res is not None and res.outcome is Outcome.SENT:
                self._last_update[job] = now
                if self._coordinator is not None:
                    self._coordinator.commit(action.reservation_id, action.spec)
                if self._nudges is not None:  # after the plan follower's step at the cut
                    self._nudges.request([f"Jockey resize of {action.reservation_id} at {u.cut_ms / 1000:.0f}"], now,
                                         not_before=u.cut_ms / 1000.0 + NUDGE_SETTLE_S)
            ctl = controls[job]
            controls[job] = _with(ctl, fate=fate)
            self._log.append(DecisionEntry(now, job, ctl.app_id, action.reservation_id, decision.previous,
                                           u.containers, decision.rule.value, action.reason, fate, action.as_of))
        self._metrics.record_jockey_updates(outcomes)

    def _publish(self, now: float, controls: Mapping[str, JobControl]) -> None:
        jobs = tuple(controls[j] for j in sorted(controls))
        self._board.publish_control(ControlView(now, self._actuator is not None, jobs, tuple(self._log)))
        self._metrics.record_jockey(jobs)


def _with(c: JobControl, **changes: object) -> JobControl:
    return replace(c, **changes)  # type: ignore[arg-type]

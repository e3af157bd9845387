"""Application lifecycles in the emulated RM: submit, AM behaviour, finish, kill.

Recorded behaviour (fixtures/yarn-3.3.6 scenarios and captures):

- Rejected submissions go SUBMITTED -> FINAL_SAVING -> FAILED within milliseconds and have no
  attempt: unknown queue ("submitted by user U to unknown queue: Q"); a reservation whose queue
  does not exist now ("... submitted to a reservation which is not currently active: R"); a
  reservation named with a queue that is not its plan queue's full path ("Application: A
  submitted to a reservation R which does not belong to the specified queue: default").
  A reservation id with a queue that is not a plan queue (`root.default-default`) is ignored
  (CapacityScheduler.getReservationQueueName; captures apps-submit-rest-reservation-*).
- The AM container is started by the RM as soon as it is allocated (launchTime); the AM
  program then takes its own start-up time to register (AppSpec.startup_s: DS ~1 s, MR ~3 s).
- A registered AM talks to the RM every `am_heartbeat_s` (its allocate calls): the first call
  asks for its workers; each call picks up the containers allocated since the last one (the AM
  then starts them on their NMs) and learns which ended. So workers are allocated at node
  heartbeats after the AM's first call (MR: registered 57.193, first map 58.387), and an app
  finishes at the AM's first call after its last worker ended.
- A distributed-shell AM never replaces a lost worker (it only re-asks for exit -100) and
  finishes FINISHED/SUCCEEDED, or FINISHED/FAILED if any worker failed. A MapReduce AM re-runs
  preempted or killed tasks. A plain command AM (REST submission, e.g. `sleep 90`) never
  registers: when the command exits the attempt fails and the app is FAILED with the recorded
  "AM Container ... exited with  exitCode: 0" diagnostics.
- Kill (`PUT /state {"state":"KILLED"}`): 202 echoing "KILLING"; the app is KILLED at once
  with "Application A was killed by user U"; its containers end.

The `Emulator` (state.py) owns this component; it is not imported here so imports stay one-way.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any

from harvester.emulator.capacity import normalize
from harvester.emulator.lifecycle import APP_TERMINAL, AppState, AttemptState
from harvester.emulator.queues import Leaf, QueueError
from harvester.emulator.records import (
    EXIT_ABORTED,
    AmKind,
    App,
    AppSpec,
    Ask,
    Attempt,
    ContainerRecord,
    new_app_lifecycle,
    new_attempt_lifecycle,
)
from harvester.sim.cluster import EndCause

_SLEEP = re.compile(r"(?:^|[;&|]\s*|\s)sleep\s+(\d+(?:\.\d+)?)")
MR_TASK_PRIORITY = 20


def command_duration(command: str) -> float | None:
    """How long a shell AM command holds its container: `sleep N` -> N s; else it exits at once."""
    m = _SLEEP.search(" " + command)
    return float(m.group(1)) if m else 0.0


class AppManager:
    def __init__(self, emu: Any) -> None:
        self.emu = emu
        self.reserved_ids: set[str] = set()

    # --- ids ------------------------------------------------------------------------------

    def new_application_id(self) -> str:
        """POST /apps/new-application: hand out the next id (the RM counts from 1)."""
        self.emu.app_seq += 1
        app_id = f"application_{self.emu.cluster_ts_ms}_{self.emu.app_seq:04d}"
        self.reserved_ids.add(app_id)
        return app_id

    # --- submit ---------------------------------------------------------------------------

    def submit(self, spec: AppSpec, app_id: str | None = None) -> App:
        emu, now = self.emu, self.emu.now
        if app_id is None:
            app_id = self.new_application_id()
        self.reserved_ids.discard(app_id)
        seq = int(app_id.rsplit("_", 1)[1])
        app = App(app_id, seq, spec, now, new_app_lifecycle(app_id, now), spec.queue, None,
                  emu.queues.clamp_priority(spec.priority))
        app.am_resource = normalize(spec.am, emu.config.minimum_allocation)
        emu.apps[app_id] = app
        app.lifecycle.path(AppState.NEW_SAVING, AppState.SUBMITTED, at=now, reason="saved")
        leaf = self._leaf_for(app)
        if leaf is None:
            return app
        app.leaf = leaf
        app.lifecycle.to(AppState.ACCEPTED, now, "scheduler accepted")
        self._new_attempt(app)
        return app

    def _leaf_for(self, app: App) -> str | None:
        """CapacityScheduler.getReservationQueueName, then the queue-name rules (queues.py)."""
        emu, spec = self.emu, app.spec
        plan_cfg = emu.queues.reservable(spec.queue)
        if spec.reservation_id is not None and plan_cfg is not None:
            rid = spec.reservation_id
            if emu.plan.app_leaf(rid) is None:
                self._reject(app, f"Application {app.app_id} submitted to a reservation which is not currently "
                                  f"active: {rid}")
                return None
            if spec.queue != plan_cfg.path or emu.plan.reservations[rid].queue != plan_cfg.name:
                self._reject(app, f"Application: {app.app_id} submitted to a reservation {rid} which does not "
                                  f"belong to the specified queue: {spec.queue}")
                return None
            emu.plan.reservations[rid].apps.append(app.app_id)
            return rid
        try:
            return emu.queues.leaf_for_submit(spec.queue)
        except QueueError as exc:
            self._reject(app, f"Application {app.app_id} submitted by user {spec.user} to unknown queue: {exc}")
            return None

    def _reject(self, app: App, diagnostics: str) -> None:
        now = self.emu.now
        app.lifecycle.path(AppState.FINAL_SAVING, AppState.FAILED, at=now, reason="rejected")
        app.diagnostics = diagnostics
        app.final_status = "FAILED"
        app.finished_at = now + 0.001  # the state store's save (recorded elapsedTime 1-3 ms)

    def _new_attempt(self, app: App) -> None:
        now = self.emu.now
        n = len(app.attempts) + 1
        attempt_id = f"appattempt_{self.emu.cluster_ts_ms}_{app.seq:04d}_{n:06d}"
        att = Attempt(attempt_id, n, now, new_attempt_lifecycle(attempt_id, now))
        att.lifecycle.path(AttemptState.SUBMITTED, AttemptState.SCHEDULED, at=now, reason="scheduled")
        app.attempts.append(att)
        app.asks = [Ask(app.am_resource, 1, 0, -1, is_am=True)]
        app.registered = False
        app.registered_at = None
        self.emu.scheduler.touch()

    # --- AM behaviour ---------------------------------------------------------------------

    def on_allocated(self, app: App, rec: ContainerRecord) -> None:
        """The scheduler allocated `rec` for `app` (AM or worker)."""
        emu = self.emu
        if not rec.is_am:
            app.workers_started += 1
            self._request_beat(app)  # the AM picks it up at its next allocate call
            return
        att = app.attempt
        assert att is not None
        att.am_container_id, att.am_node = rec.container_id, rec.node
        att.lifecycle.to(AttemptState.ALLOCATED, emu.now, "AM allocated")
        rec.acquired = True
        emu.run(rec, emu.now + emu.timing.container_start_s, lambda t, a=app, r=rec: self._am_launched(a, r))
        if app.spec.kind is not AmKind.COMMAND:
            emu.events.at(emu.now + app.spec.startup_s, lambda t, a=app, r=rec: self._am_registered(a, r))

    def _am_launched(self, app: App, rec: ContainerRecord) -> None:
        emu = self.emu
        att = app.attempt
        if att is None or att.am_container_id != rec.container_id:
            return
        att.lifecycle.to(AttemptState.LAUNCHED, emu.now, "AM launched")
        app.launched_at = emu.now
        if not app.registered:
            app.diagnostics = "AM container is launched, waiting for AM container to Register with RM"
        if app.spec.kind is AmKind.COMMAND and app.spec.am_hold_s is not None:
            emu.events.at(emu.now + app.spec.am_hold_s,
                          lambda t, c=rec.container_id: emu.end_container(c, EndCause.COMPLETED, exit_code=0))

    def _am_registered(self, app: App, rec: ContainerRecord) -> None:
        emu = self.emu
        if not rec.live or app.state is not AppState.ACCEPTED:
            return
        att = app.attempt
        assert att is not None
        if att.lifecycle.state is AttemptState.ALLOCATED:  # registered before the NM reported the launch
            att.lifecycle.to(AttemptState.LAUNCHED, emu.now, "AM launched")
        att.lifecycle.to(AttemptState.RUNNING, emu.now, "AM registered")
        app.lifecycle.to(AppState.RUNNING, emu.now, "AM registered")
        app.registered, app.registered_at = True, emu.now
        app.diagnostics = ""
        app.unsent_asks = app.spec.workers
        self._request_beat(app)

    def _request_beat(self, app: App) -> None:
        """Queue the AM's next allocate call (every am_heartbeat_s from its registration)."""
        if app.am_beat_at is not None or app.registered_at is None or app.state in APP_TERMINAL:
            return
        p, reg = app.spec.am_heartbeat_s, app.registered_at
        at = reg + (math.floor((self.emu.now - reg) / p) + 1) * p
        app.am_beat_at = at
        self.emu.events.at(at, lambda t, a=app: self._am_beat(a))

    def _am_beat(self, app: App) -> None:
        """One allocate call of a registered AM (see the module docstring)."""
        emu = self.emu
        app.am_beat_at = None
        if app.state is not AppState.RUNNING:
            return
        for rec in emu.live_containers(app):
            if not rec.acquired:
                rec.acquired = True
                emu.run(rec, emu.now + emu.timing.container_start_s, lambda t, r=rec: self._worker_running(r))
        mr = app.spec.kind is AmKind.MAPREDUCE
        for cid in app.unseen_done:
            rec = emu.containers[cid]
            if mr and rec.am_exit_status != 0:
                app.unsent_asks += 1  # MR re-runs the lost task
                continue
            app.workers_done += 1
            if rec.am_exit_status not in (0, EXIT_ABORTED):
                app.workers_failed += 1
        app.unseen_done = []
        if app.unsent_asks:
            self._ask(app, app.unsent_asks, MR_TASK_PRIORITY if mr else 0, -1 if mr else 0)
            app.unsent_asks = 0
        if app.workers_done >= app.spec.workers and not any(not r.is_am for r in emu.live_containers(app)) \
                and not any(not a.is_am for a in app.asks):
            self._am_finished(app)

    def _ask(self, app: App, count: int, priority: int, request_id: int) -> None:
        worker = normalize(app.spec.worker, self.emu.config.minimum_allocation)
        for ask in app.asks:
            if not ask.is_am and ask.resources == worker and ask.priority == priority:
                ask.count += count
                break
        else:
            app.asks.append(Ask(worker, count, priority, request_id))
        self.emu.scheduler.touch()

    def _worker_running(self, rec: ContainerRecord) -> None:
        app = self.emu.apps[rec.app_id]
        if app.spec.worker_duration_s is not None:
            self.emu.events.at(self.emu.now + app.spec.worker_startup_s + app.spec.worker_duration_s,
                               lambda t, c=rec.container_id: self.emu.end_container(
                                   c, EndCause.COMPLETED, exit_code=app.spec.worker_exit_code))

    def on_container_end(self, rec: ContainerRecord, cause: EndCause) -> None:
        emu = self.emu
        app = emu.apps[rec.app_id]
        emu.scheduler.account(app, rec, -1)
        took = (rec.finished_at or emu.now) - rec.started_at
        app.mem_seconds += rec.resources.memory_mb * took
        app.vcore_seconds += rec.resources.vcores * took
        if cause is EndCause.RM_OVERCOMMIT:
            app.preempted_mb += rec.resources.memory_mb
            app.preempted_vcores += rec.resources.vcores
            app.preempted_mem_seconds += rec.resources.memory_mb * took
            app.preempted_vcore_seconds += rec.resources.vcores * took
            if rec.is_am:
                app.preempted_am += 1
            else:
                app.preempted_non_am += 1
        if cause is EndCause.APP_KILLED or app.state in APP_TERMINAL:
            return
        if app.state is AppState.FINISHING:  # unregistered: the AM's exit completes the app
            if rec.is_am:
                self._finish(app, AppState.FINISHED, app.final_status, EndCause.COMPLETED)
            return
        if rec.is_am:
            self._am_exited(app, rec)
            return
        app.unseen_done.append(rec.container_id)
        self._request_beat(app)

    def _am_finished(self, app: App) -> None:
        """The AM unregisters (the app is FINISHING) and its container exits `am_stop_s` later."""
        if app.state is not AppState.RUNNING:
            return
        spec, now = app.spec, self.emu.now
        if app.workers_failed:
            status = "FAILED"
            app.diagnostics = (f"Application Failure: desired = {spec.workers}, completed = {app.workers_done}, "
                               f"allocated = {app.workers_started}, failed = {app.workers_failed}, diagnostics = ")
        else:
            status = "SUCCEEDED"
            app.diagnostics = ""
        app.asks = []
        app.final_status = status
        app.lifecycle.path(AppState.FINAL_SAVING, AppState.FINISHING, at=now, reason="unregistered")
        self.emu.events.at(now + spec.am_stop_s, lambda t, a=app: self._finish(a, AppState.FINISHED, status,
                                                                              EndCause.COMPLETED))

    def _am_exited(self, app: App, rec: ContainerRecord) -> None:
        """The AM container ended while the app was not done: the attempt fails."""
        att = app.attempt
        code = rec.am_exit_status if rec.am_exit_status is not None else 0
        url = f"http://{self.emu.config.rm_web_address}/cluster/app/{app.app_id}"
        if att is not None and len(app.attempts) < app.spec.max_app_attempts:
            att.lifecycle.path(AttemptState.FINAL_SAVING, AttemptState.FAILED, at=self.emu.now, reason="AM exited")
            att.finished_at = self.emu.now
            for other in self.emu.live_containers(app):
                self.emu.end_container(other.container_id, EndCause.APP_KILLED)
            self._new_attempt(app)
            return
        app.diagnostics = (f"Application {app.app_id} failed {len(app.attempts)} times (global limit =2; local limit "
                           f"is ={app.spec.max_app_attempts}) due to AM Container for "
                           f"{att.attempt_id if att else ''} exited with  exitCode: {code}\nFailing this attempt."
                           f"Diagnostics: For more detailed output, check the application tracking page: {url} Then "
                           "click on links to logs of each attempt.\n. Failing the application.")
        self._finish(app, AppState.FAILED, "FAILED", EndCause.APP_KILLED, attempt_state=AttemptState.FAILED)

    def _finish(self, app: App, state: AppState, final_status: str, cause: EndCause,
                attempt_state: AttemptState | None = None) -> None:
        emu, now = self.emu, self.emu.now
        if app.state in APP_TERMINAL:
            return
        app.asks = []
        if app.state is not AppState.FINISHING:
            app.lifecycle.to(AppState.FINAL_SAVING, now, final_status)
            if state is AppState.FINISHED:
                app.lifecycle.to(AppState.FINISHING, now, "unregistered")
        app.lifecycle.to(state, now, final_status)
        app.final_status = final_status
        app.finished_at = now
        for rec in emu.live_containers(app):
            emu.end_container(rec.container_id, cause)
        att = app.attempt
        if att is not None and att.lifecycle.state not in (AttemptState.FINISHED, AttemptState.FAILED,
                                                            AttemptState.KILLED):
            target = attempt_state or {AppState.FINISHED: AttemptState.FINISHED,
                                       AppState.KILLED: AttemptState.KILLED}.get(state, AttemptState.FAILED)
            att.lifecycle.path(AttemptState.FINAL_SAVING, target, at=now, reason=final_status)
            att.finished_at = now
        emu.scheduler.touch()

    # --- REST writes ----------------------------------------------------------------------

    def kill(self, app: App, user: str) -> str:
        """Kill `app`; returns the state the 202 answer echoes."""
        if app.state in APP_TERMINAL or app.state is AppState.FINISHING:  # a finishing app completes anyway
            return app.state.value
        now = self.emu.now
        for step in (AppState.KILLING, AppState.FINAL_SAVING):
            if app.lifecycle.can(step):
                app.lifecycle.to(step, now, f"killed by {user}")
        app.diagnostics = f"Application {app.app_id} was killed by user {user}"
        app.killed_by = user
        app.asks = []
        app.final_status = "KILLED"
        app.finished_at = now
        for rec in self.emu.live_containers(app):
            self.emu.end_container(rec.container_id, EndCause.APP_KILLED)
        app.lifecycle.to(AppState.KILLED, now, "killed")
        att = app.attempt
        if att is not None and att.lifecycle.can(AttemptState.FINAL_SAVING):
            att.lifecycle.path(AttemptState.FINAL_SAVING, AttemptState.KILLED, at=now, reason="app killed")
            att.finished_at = now
        self.emu.scheduler.touch()
        return AppState.KILLING.value

    def expire_lifetime(self, app: App) -> None:
        """The RM's lifetime monitor kills an app past its LIFETIME timeout."""
        if app.state in APP_TERMINAL:
            return
        self.kill(app, self.emu.config.rm_login_user)
        app.diagnostics = "Application is killed by ResourceManager as it has exceeded the lifetime period."

    def set_lifetime(self, app: App, expiry_ms: int) -> None:
        app.lifetime_expiry_ms = expiry_ms
        self.emu.events.at(expiry_ms / 1000.0, lambda t, a=app: self.expire_lifetime(a))


def activation_diagnostics(emu: Any, leaf: Leaf) -> str:
    """An activated app waiting for its AM (apps-id-in-active-reservation, recurring-reservation)."""
    when = datetime.fromtimestamp(emu.now, tz=timezone.utc).strftime("%a %b %d %H:%M:%S +0000 %Y")
    cluster = emu.cluster_resource()

    def res(r: Any) -> str:
        return f"<memory:{r.memory_mb}, vCores:{r.vcores}>"

    used = emu.scheduler.used[leaf.name]
    used_pct = 100.0 * used.memory_mb / cluster.memory_mb if cluster.memory_mb else 0.0
    return (f"[{when}] Application is Activated, waiting for resources to be assigned for AM.  Details : AM Partition = "
            f"<DEFAULT_PARTITION> ; Partition Resource = {res(cluster)} ; "
            f"Queue's Absolute capacity = {_pct(leaf.absolute_capacity)} % ; Queue's Absolute used capacity = "
            f"{_pct(used_pct)} % ; Queue's Absolute max capacity = {_pct(leaf.absolute_max_capacity)} % ; "
            f"Queue's capacity (absolute resource) = {res(leaf.eff_min)} ; "
            f"Queue's used capacity (absolute resource) = {res(used)} ; "
            f"Queue's max capacity (absolute resource) = {res(leaf.eff_max)} ; ")


def _pct(x: float) -> str:
    """Java's float printing of a percentage (12.5, 0.0, 100.0)."""
    text = repr(round(float(x), 6))
    return text if "." in text or "e" in text else text + ".0"

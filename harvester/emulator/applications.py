"""Application lifecycles in the emulated RM: submit, AM behaviour, finish, kill, move.

Recorded behaviour (fixtures/yarn-3.3.6 scenarios and captures):

- Rejected submissions go SUBMITTED -> FINAL_SAVING -> FAILED within milliseconds and have no
  attempt: unknown queue ("submitted by user U to unknown queue: Q"), or a reservation that
  is not active ("submitted to a reservation which is not currently active: R").
- A distributed-shell AM registers ~2 s after launch (app RUNNING), asks for its workers,
  never replaces a lost one (it only re-asks for exit -100) and finishes when every worker
  ended: FINISHED/SUCCEEDED, or FINISHED/FAILED if any failed. A MapReduce AM re-runs
  preempted or killed tasks. A plain command AM (REST submission, e.g. `sleep 90`) never
  registers: when the command exits the attempt fails and the app is FAILED with the
  recorded "AM Container ... exited with  exitCode: 0" diagnostics.
- Kill (`PUT /state {"state":"KILLED"}`): 202 echoing "KILLING"; the app is KILLED at once
  with "Application A was killed by user U"; its containers end.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from harvester.domain import Resources
from harvester.sim.cluster import EndCause
from harvester.emulator.lifecycle import APP_TERMINAL, AppState, AttemptState
from harvester.emulator.queues import QueueError
from harvester.emulator.records import (
    AmKind,
    App,
    AppSpec,
    Ask,
    Attempt,
    ContainerRecord,
    new_app_lifecycle,
    new_attempt_lifecycle,
)
from harvester.emulator.state import EXIT_ABORTED

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

_SLEEP = re.compile(r"(?:^|[;&|]\s*|\s)sleep\s+(\d+(?:\.\d+)?)")
MR_TASK_PRIORITY = 20


def command_duration(command: str) -> float | None:
    """How long a shell AM command holds its container: `sleep N` -> N s; else it exits at once."""
    m = _SLEEP.search(" " + command)
    return float(m.group(1)) if m else 0.0


class AppManager:
    def __init__(self, emu: Emulator) -> None:
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
        emu.apps[app_id] = app
        app.lifecycle.path(AppState.NEW_SAVING, AppState.SUBMITTED, at=now, reason="saved")
        if spec.reservation_id is not None:
            leaf = emu.plan.app_leaf(spec.reservation_id)
            if leaf is None:
                self._reject(app, f"Application {app_id} submitted to a reservation which is not currently active: "
                                  f"{spec.reservation_id}")
                return app
            emu.plan.reservations[spec.reservation_id].apps.append(app_id)
        else:
            try:
                leaf = emu.queues.leaf_for_submit(spec.queue)
            except QueueError as exc:
                self._reject(app, f"Application {app_id} submitted by user {spec.user} to unknown queue: {exc}")
                return app
        app.leaf = leaf
        app.lifecycle.to(AppState.ACCEPTED, now, "scheduler accepted")
        self._new_attempt(app)
        return app

    def _reject(self, app: App, diagnostics: str) -> None:
        now = self.emu.now
        app.lifecycle.path(AppState.FINAL_SAVING, AppState.FAILED, at=now, reason="rejected")
        app.diagnostics = diagnostics
        app.final_status = "FAILED"
        app.finished_at = now + 0.003  # recorded elapsedTime 3-15 ms

    def _new_attempt(self, app: App) -> None:
        now = self.emu.now
        n = len(app.attempts) + 1
        attempt_id = f"appattempt_{self.emu.cluster_ts_ms}_{app.seq:04d}_{n:06d}"
        att = Attempt(attempt_id, n, now, new_attempt_lifecycle(attempt_id, now))
        att.lifecycle.path(AttemptState.SUBMITTED, AttemptState.SCHEDULED, at=now, reason="scheduled")
        app.attempts.append(att)
        app.asks = [Ask(app.spec.am, 1, 0, -1, is_am=True)]
        app.registered = False

    # --- AM behaviour ---------------------------------------------------------------------

    def on_allocated(self, app: App, rec: ContainerRecord) -> None:
        """The scheduler started `rec` for `app` (AM or worker)."""
        emu, spec = self.emu, app.spec
        if rec.is_am:
            att = app.attempt
            assert att is not None
            att.am_container_id, att.am_node = rec.container_id, rec.node
            att.lifecycle.to(AttemptState.ALLOCATED, emu.now, "AM allocated")
            emu.events.at(emu.now + emu.timing.am_launch_s, lambda t, a=app, r=rec: self._am_launched(a, r))
            return
        app.workers_started += 1
        if spec.worker_duration_s is not None:
            end = emu.now + emu.timing.worker_launch_s + spec.worker_duration_s
            emu.events.at(end, lambda t, c=rec.container_id: self._worker_done(c))

    def _am_launched(self, app: App, rec: ContainerRecord) -> None:
        emu = self.emu
        att = app.attempt
        if not rec.live or att is None or att.am_container_id != rec.container_id:
            return
        att.lifecycle.to(AttemptState.LAUNCHED, emu.now, "AM launched")
        app.launched_at = emu.now
        app.diagnostics = "AM container is launched, waiting for AM container to Register with RM"
        if app.spec.kind is AmKind.COMMAND:
            hold = app.spec.am_hold_s
            if hold is not None:
                emu.events.at(emu.now + hold, lambda t, c=rec.container_id: self._command_exit(c))
            return
        emu.events.at(emu.now + emu.timing.am_register_s, lambda t, a=app, r=rec: self._am_registered(a, r))

    def _command_exit(self, cid: str) -> None:
        self.emu.end_container(cid, EndCause.COMPLETED, exit_code=0)

    def _am_registered(self, app: App, rec: ContainerRecord) -> None:
        emu = self.emu
        if not rec.live or app.state is not AppState.ACCEPTED:
            return
        att = app.attempt
        assert att is not None
        att.lifecycle.to(AttemptState.RUNNING, emu.now, "AM registered")
        app.lifecycle.to(AppState.RUNNING, emu.now, "AM registered")
        app.registered = True
        app.diagnostics = ""
        if app.spec.workers > 0:
            emu.events.at(emu.now + emu.timing.am_first_ask_s, lambda t, a=app: self._ask_workers(a))
        else:
            self._schedule_finish(app)

    def _ask_workers(self, app: App) -> None:
        if app.state is not AppState.RUNNING:
            return
        mr = app.spec.kind is AmKind.MAPREDUCE
        app.asks.append(Ask(app.spec.worker, app.spec.workers, MR_TASK_PRIORITY if mr else 0, -1 if mr else 0))

    def _worker_done(self, cid: str) -> None:
        app = self.emu.apps[self.emu.containers[cid].app_id]
        self.emu.end_container(cid, EndCause.COMPLETED, exit_code=app.spec.worker_exit_code)

    def on_container_end(self, rec: ContainerRecord, cause: EndCause) -> None:
        emu = self.emu
        app = emu.apps[rec.app_id]
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
        if rec.is_am:
            self._am_exited(app, rec)
            return
        if app.spec.kind is AmKind.MAPREDUCE and rec.am_exit_status != 0:
            app.asks.append(Ask(app.spec.worker, 1, MR_TASK_PRIORITY, -1))  # MR re-runs the lost task
            return
        app.workers_done += 1
        if rec.am_exit_status not in (0, EXIT_ABORTED):
            app.workers_failed += 1
        if app.workers_done >= app.spec.workers:
            self._schedule_finish(app)

    def _schedule_finish(self, app: App) -> None:
        self.emu.events.at(self.emu.now + self.emu.timing.am_finish_s, lambda t, a=app: self._am_finished(a))

    def _am_finished(self, app: App) -> None:
        if app.state in APP_TERMINAL:
            return
        spec = app.spec
        if app.workers_failed:
            status = "FAILED"
            app.diagnostics = (f"Application Failure: desired = {spec.workers}, completed = {app.workers_done}, "
                               f"allocated = {app.workers_started}, failed = {app.workers_failed}, diagnostics = ")
        else:
            status = "SUCCEEDED"
            app.diagnostics = ""
        self._finish(app, AppState.FINISHED, status, EndCause.COMPLETED)

    def _am_exited(self, app: App, rec: ContainerRecord) -> None:
        """The AM container ended while the app was not done: the attempt fails."""
        att = app.attempt
        code = rec.am_exit_status if rec.am_exit_status is not None else 0
        url = f"http://{self.emu.config.rm_web_address}/cluster/app/{app.app_id}"
        if att is not None and len(app.attempts) < app.spec.max_app_attempts:
            att.lifecycle.path(AttemptState.FINAL_SAVING, AttemptState.FAILED, at=self.emu.now, reason="AM exited")
            att.finished_at = self.emu.now
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
        app.asks = []
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
        emu.plan.on_app_finished(app)

    # --- REST writes ----------------------------------------------------------------------

    def kill(self, app: App, user: str) -> str:
        """Kill `app`; returns the state the 202 answer echoes."""
        if app.state in APP_TERMINAL:
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
        self.emu.plan.on_app_finished(app)
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


def activation_diagnostics(app: App, emu: Emulator, queue_capacity_pct: float, queue_res: Resources) -> str:
    """The ACCEPTED app's scheduler diagnostics (apps-id-in-active-reservation)."""
    when = datetime.fromtimestamp(emu.now, tz=timezone.utc).strftime("%a %b %d %H:%M:%S +0000 %Y")
    cluster = emu.cluster_resource()
    res = f"<memory:{queue_res.memory_mb}, vCores:{queue_res.vcores}>"
    return (f"[{when}] Application is Activated, waiting for resources to be assigned for AM.  Details : AM Partition = "
            f"<DEFAULT_PARTITION> ; Partition Resource = <memory:{cluster.memory_mb}, vCores:{cluster.vcores}> ; "
            f"Queue's Absolute capacity = {queue_capacity_pct} % ; Queue's Absolute used capacity = 0.0 % ; "
            f"Queue's Absolute max capacity = 100.0 % ; Queue's capacity (absolute resource) = {res} ; "
            f"Queue's used capacity (absolute resource) = <memory:0, vCores:0> ; "
            f"Queue's max capacity (absolute resource) = {res} ; ")

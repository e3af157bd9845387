"""Handlers for /apps: list with filters, one app, attempts, containers, state/queue/priority/timeouts,
new-application and REST submission (captures/apps-*, err-apps-*, scenarios/queue-move-and-priority).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from harvester.domain import Resources
from harvester.emulator import errors
from harvester.emulator.applications import command_duration
from harvester.emulator.bodies import as_int, ensure_object, parse_body
from harvester.emulator.lifecycle import AppState
from harvester.emulator.queues import QueueError
from harvester.emulator.records import AmKind, App, AppSpec
from harvester.emulator.render_apps import (
    DESELECTABLE,
    app_info,
    attempt_one,
    attempts,
    container_info,
    containers,
    timeout,
)
from harvester.emulator.render_common import res
from rm_client.wire.app_ops import NewApplication, encode_app_timeout, encode_app_timeouts, encode_new_application
from harvester.emulator.messages import Reply, Request, RouteTable

_APP_ID = re.compile(r"application_\d+_\d+$")
CLASS_CAST = ("class org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.PlanQueue cannot be cast to class "
              "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.LeafQueue (org.apache.hadoop.yarn."
              "server.resourcemanager.scheduler.capacity.PlanQueue and org.apache.hadoop.yarn.server.resourcemanager."
              "scheduler.capacity.LeafQueue are in unnamed module of loader 'app')")
STATES = [s.value for s in AppState]


def _filter_apps(emu: Any, req: Request) -> list[App]:
    states = {s.upper() for s in req.params("states")} | ({req.param("state", "").upper()} - {""})
    bad = states - set(STATES)
    if bad:
        raise errors.bad_request_wrapped(f"Invalid application-state {sorted(bad)[0]} specified. It should be one of "
                                         f"{', '.join(STATES)}")
    limit = req.param("limit")
    if limit is not None and (not limit.isdigit() or int(limit) <= 0):
        raise errors.bad_request("limit value must be greater then 0")
    types = {t.upper() for t in req.params("applicationTypes")}
    tags = {t.lower() for t in req.params("applicationTags")}
    # the parameters are read once (not per app) and the cheap tests run first: this runs on
    # every poll of the sidecar over every app the RM ever had
    final, user, queue, name = (req.param(k) for k in ("finalStatus", "user", "queue", "name"))
    started_lo = as_int(req.param("startedTimeBegin", "0"))
    started_hi = as_int(req.param("startedTimeEnd", str(2**62)), 2**62)
    f_begin, f_end = req.param("finishedTimeBegin"), req.param("finishedTimeEnd")
    finished_lo = None if f_begin is None else as_int(f_begin)
    finished_hi = None if f_end is None else as_int(f_end)
    out = []
    for app in sorted(emu.apps.values(), key=lambda a: a.seq):
        finished = int(app.finished_at * 1000)
        if (finished_lo is not None and finished < finished_lo) or \
                (finished_hi is not None and not 0 < finished <= finished_hi):
            continue
        started = int(app.submitted_at * 1000)
        if (
            started_lo <= started <= started_hi
            and (not states or app.state.value in states)
            and final in (None, app.final_status)
            and user in (None, app.spec.user)
            and queue in (None, app.queue)
            and name in (None, app.spec.name)
            and (not types or app.spec.app_type.upper() in types)
            and (not tags or bool(tags & {t.lower() for t in app.spec.tags}))
        ):
            out.append(app)
    return out[: int(limit)] if limit else out


def register(r: RouteTable) -> None:
    emu = r.emu

    def user(req: Request) -> str:
        return req.user or emu.config.web_user

    def app_of(app_id: str) -> App:
        if not _APP_ID.match(app_id):
            raise errors.invalid_app_id(app_id)
        app = emu.apps.get(app_id)
        if app is None:
            raise errors.not_found(f"app with id: {app_id} not found")
        return app

    def body_of(req: Request) -> dict[str, Any]:
        return ensure_object(parse_body(req.body, req.content_type))

    def list_apps(req: Request, _: dict[str, str]) -> Reply:
        deselect = frozenset(d for d in req.params("deSelects") if d in DESELECTABLE)
        items = [app_info(emu, a, deselect) for a in _filter_apps(emu, req)]
        return Reply.json({"apps": {"app": items} if items else {}})

    r.add("GET", "/ws/v1/cluster/apps", list_apps)

    def new_application(req: Request, _: dict[str, str]) -> Reply:
        m = emu.model
        biggest = Resources(int(m.total_mem.max()) if len(m) else 0, int(m.total_vcores.max()) if len(m) else 0)
        return Reply.json(encode_new_application(NewApplication(emu.apps_mgr.new_application_id(), res(biggest))))

    r.add("POST", "/ws/v1/cluster/apps/new-application", new_application)

    def submit(req: Request, _: dict[str, str]) -> Reply:
        body = body_of(req)
        app_id = str(body.get("application-id") or "")
        if not _APP_ID.match(app_id):
            raise errors.bad_request(f"java.lang.IllegalArgumentException: Invalid ApplicationId: {app_id}")
        if app_id in emu.apps:
            raise errors.bad_request_wrapped(f"Application with id {app_id} is already present! "
                                             "Cannot add a duplicate!")
        cmds = ensure_object(ensure_object(body.get("am-container-spec")).get("commands"))
        command = str(cmds.get("command") or "")
        tags_doc = body.get("application-tags")
        tags = ensure_object(tags_doc).get("tag", []) if tags_doc else []
        tags = [tags] if isinstance(tags, str) else list(tags)
        resource_doc = ensure_object(body.get("resource"))
        spec = AppSpec(
            name=str(body.get("application-name") or "N/A"), user=user(req), queue=str(body.get("queue") or "default"),
            app_type=str(body.get("application-type") or "YARN"), tags=tuple(str(t) for t in tags),
            priority=as_int(body.get("priority"), -1), kind=AmKind.COMMAND,
            am=Resources(as_int(resource_doc.get("memory")), as_int(resource_doc.get("vCores"))),
            am_hold_s=command_duration(command), reservation_id=body.get("reservation-id") or None,
            rest_submitted=True, max_app_attempts=max(1, as_int(body.get("max-app-attempts"), 1)), command=command)
        emu.apps_mgr.submit(spec, app_id)
        host = req.header("Host") or emu.config.rm_web_address
        return Reply(202, headers={"Location": f"http://{host}/ws/v1/cluster/apps/{app_id}"})

    r.add("POST", "/ws/v1/cluster/apps", submit)
    r.add("GET", "/ws/v1/cluster/apps/{appid}", lambda req, p: Reply.json({"app": app_info(
        emu, app_of(p["appid"]), frozenset(d for d in req.params("deSelects") if d in DESELECTABLE))}))
    r.add("GET", "/ws/v1/cluster/apps/{appid}/appattempts", lambda req, p: Reply.json(attempts(emu, app_of(p["appid"]))))

    def attempt_of(app: App, attempt_id: str) -> Any:
        for att in app.attempts:
            if att.attempt_id == attempt_id or attempt_id == str(att.number):
                return att
        raise errors.not_found(f"appAttempt with id: {attempt_id} not found")

    def one_attempt(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        return Reply.json(attempt_one(emu, app, attempt_of(app, p["att"])))

    def attempt_containers(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        return Reply.json(containers(emu, app, attempt_of(app, p["att"])))

    def one_container(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        att = attempt_of(app, p["att"])
        rec = emu.containers.get(p["cid"])
        if rec is None or rec.attempt_id != att.attempt_id:
            raise errors.not_found(f"container with id: {p['cid']} not found")
        return Reply.json(container_info(emu, app, rec))

    r.add("GET", "/ws/v1/cluster/apps/{appid}/appattempts/{att}", one_attempt)
    r.add("GET", "/ws/v1/cluster/apps/{appid}/appattempts/{att}/containers", attempt_containers)
    r.add("GET", "/ws/v1/cluster/apps/{appid}/appattempts/{att}/containers/{cid}", one_container)

    # --- state, queue, priority, timeouts -------------------------------------------------

    def put_state(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        target = str(body_of(req).get("state") or "").upper()
        if target == app.state.value:
            return Reply.json({"state": app.state.value})
        if target != "KILLED":
            raise errors.bad_request_wrapped("Only 'KILLED' is allowed as a target state.")
        echo = emu.apps_mgr.kill(app, user(req))
        host = req.header("Host") or emu.config.rm_web_address
        return Reply.json({"state": echo}, 202, {"Location": f"http://{host}/ws/v1/cluster/apps/{app.app_id}/state"})

    r.add("GET", "/ws/v1/cluster/apps/{appid}/state", lambda req, p: Reply.json({"state": app_of(p["appid"]).state.value}))
    r.add("PUT", "/ws/v1/cluster/apps/{appid}/state", put_state)

    def put_queue(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        target = str(body_of(req).get("queue") or "")
        if target == app.queue:
            return Reply.json({"queue": app.queue})
        try:
            if app.state in (AppState.FINISHED, AppState.FAILED, AppState.KILLED):
                raise QueueError("undeclared", target)
            leaf = emu.queues.leaf_for_move(target)
        except QueueError:
            raise errors.remote(500, "java.lang.reflect.UndeclaredThrowableException", None) from None
        emu.scheduler.move(app, leaf)  # with its running containers, at once (queue-move-and-priority)
        app.queue = target
        return Reply.json({"queue": target})

    r.add("GET", "/ws/v1/cluster/apps/{appid}/queue", lambda req, p: Reply.json({"queue": app_of(p["appid"]).queue}))
    r.add("PUT", "/ws/v1/cluster/apps/{appid}/queue", put_queue)

    def put_priority(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        wanted = as_int(body_of(req).get("priority"))
        # CapacityScheduler.updateApplicationPriority casts the queue the app NAMES to a LeafQueue:
        # a reservable queue is a PlanQueue, so every app submitted to root.default fails
        if emu.queues.reservable(app.queue) is not None:
            raise errors.remote(500, "java.lang.ClassCastException", CLASS_CAST)
        app.priority = emu.queues.clamp_priority(wanted)
        return Reply.json({"priority": app.priority})

    r.add("GET", "/ws/v1/cluster/apps/{appid}/priority",
          lambda req, p: Reply.json({"priority": app_of(p["appid"]).priority}))
    r.add("PUT", "/ws/v1/cluster/apps/{appid}/priority", put_priority)

    r.add("GET", "/ws/v1/cluster/apps/{appid}/timeouts",
          lambda req, p: Reply.json(encode_app_timeouts([timeout(emu, app_of(p["appid"]))])))

    def one_timeout(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        if p["type"].upper() != "LIFETIME":
            raise errors.bad_request_wrapped(f"Invalid application timeout type {p['type']}")
        return Reply.json(encode_app_timeout(timeout(emu, app)))

    r.add("GET", "/ws/v1/cluster/apps/{appid}/timeouts/{type}", one_timeout)

    def put_timeout(req: Request, p: dict[str, str]) -> Reply:
        app = app_of(p["appid"])
        body = body_of(req)
        if "timeout" not in body:
            first = next(iter(body), "timeout")
            raise errors.unexpected_root(first, len(first) + 6)
        doc = ensure_object(body["timeout"])
        try:
            expiry = datetime.strptime(str(doc.get("expiryTime")), "%Y-%m-%dT%H:%M:%S.%f%z")
        except ValueError:
            raise errors.bad_request_wrapped(f"Invalid date format: {doc.get('expiryTime')}") from None
        emu.apps_mgr.set_lifetime(app, int(expiry.timestamp() * 1000))
        return Reply.json(encode_app_timeout(timeout(emu, app)))

    r.add("PUT", "/ws/v1/cluster/apps/{appid}/timeout", put_timeout)

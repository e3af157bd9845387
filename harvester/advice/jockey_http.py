"""Jockey's read side and its run-time deadlines (paper 001), built for the composition root
(`jockey_faces`), like advice/morpheus_http.py: admin routes, a /status part and the handler of
SloAdvisor.GetDeadlineControl, reading the board (board/jockey.py).

Routes (JSON):
- GET  /v1/jockey/jobs              every deadline job: its running app, progress, the
                                    prediction at the current and the decided allocation, the
                                    decision with its reason, the reservation and the update's
                                    fate; the recent decisions that changed an allocation
- GET  /v1/jockey/job?name=NAME     one job (404 unknown, 400 without name)
- POST /v1/jockey/deadline          {"job", "deadline_s", "hard_deadline_s"?, "value"?,
                                     "soft_penalty_per_s"?, "hard_penalty"?}: the job's utility
                                    from now on (until a restart or a reset);
                                    {"job", "reset": true}: back to the config's
Times are epoch seconds, deadlines and predicted finishes seconds after the app's submission.
Bad input answers 400 with the reason, a job not in `jockey.jobs` 404; nothing is half-applied.
With Jockey disabled there are no routes and GetDeadlineControl answers UNIMPLEMENTED.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import grpc
from pydantic import ValidationError

from harvester.advice.admin_http import Request, Response, Route
from harvester.advice.yarn_advisor import _resources, _timestamp
from harvester.board.jockey import ControlView, JobControl, JockeyBoard
from harvester.config_jockey import JockeySettings, UtilitySettings
from harvester.domain import Resources
from harvester.echo import shown
from harvester.v1 import slo_pb2

PREFIX = "/v1/jockey"
WRITE_ROUTES = (f"{PREFIX}/deadline",)
DISABLED_WHY = "Jockey is disabled: set jockey.enabled: true with its jobs (docs/jockey.md)"


@dataclass
class JockeyFaces:
    routes: dict[str, Route]
    status: Callable[[], dict[str, Any]]
    deadline_control: Callable[[Any, grpc.ServicerContext], Any] | None


def _num(x: float | None, nd: int = 3) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), nd)


def job_doc(c: JobControl) -> dict[str, Any]:
    u = c.utility
    return {
        "job": c.job, "at": c.at, "state": c.state, "note": c.note, "app_id": c.app_id or None,
        "started_at": c.started_at, "elapsed_s": _num(c.elapsed_s, 1),
        "utility": None if u is None else {"deadline_s": u.deadline_s, "hard_deadline_s": u.hard, "value": u.value,
                                           "soft_penalty_per_s": u.soft_penalty_per_s, "hard_penalty": u.hard_penalty,
                                           "source": c.utility_source, "describe": u.describe()},
        "progress": _num(c.progress, 4), "done": dict(c.done), "running": dict(c.running), "pending": dict(c.pending),
        "reservation_id": c.reservation_id or None, "allocation": c.allocation, "decided": c.decided,
        "admitted": c.admitted, "target": c.target, "rule": c.rule or None,
        "container": None if c.container is None else {"memory_mb": c.container.memory_mb, "vcores": c.container.vcores},
        "predicted_finish_s": _num(c.predicted_finish_s, 1),
        "predicted_finish_current_s": _num(c.predicted_finish_current_s, 1),
        "meets_deadline": None if c.predicted_finish_s is None or u is None else c.predicted_finish_s <= u.deadline_s,
        "predictor": c.predictor, "reason": c.reason, "update": c.fate,
    }


def jobs_doc(view: ControlView) -> dict[str, Any]:
    return {"at": view.at, "actuate": view.actuate, "jobs": [job_doc(j) for j in view.jobs],
            "decisions": [{"at": d.at, "job": d.job, "app_id": d.app_id, "reservation_id": d.reservation_id,
                           "from": d.previous, "to": d.allocation, "rule": d.rule, "reason": d.reason,
                           "fate": d.fate} for d in reversed(view.decisions)]}


def deadline_control_message(c: JobControl) -> Any:
    """The SloAdvisor `DeadlineControl` of one job's last control tick."""
    msg = slo_pb2.DeadlineControl(
        app_id=c.app_id, job_name=c.job, state=c.state, progress=c.progress or 0.0, reason=c.reason or c.note,
        rule=c.rule, allocation_containers=c.allocation or 0,
        decided_containers=(c.admitted if c.admitted is not None else c.decided) or 0,
        target_containers=c.target or 0, reservation_id=c.reservation_id, elapsed_s=c.elapsed_s or 0.0,
        update=c.fate, note=c.note)
    if c.allocation is not None and c.container is not None:
        msg.allocation.CopyFrom(_resources(Resources(c.container.memory_mb * c.allocation,
                                                     c.container.vcores * c.allocation)))
    if c.started_at is not None and c.utility is not None:
        msg.deadline.CopyFrom(_timestamp(c.started_at + c.utility.deadline_s))
        if c.predicted_finish_s is not None:
            msg.predicted_completion.CopyFrom(_timestamp(c.started_at + c.predicted_finish_s))
        if c.predicted_finish_current_s is not None:
            msg.predicted_completion_current.CopyFrom(_timestamp(c.started_at + c.predicted_finish_current_s))
    return msg


def _utility_body(body: dict[str, Any]) -> UtilitySettings:
    keys = ("deadline_s", "hard_deadline_s", "value", "soft_penalty_per_s", "hard_penalty")
    unknown = sorted(set(body) - set(keys) - {"job", "reset"})
    if unknown:
        raise ValueError(f"unknown key(s) {unknown}; allowed: job, reset, {', '.join(keys)}")
    for k in keys:
        v = body.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise ValueError(f"'{k}' must be a number, got {v!r}")
    if body.get("deadline_s") is None:
        raise ValueError("'deadline_s' is required (seconds after the app's submission)")
    try:
        return UtilitySettings.model_validate({k: body[k] for k in keys if body.get(k) is not None})
    except ValidationError as exc:  # one line per problem
        raise ValueError("; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'utility'}: {e['msg']}"
                                   for e in exc.errors())) from None


def jockey_faces(j: JockeySettings, board: JockeyBoard) -> JockeyFaces:
    """The admin routes and the GetDeadlineControl handler of Jockey over its board items."""
    if not j.enabled:
        return JockeyFaces({}, lambda: {"enabled": False}, None)

    def job(req: Request) -> Response:
        name = (req.query.get("name") or [""])[0]
        if not name:
            return Response.json(400, {"error": "give ?name=JOB"})
        c = board.control().job(name)
        if c is None:
            return Response.json(404, {"error": f"no deadline job {name!r} (jockey.jobs: {sorted(j.jobs)})"})
        return Response.json(200, job_doc(c))

    def deadline(req: Request) -> Response:
        try:
            body = json.loads(req.body or b"{}")
        except ValueError as exc:
            return Response.json(400, {"error": f"the body is not JSON: {exc}"})
        if not isinstance(body, dict) or not isinstance(body.get("job"), str):
            return Response.json(400, {"error": "the body must be a JSON object with a 'job' string"})
        name = body["job"]
        if name not in j.jobs:
            return Response.json(404, {"error": f"no deadline job {name!r} (jockey.jobs: {sorted(j.jobs)})"})
        if body.get("reset") is True:
            board.set_utility(name, None)
            return Response.json(200, {"job": name, "source": "config", "utility": j.jobs[name].utility().describe()})
        try:
            utility = _utility_body(body).utility()
        except ValueError as exc:
            return Response.json(400, {"error": str(exc)})
        board.set_utility(name, utility)
        return Response.json(200, {"job": name, "source": "api", "utility": utility.describe()})

    def deadline_control(request: Any, context: grpc.ServicerContext) -> Any:
        view = board.control()
        if request.job_name:
            c = view.job(request.job_name)
        elif request.app_id:
            c = view.by_app(request.app_id)
        else:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "give app_id or job_name")
        if c is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no deadline job with {shown(request.job_name or request.app_id)} "
                                                     "at the last control tick")
        return deadline_control_message(c)

    def status() -> dict[str, Any]:
        view = board.control()
        return {"enabled": True, "actuate": view.actuate, "at": view.at,
                "jobs": {c.job: {"state": c.state, "app_id": c.app_id or None, "progress": _num(c.progress, 4),
                                 "allocation": c.allocation, "decided": c.decided} for c in view.jobs}}

    routes: dict[str, Route] = {
        f"{PREFIX}/jobs": lambda req: Response.json(200, jobs_doc(board.control())),
        f"{PREFIX}/job": job,
        f"{PREFIX}/deadline": deadline,
    }
    return JockeyFaces(routes, status, deadline_control)

"""Morpheus's read side and sign-off, built for the composition root (`morpheus_faces`), like
advice/hdfs_wiring.py: the SloAdvisor gRPC service, the admin routes and a /status part,
reading the board (board/morpheus.py) and, for sign-offs, writing the store.

Routes (JSON; documents in advice/morpheus_documents.py):
- GET  /v1/morpheus/slos                 every recurring job: SLO or why none, contract, plan
- GET  /v1/morpheus/slo?job=NAME         one job in detail (404 unknown, 400 without job)
- GET  /v1/morpheus/reservations         plan, managed reservations, grants, nudges, actions
- POST /v1/morpheus/slo/accept           {"job", "by"?, "note"?}
- POST /v1/morpheus/slo/override         {"job", "by"?, "note"?, "period_s"?, "earliest_s"?,
                                          "deadline_s"?, "skyline_scale"?}
- POST /v1/morpheus/slo/reject           {"job", "by"?, "reason"?}
- POST /v1/morpheus/slo/reset            {"job", "by"?}   (back to following the inference)
A sign-off moves the job's contract along its lifecycle (models/slo_contract.py), stores it
(with its status history) and publishes it; the reservation loop plans from it at its next
tick. Bad input answers 400 with the reason; a job neither in the SLO model nor holding a stored
contract answers 404 to every command (issue 25: an override used to create one); nothing is
half-applied.
With Morpheus disabled there are no routes and SloAdvisor answers UNIMPLEMENTED saying how to
enable it — unless Jockey runs: then SloAdvisor serves its GetDeadlineControl and answers the
Morpheus RPCs with empty lists (no model).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Callable

from harvester.advice.admin_http import Request, Response, Route
from harvester.advice.grpc_server import ServiceImpl
from harvester.advice.morpheus_documents import record_doc, reservations_doc, slo_detail, slos_doc
from harvester.advice.slo_advisor import slo_advisor_service
from harvester.board.morpheus import MorpheusBoard
from harvester.config_morpheus import MorpheusSettings
from harvester.echo import shown
from harvester.history.store import HistoryStore
from harvester.lifecycle import InvalidTransition
from harvester.models.slo_contract import Override, SignOffError, SloContract, accept, new_contract, override, reject, reset
from harvester.observability.metrics import Metrics

PREFIX = "/v1/morpheus"


@dataclass
class MorpheusFaces:
    service: ServiceImpl | None
    routes: dict[str, Route]
    status: Callable[[], dict[str, Any]]
    unimplemented_reason: str = ""


class SignOff:
    """Applies accept / override / reject / reset to one job's contract (one at a time)."""

    def __init__(self, board: MorpheusBoard, store: HistoryStore, now: Callable[[], float]) -> None:
        self._board = board
        self._store = store
        self._now = now
        self._lock = threading.Lock()

    def apply(self, command: str, body: dict[str, Any]) -> SloContract:
        job = body.get("job")
        if not isinstance(job, str) or not job:
            raise SignOffError("'job' must be a non-empty string")
        by = str(body.get("by") or "")
        with self._lock:
            contracts = dict(self._board.contracts())
            model = self._board.model()
            jm = None if model is None else model.job(job)
            if jm is None and job not in contracts:  # every command alike: 404, nothing stored
                raise LookupError(f"no recurring job {shown(job)} (see GET {PREFIX}/slos)")
            now = self._now()
            c = contracts.get(job) or new_contract(job, now)
            if command == "accept":
                c = accept(c, None if jm is None else jm.proposal, now, by, str(body.get("note") or ""))
            elif command == "override":
                c = override(c, _override(body), now, by, str(body.get("note") or ""))
            elif command == "reject":
                c = reject(c, now, by, str(body.get("reason") or ""))
            elif command == "reset":
                c = reset(c, now, by)
            else:
                raise SignOffError(f"unknown command {command!r}")
            self._store.save_slo_contract(c)
            contracts[job] = c
            self._board.publish_contracts(contracts)
            return c


def _override(body: dict[str, Any]) -> Override:
    values: dict[str, Any] = {}
    for key in ("period_s", "earliest_s", "deadline_s", "skyline_scale"):
        v = body.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise SignOffError(f"'{key}' must be a number, got {v!r}")
        values[key] = float(v)
    if not values:
        raise SignOffError("an override needs at least one of period_s, earliest_s, deadline_s, skyline_scale")
    return Override(**values)


def _body(req: Request) -> dict[str, Any]:
    try:
        doc = json.loads(req.body or b"{}")
    except ValueError as exc:
        raise SignOffError(f"the body is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise SignOffError("the body must be a JSON object")
    return doc


def morpheus_faces(m: MorpheusSettings, board: MorpheusBoard, store: HistoryStore, metrics: Metrics,
                   now: Callable[[], float], *,
                   deadline_control: Callable[[Any, Any], Any] | None = None) -> MorpheusFaces:
    """The gRPC service and admin routes of Morpheus over the board (and the store for sign-offs);
    `deadline_control` serves SloAdvisor.GetDeadlineControl (Jockey, advice/jockey_http.py)."""
    if not m.enabled:
        # SloAdvisor still serves Jockey's GetDeadlineControl (its other RPCs answer empty: no model)
        service = None if deadline_control is None else slo_advisor_service(
            board, metrics, now=now, queue=m.queue, deadline_control=deadline_control)
        return MorpheusFaces(service, {}, lambda: {"enabled": False},
                             "" if service else "Morpheus is disabled: set morpheus.enabled: true (docs/morpheus.md)")
    sign_off = SignOff(board, store, now)

    def slos(req: Request) -> Response:
        return Response.json(200, slos_doc(board.model(), dict(board.contracts()), board.reservations(), now()))

    def slo(req: Request) -> Response:
        job = (req.query.get("job") or [""])[0]
        if not job:
            return Response.json(400, {"error": "give ?job=NAME"})
        model = board.model()
        jm = None if model is None else model.job(job)
        if jm is None:
            return Response.json(404, {"error": f"no recurring job {shown(job)}"})
        return Response.json(200, slo_detail(jm, board.contracts().get(job), board.reservations(), now()))

    def command(name: str) -> Route:
        def route(req: Request) -> Response:
            try:
                c = sign_off.apply(name, _body(req))
            except LookupError as exc:
                return Response.json(404, {"error": str(exc)})
            except (SignOffError, ValueError, InvalidTransition) as exc:
                return Response.json(400, {"error": str(exc)})
            last = c.lifecycle.history[-1]
            return Response.json(200, {"job": c.job, "state": c.state.value, "at": last.at, "reason": last.reason})
        return route

    def status() -> dict[str, Any]:
        view, model = board.reservations(), board.model()
        return {"enabled": True, "model_version": None if model is None else model.version,
                "jobs": 0 if model is None else len(model.jobs), "planned": len(view.planned),
                "reservations": [record_doc(r, history=False) for r in view.records if not r.terminal],
                "ingest": {k: v.offset for k, v in board.ingest().sources.items()}}

    routes: dict[str, Route] = {
        f"{PREFIX}/slos": slos,
        f"{PREFIX}/slo": slo,
        f"{PREFIX}/reservations": lambda req: Response.json(200, reservations_doc(board.reservations())),
    }
    for name in ("accept", "override", "reject", "reset"):
        routes[f"{PREFIX}/slo/{name}"] = command(name)
    service = slo_advisor_service(board, metrics, now=now, queue=m.queue, require_sign_off=m.slo.require_sign_off,
                                  deadline_control=deadline_control)
    return MorpheusFaces(service, routes, status)


#: The routes that change state (the composition root registers them for POST).
WRITE_ROUTES = tuple(f"{PREFIX}/slo/{name}" for name in ("accept", "override", "reject", "reset"))

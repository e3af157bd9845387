"""SloAdvisor gRPC servicer (proto/harvester/v1/slo.proto) over Morpheus's board items.

- ListSlos(queue): every recurring job of the last refit (an actionable SLO or, with
  `actionable` false, the reason there is none), its sign-off state, the skyline in force (the
  accepted / overridden terms, else the proposal's) as steps from the job's start, the current
  reservation and LowCost's placement. `queue` empty or the plan queue (full or short name):
  all; another queue: none (Morpheus plans one queue).
- GetSlo(job_name): one of them; INVALID_ARGUMENT without a name, NOT_FOUND for an unknown job.
- ListReservations(queue): the reservations Harvester manages (not the RM's other ones), with
  their lifecycle state and the reason for it; allocations are the stages from the arrival.
- GetDeadlineControl: Jockey's (paper 001) view of one deadline job, served by the
  `deadline_control` callable (advice/jockey_http.py); UNIMPLEMENTED when Jockey is disabled.
"""

from __future__ import annotations

from typing import Any, Callable

import grpc

from harvester.advice.grpc_server import ServiceImpl
from harvester.advice.morpheus_documents import terms_warning, violation_rate
from harvester.advice.yarn_advisor import _resources, _timestamp
from harvester.board.morpheus import JobModel, MorpheusBoard
from harvester.decisions.reservation_actions import ReservationSpec
from harvester.domain import Resources
from harvester.echo import shown
from harvester.models.slo_contract import ContractState, effective_terms
from harvester.observability.metrics import Metrics
from harvester.v1 import slo_pb2, slo_pb2_grpc

SERVICE = "harvester.v1.SloAdvisor"
JOCKEY_WHY = "Jockey is disabled: set jockey.enabled: true with its jobs (docs/jockey.md)"


def _steps(memory_mb: tuple[int, ...], vcores: tuple[int, ...], step_s: float) -> list[Any]:
    out: list[Any] = []
    k = 0
    while k < len(memory_mb):
        j = k
        while j < len(memory_mb) and (memory_mb[j], vcores[j]) == (memory_mb[k], vcores[k]):
            j += 1
        out.append(slo_pb2.SkylineStep(offset_s=k * step_s, duration_s=(j - k) * step_s,
                                       resources=_resources(Resources(memory_mb[k], vcores[k]))))
        k = j
    return out


def _allocations(spec: ReservationSpec) -> list[Any]:
    out, t = [], 0
    for s in spec.stages:
        out.append(slo_pb2.SkylineStep(offset_s=t / 1000.0, duration_s=s.duration_ms / 1000.0, resources=_resources(
            Resources(s.container.memory_mb * s.containers, s.container.vcores * s.containers))))
        t += s.duration_ms
    return out


class SloAdvisorServicer(slo_pb2_grpc.SloAdvisorServicer):
    def __init__(self, board: MorpheusBoard, metrics: Metrics | None, *, now: Callable[[], float],
                 queue: str = "root.default", deadline_control: Callable[[Any, grpc.ServicerContext], Any] | None = None,
                 require_sign_off: bool = False) -> None:
        self._board = board
        self._now = now
        self._queue = queue
        self._deadline_control = deadline_control
        self._require_sign_off = require_sign_off

    def _ours(self, queue: str) -> bool:
        return queue in ("", self._queue, self._queue.rsplit(".", 1)[-1])

    def _slo(self, j: JobModel) -> Any:
        contract = self._board.contracts().get(j.job)
        view = self._board.reservations()
        terms, _ = effective_terms(j.proposal, contract, self._require_sign_off)
        planned = next((e for e in view.planned if e.job == j.job), None)
        current = view.current(j.job, self._now())
        s = j.slo
        warned = terms_warning(j, contract)
        msg = slo_pb2.Slo(
            job_name=j.job, period_s=(terms.period_s if terms else s.period_s) or 0.0,
            deadline_offset_s=(terms.deadline_s if terms else s.deadline_s) or 0.0, inferred_from=s.reason,
            reservation_id=(current.reservation_id or "") if current else "",
            state=(contract.state if contract else ContractState.PROPOSED).value,
            violation_rate=violation_rate(s) or 0.0,
            earliest_offset_s=(terms.earliest_s if terms else s.earliest_start_s) or 0.0, actionable=s.actionable,
            reason=s.reason, reservation_state=current.state.value if current else "",
            planned=planned is not None,
            plan_reason=(planned.placement.reason if planned else view.not_planned.get(j.job, ""))
            + (f" (warning: {warned})" if warned and not planned else ""))
        if terms is not None:
            msg.skyline.extend(_steps(terms.memory_mb, terms.vcores, terms.step_s))
        elif j.proposal.memory_mb is not None and j.proposal.vcores is not None:
            msg.skyline.extend(_steps(j.proposal.memory_mb, j.proposal.vcores, j.proposal.step_s))
        return msg

    def ListSlos(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802 (generated name)
        model = self._board.model()
        if model is None or not self._ours(request.queue):
            return slo_pb2.ListSlosResponse()
        return slo_pb2.ListSlosResponse(slos=[self._slo(j) for j in model.jobs])

    def GetSlo(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        if not request.job_name:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "job_name is required")
        model = self._board.model()
        j = None if model is None else model.job(request.job_name)
        if j is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no recurring job {shown(request.job_name)} in the last refit")
        return self._slo(j)

    def ListReservations(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        if not self._ours(request.queue):
            return slo_pb2.ListReservationsResponse()
        out = []
        for r in self._board.reservations().records:
            info = slo_pb2.ReservationInfo(
                reservation_id=r.reservation_id or "", queue=self._queue, job_name=r.job,
                arrival=_timestamp(r.spec.arrival_ms / 1000.0), deadline=_timestamp(r.spec.deadline_ms / 1000.0),
                recurrence_ms=r.spec.recurrence_ms, state=r.state.value, reason=r.lifecycle.history[-1].reason)
            info.allocations.extend(_allocations(r.spec))
            out.append(info)
        return slo_pb2.ListReservationsResponse(reservations=out)

    def GetDeadlineControl(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        if self._deadline_control is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{SERVICE}/GetDeadlineControl: {JOCKEY_WHY}")
        return self._deadline_control(request, context)


def slo_advisor_service(board: MorpheusBoard, metrics: Metrics | None = None, *, now: Callable[[], float],
                        queue: str = "root.default", require_sign_off: bool = False,
                        deadline_control: Callable[[Any, grpc.ServicerContext], Any] | None = None) -> ServiceImpl:
    """The `ServiceImpl` to hand to `GrpcServer` (the composition root calls this)."""
    return ServiceImpl(SERVICE, SloAdvisorServicer(board, metrics, now=now, queue=queue, deadline_control=deadline_control,
                                                   require_sign_off=require_sign_off),
                       slo_pb2_grpc.add_SloAdvisorServicer_to_server)

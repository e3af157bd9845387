"""YarnAdvisor gRPC servicer (proto/harvester/v1/yarn_advisor.proto) over the harvesting items of
the state board (board/harvesting.py: what the refit, jobs and guard loops published).

- SelectClasses: Algorithm 1 (decisions/class_selection.py) for one job against the classes'
  current state. Request validation answers INVALID_ARGUMENT with a message naming the field;
  FAILED_PRECONDITION when no class model is published yet or the job's demand is unknown (no
  DAG, no override, no past run). `seed` makes the probabilistic pick deterministic; without
  it a per-servicer generator is used. In the response `headroom` is the §4.1 FRACTION of the
  class's capacity, `weighted_headroom` the selection weight of line 6 (room in containers ×
  ranking weight), `containers` how many of the job's containers go there.
- ListTenantClasses: the current model's classes, their tenants, node counts and reserves.
- ListNodeCapacities: the guard's last decision per node (empty `node_ids` = all; ids the
  guard has no view of are left out; an empty id is INVALID_ARGUMENT).
- GetNodeOrdering: the published node order (board/node_ordering.py, the same data the
  RM plug-in long-polls) for the request's `job_type`, else for the queue's class in
  harvesting.node_ordering.queues; INVALID_ARGUMENT when neither names a class,
  FAILED_PRECONDITION before the first order is published (or without a board). `unchanged`
  (and no ids) when `if_version_differs_from` is the current version. `subcluster` (rm.clusters)
  answers from that RM's own document, as `GET /v1/yarn/node-ordering?subcluster=` does (its
  nodes as host:port, its own version); empty = the whole estate; an unknown name NOT_FOUND.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Mapping

import grpc
import numpy as np
from google.protobuf.timestamp_pb2 import Timestamp

from harvester.advice.grpc_server import ServiceImpl, duration_problem, resources_problem
from harvester.advice.node_ordering_http import DEFAULT as SUBCLUSTER_DEFAULT
from harvester.board.harvesting import HarvestingBoard
from harvester.board.node_ordering import NodeOrderings
from harvester.board.versioned_board import VersionedBoard
from harvester.decisions.class_selection import characterize, select_classes
from harvester.decisions.strategy import DEFAULT_SELECTION, SelectionStrategy
from harvester.domain import Resources
from harvester.echo import shown
from harvester.models.job_history import DemandError, JobType, Stage
from harvester.models.patterns import Pattern
from harvester.observability.metrics import Metrics
from harvester.v1 import common_pb2, yarn_advisor_pb2, yarn_advisor_pb2_grpc

PATTERN_PB = {
    Pattern.PERIODIC: common_pb2.PATTERN_PERIODIC,
    Pattern.CONSTANT: common_pb2.PATTERN_CONSTANT,
    Pattern.UNPREDICTABLE: common_pb2.PATTERN_UNPREDICTABLE,
}
JOB_TYPE_PB = {
    JobType.SHORT: yarn_advisor_pb2.JOB_TYPE_SHORT,
    JobType.MEDIUM: yarn_advisor_pb2.JOB_TYPE_MEDIUM,
    JobType.LONG: yarn_advisor_pb2.JOB_TYPE_LONG,
}
JOB_TYPE_OF_PB = {v: k for k, v in JOB_TYPE_PB.items()}
#: Container counts are int32 in the contract: a DAG whose tasks add up to more is refused.
MAX_CONTAINERS = 2**31 - 1
MAX_STAGES = 100_000


def _timestamp(t: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(round(t * 1e9)))
    return ts


def _resources(r: Resources) -> common_pb2.Resources:
    return common_pb2.Resources(memory_mb=r.memory_mb, vcores=r.vcores)


class YarnAdvisorServicer(yarn_advisor_pb2_grpc.YarnAdvisorServicer):
    def __init__(self, board: HarvestingBoard, selection: SelectionStrategy = DEFAULT_SELECTION,
                 metrics: Metrics | None = None, *, seed: int | None = None,
                 orderings: VersionedBoard[NodeOrderings] | None = None,
                 subclusters: Mapping[str, VersionedBoard[NodeOrderings]] | None = None) -> None:
        self._board = board
        self._selection = selection
        self._orderings = orderings
        self._subclusters = dict(subclusters or {})  # rm.clusters: each RM's own node order
        self._metrics = metrics
        self._rng = np.random.default_rng(seed)
        self._rng_lock = threading.Lock()

    def SelectClasses(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802 (generated name)
        view = self._board.view()
        container = Resources(request.container.memory_mb, request.container.vcores)
        if not request.HasField("container"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "container: memory_mb and vcores must both be > 0")
        problem = resources_problem(container.memory_mb, container.vcores, "container")
        if problem:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        if request.max_concurrent_containers < 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "max_concurrent_containers must be >= 0 (0 = derive)")
        last_run = request.last_run_seconds if request.HasField("last_run_seconds") else None
        problem = None if last_run is None else duration_problem(last_run, "last_run_seconds")
        if problem:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        if any(st.tasks < 0 for st in request.dag):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "dag: a stage's tasks must be >= 0")
        total = sum(st.tasks for st in request.dag)
        if total > MAX_CONTAINERS or len(request.dag) > MAX_STAGES:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"dag: {len(request.dag)} stages of {total} tasks in all; at most {MAX_STAGES} stages and "
                          f"{MAX_CONTAINERS} tasks (int32 container counts)")
        if not request.job_name and request.max_concurrent_containers == 0 and not request.dag:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "job_name is required unless max_concurrent_containers or dag is given")
        if view.model is None or not view.classes:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no utilization classes are fitted and published yet")
        started = time.perf_counter()
        dag = [Stage(s.name, s.tasks, tuple(s.parents)) for s in request.dag]
        try:
            job = characterize(
                request.job_name, history=view.jobs, fallback_thresholds=self._selection.fallback_thresholds,
                container=container, last_run_s=last_run, max_concurrent=request.max_concurrent_containers, dag=dag,
            )
        except DemandError as exc:
            code = grpc.StatusCode.INVALID_ARGUMENT if dag else grpc.StatusCode.FAILED_PRECONDITION
            context.abort(code, str(exc))
        if request.HasField("seed"):
            selection = select_classes(job, view.table, np.random.default_rng(request.seed),
                                       weights=self._selection.weights, model_version=view.model.version)
        else:
            with self._rng_lock:
                selection = select_classes(job, view.table, self._rng,
                                           weights=self._selection.weights, model_version=view.model.version)
        if self._metrics is not None:
            self._metrics.record_decision("select_classes", time.perf_counter() - started)
        return yarn_advisor_pb2.SelectClassesResponse(
            job_type=JOB_TYPE_PB[selection.job_type],
            required_containers=selection.required_containers,
            classes=[
                yarn_advisor_pb2.ClassChoice(
                    class_id=c.class_id, pattern=PATTERN_PB[c.pattern], average_utilization=c.average,
                    peak_utilization=c.peak, current_utilization=c.current, headroom=c.headroom,
                    weighted_headroom=c.weighted_headroom, containers=c.containers,
                )
                for c in selection.choices
            ],
            reason=selection.reason,
            model_version=selection.model_version,
        )

    def ListTenantClasses(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        view = self._board.view()
        model = view.model
        if model is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no utilization classes are fitted and published yet")
        members: dict[str, list[str]] = {c.class_id: [] for c in model.classes}
        for a in model.tenants:
            members[a.class_id].append(a.tenant)
        return yarn_advisor_pb2.ListTenantClassesResponse(
            model_version=model.version,
            fitted_at=_timestamp(model.fitted_at),
            classes=[
                yarn_advisor_pb2.TenantClass(
                    class_id=c.class_id, pattern=PATTERN_PB[c.pattern], average_utilization=c.average,
                    peak_utilization=c.peak, tenants=members[c.class_id], nodes=view.class_nodes.get(c.class_id, 0),
                    reserve_fraction=view.reserves.fraction(c.class_id),
                )
                for c in model.classes
            ],
        )

    def ListNodeCapacities(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        if any(not n for n in request.node_ids):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "node_ids must not contain empty ids")
        decision = self._board.view().guard
        if decision is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the guard has not decided yet")
        wanted = set(request.node_ids)
        return yarn_advisor_pb2.ListNodeCapacitiesResponse(
            as_of=_timestamp(decision.as_of),
            nodes=[
                yarn_advisor_pb2.NodeCapacity(
                    node_id=v.node_id, tenant=v.tenant, class_id=v.class_id, total=_resources(v.total),
                    harvestable=_resources(v.capacity_after or v.harvestable or Resources.zero()),
                    primary_cpu_cores=v.primary_cpu_cores or 0.0, reserve_cpu_cores=v.reserve_cpu_cores,
                    stale=v.stale, reason=f"{v.reason} ({v.outcome})",
                )
                for v in decision.nodes
                if not wanted or v.node_id in wanted
            ],
        )

    def GetNodeOrdering(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        if request.job_type != yarn_advisor_pb2.JOB_TYPE_UNSPECIFIED and request.job_type not in JOB_TYPE_OF_PB:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"job_type {request.job_type} is not a JobType")
        board = self._ordering_board(request.subcluster, context)
        pub = board.current() if board is not None else None
        if pub is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          "no node ordering is published yet (the node-ordering loop follows the guard)")
        job_type = JOB_TYPE_OF_PB.get(request.job_type) or pub.value.for_queue(request.queue)
        if job_type is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"queue {shown(request.queue)} has no job-length class: set job_type or list the queue in "
                          "harvesting.node_ordering.queues")
        order = pub.value.orders[job_type]
        if request.if_version_differs_from == pub.version:
            return yarn_advisor_pb2.NodeOrdering(version=pub.version, unchanged=True, reason=order.reason,
                                                 job_type=JOB_TYPE_PB[job_type])
        return yarn_advisor_pb2.NodeOrdering(version=pub.version, node_ids=order.node_ids, reason=order.reason,
                                             job_type=JOB_TYPE_PB[job_type])

    def _ordering_board(self, name: str, context: grpc.ServicerContext) -> VersionedBoard[NodeOrderings] | None:
        """The document a GetNodeOrdering answers from (the same as GET /v1/yarn/node-ordering's
        `?subcluster=`): none named → the whole estate; with rm.clusters a sub-cluster's own."""
        if not name or (name == SUBCLUSTER_DEFAULT and not self._subclusters):
            return self._orderings
        board = self._subclusters.get(name)
        if board is None:
            names = ", ".join(sorted(self._subclusters)) or f"only {SUBCLUSTER_DEFAULT!r}: rm.clusters is not set"
            context.abort(grpc.StatusCode.NOT_FOUND, f"subcluster {shown(name)}: no such sub-cluster ({names})")
        return board


def yarn_advisor_service(board: HarvestingBoard, metrics: Metrics | None = None, *, seed: int | None = None,
                         selection: SelectionStrategy = DEFAULT_SELECTION,
                         orderings: VersionedBoard[NodeOrderings] | None = None,
                         subclusters: Mapping[str, VersionedBoard[NodeOrderings]] | None = None) -> ServiceImpl:
    """The `ServiceImpl` to hand to `GrpcServer` (the composition root calls this)."""
    return ServiceImpl(
        "harvester.v1.YarnAdvisor",
        YarnAdvisorServicer(board, selection, metrics, seed=seed, orderings=orderings, subclusters=subclusters),
        yarn_advisor_pb2_grpc.add_YarnAdvisorServicer_to_server,
    )

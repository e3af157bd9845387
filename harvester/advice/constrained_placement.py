"""gRPC `harvester.v1.ConstrainedPlacement` (Phoenix, paper 003) over the latest telemetry snapshot.

For an RM plug-in or a framework client: `PlaceTasks` orders a batch of constrained task
requests and places them on nodes with free resources (decisions/constrained_placement.py);
`GetConstraintResourceVector` answers the CRV of the recent demand window.

State kept here, between requests: the cluster view of the latest snapshot (node attributes
are resolved once per snapshot, decisions/placement_view.py) and the demand window — every
placed batch's arrivals per constraint class for `placement.demand_window_s`, which make the
CRV demand and the M/G/1 arrival rates of later requests (`models.queueing.fit_class_loads`).

Status codes: FAILED_PRECONDITION without a snapshot or with one older than
`telemetry.stale_after_s` (never place on stale data); INVALID_ARGUMENT naming the field for
a request that can never be answered (empty or duplicate task ids, resources not within
1..2^31-1, a duration not finite or over a year, a bad constraint, more than 64 candidates,
a batch over `placement.max_tasks_per_request`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from harvester.advice.grpc_server import ServiceImpl, duration_problem, resources_problem
from harvester.clock import Clock
from harvester.config import Settings
from harvester.config_placement import PlacementSettings
from harvester.decisions.constrained_placement import (
    PlacementContext, PlacementPlan, PlacementStrategy, RecentClass, TaskAsk, class_key, constraint_resource_vector, decide,
)
from harvester.decisions.placement_view import ClusterView, cluster_view
from harvester.domain import ClusterSnapshot, Resources
from harvester.echo import shown
from harvester.models.constraints import Constraint, ConstraintError, Op, PlacementConstraint, PlacementKind, Strength
from harvester.models.queueing import Arrivals, ServiceMoments, fit_class_loads
from harvester.observability.metrics import Metrics
from harvester.v1 import constrained_placement_pb2 as pb
from harvester.v1 import constrained_placement_pb2_grpc as pb_grpc

SERVICE = "harvester.v1.ConstrainedPlacement"
OPS = {pb.CONSTRAINT_OP_EQ: Op.EQ, pb.CONSTRAINT_OP_NE: Op.NE, pb.CONSTRAINT_OP_GE: Op.GE, pb.CONSTRAINT_OP_LE: Op.LE,
       pb.CONSTRAINT_OP_LT: Op.LT, pb.CONSTRAINT_OP_GT: Op.GT, pb.CONSTRAINT_OP_IN: Op.IN}
OPS_PB = {v: k for k, v in OPS.items()}
STRENGTH = {pb.CONSTRAINT_KIND_UNSPECIFIED: Strength.HARD, pb.CONSTRAINT_KIND_HARD: Strength.HARD,
            pb.CONSTRAINT_KIND_SOFT: Strength.SOFT}
#: Candidates per task a request may ask for (placement.candidates_per_task's bound).
MAX_CANDIDATES = 64
PLACEMENT = {pb.PLACEMENT_KIND_AFFINITY: PlacementKind.AFFINITY, pb.PLACEMENT_KIND_ANTI_AFFINITY: PlacementKind.ANTI_AFFINITY}


def _timestamp(t: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(round(t * 1e9)))
    return ts


class BadRequest(ValueError):
    """A request field that can never be answered (INVALID_ARGUMENT, message names the field)."""


def _constraint(c: Any, where: str) -> Constraint:
    if c.op not in OPS:
        raise BadRequest(f"{where}.op: give one of EQ NE LT GT LE GE IN")
    if c.kind not in STRENGTH:
        raise BadRequest(f"{where}.kind: unknown kind {c.kind}")
    op = OPS[c.op]
    values = tuple(c.values) if c.values else tuple(v.strip() for v in c.value.split(",")) if op is Op.IN else (c.value,)
    try:
        return Constraint(c.attribute, op, values, STRENGTH[c.kind])
    except ConstraintError as exc:
        raise BadRequest(f"{where}: {exc}") from None


def task_asks(request: Any, limit: int) -> tuple[TaskAsk, ...]:
    """The request's tasks as decision inputs (BadRequest names the first bad field)."""
    if not request.tasks:
        raise BadRequest("tasks is empty")
    if len(request.tasks) > limit:
        raise BadRequest(f"tasks: {len(request.tasks)} tasks exceed placement.max_tasks_per_request ({limit})")
    if not 0 <= request.candidates_per_task <= MAX_CANDIDATES:
        raise BadRequest(f"candidates_per_task must be within 0..{MAX_CANDIDATES} (0 = the configured default), "
                         f"got {request.candidates_per_task}")
    seen: set[str] = set()
    out = []
    for i, t in enumerate(request.tasks):
        where = f"tasks[{i}]"
        if not t.task_id:
            raise BadRequest(f"{where}.task_id is empty")
        if t.task_id in seen:
            raise BadRequest(f"{where}.task_id {shown(t.task_id)} repeats an earlier task")
        seen.add(t.task_id)
        problem = (resources_problem(t.resources.memory_mb, t.resources.vcores, f"{where}.resources")
                   or duration_problem(t.expected_duration_s, f"{where}.expected_duration_s"))
        if problem:
            raise BadRequest(problem)
        constraints = tuple(_constraint(c, f"{where}.constraints[{j}]") for j, c in enumerate(t.constraints))
        placement = []
        for j, p in enumerate(t.placement):
            if p.kind not in PLACEMENT or p.strength not in STRENGTH:
                raise BadRequest(f"{where}.placement[{j}]: kind must be AFFINITY or ANTI_AFFINITY")
            try:
                placement.append(PlacementConstraint(PLACEMENT[p.kind], p.scope or "rack", p.group, STRENGTH[p.strength]))
            except ConstraintError as exc:
                raise BadRequest(f"{where}.placement[{j}]: {exc}") from None
        out.append(TaskAsk(t.task_id, Resources(int(t.resources.memory_mb), int(t.resources.vcores)), constraints,
                           tuple(placement), float(t.expected_duration_s)))
    return tuple(out)


class DemandWindow:
    """Arrivals of placed batches per constraint class over the last `window_s` (thread-safe)."""

    def __init__(self, window_s: float, default: ServiceMoments) -> None:
        self.window_s = window_s
        self._default = default
        self._arrivals: deque[Arrivals] = deque()
        self._classes: dict[str, tuple[Constraint, ...]] = {}
        self._lock = threading.Lock()

    def record(self, now: float, tasks: tuple[TaskAsk, ...], default_duration_s: float) -> None:
        sums: dict[str, list[float]] = {}
        with self._lock:
            for t in tasks:
                key = class_key(t.constraints)
                self._classes.setdefault(key, t.constraints)
                d = t.expected_duration_s if t.expected_duration_s > 0 else default_duration_s
                acc = sums.setdefault(key, [0.0, 0.0, 0.0])
                acc[0] += 1
                acc[1] += d
                acc[2] += d * d
            self._arrivals.extend(Arrivals(now, k, int(n), s1, s2) for k, (n, s1, s2) in sums.items())

    def recent(self, now: float) -> tuple[RecentClass, ...]:
        with self._lock:
            while self._arrivals and self._arrivals[0].time <= now - self.window_s:
                self._arrivals.popleft()
            loads = fit_class_loads(self._arrivals, now, self.window_s, self._default)
            live = {a.key for a in self._arrivals}
            self._classes = {k: v for k, v in self._classes.items() if k in live}
            return tuple(RecentClass(self._classes[k], load, int(round(load.rate_per_s * self.window_s)))
                         for k, load in sorted(loads.items()))


class ConstrainedPlacementServicer(pb_grpc.ConstrainedPlacementServicer):
    """See the module docstring."""

    def __init__(self, latest: Callable[[], ClusterSnapshot | None], clock: Clock, settings: PlacementSettings,
                 metrics: Metrics, *, stale_after_s: float) -> None:
        self._latest = latest
        self._clock = clock
        self._settings = settings
        self._metrics = metrics
        self._stale_after_s = stale_after_s
        self._strategy = PlacementStrategy(
            candidates=settings.candidates_per_task, max_wait_s=settings.max_wait_s,
            max_wait_factor=settings.max_wait_factor, default_duration_s=settings.default_task_duration_s,
            window_s=settings.demand_window_s,
        )
        self.window = DemandWindow(settings.demand_window_s, ServiceMoments.deterministic(settings.default_task_duration_s))
        self._view_lock = threading.Lock()
        self._view: tuple[ClusterSnapshot, ClusterView] | None = None
        self._place_lock = threading.Lock()  # one batch at a time: each sees the window of the one before

    def _current_view(self, context: grpc.ServicerContext) -> ClusterView:
        snapshot = self._latest()
        now = self._clock.now()
        if snapshot is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no telemetry snapshot yet: Harvester has not polled the RM")
        if now - snapshot.time > self._stale_after_s:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"telemetry snapshot is {now - snapshot.time:.0f} s old (> telemetry.stale_after_s "
                          f"{self._stale_after_s:g} s): not placing on stale data")
        with self._view_lock:
            if self._view is None or self._view[0] is not snapshot:
                self._view = (snapshot, cluster_view(snapshot, self._settings))
            return self._view[1]

    def PlaceTasks(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802 (generated name)
        try:
            tasks = task_asks(request, self._settings.max_tasks_per_request)
        except BadRequest as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        view = self._current_view(context)
        strategy = self._strategy
        if request.candidates_per_task:
            strategy = PlacementStrategy(request.candidates_per_task, strategy.max_wait_s, strategy.max_wait_factor,
                                         strategy.default_duration_s, strategy.window_s)
        with self._place_lock:
            now = self._clock.now()
            start = time.perf_counter()
            plan = decide(PlacementContext(now, request.job_id, view, tasks, strategy, self.window.recent(now)))
            seconds = time.perf_counter() - start
            self.window.record(now, tasks, strategy.default_duration_s)
        self._metrics.record_placements(_outcomes(plan), seconds)
        return _response(plan, view)

    def GetConstraintResourceVector(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        view = self._current_view(context)
        estimates = constraint_resource_vector(view, self.window.recent(self._clock.now()))
        dims = []
        for e in estimates:
            c, d = e.constraint, e.dimension
            dims.append(pb.ConstraintDimension(
                attribute=c.attribute if c else d.key, value=",".join(c.values) if c else "", demand=d.demand,
                supply=d.supply, ratio=d.ratio, op=OPS_PB[c.op] if c else pb.CONSTRAINT_OP_UNSPECIFIED, key=d.key,
                expected_queueing_delay_s=e.wait_s,
            ))
        return pb.ConstraintResourceVector(dimensions=dims, snapshot_time=_timestamp(view.time),
                                           window_s=self._settings.demand_window_s)


def _outcomes(plan: PlacementPlan) -> dict[str, int]:
    out = {"placed": 0, "queued": 0, "relaxed": 0, "unplaceable": len(plan.unplaceable)}
    for p in plan.placements:
        out["placed" if p.fits_now else "queued"] += 1
        out["relaxed"] += bool(p.relaxed)
    return out


def _response(plan: PlacementPlan, view: ClusterView) -> Any:
    return pb.PlaceTasksResponse(
        placements=[pb.TaskPlacement(task_id=p.task_id, node_ids=list(p.node_ids), expected_queueing_delay_s=p.expected_wait_s,
                                     crv_ratio=p.crv_ratio, unsatisfied_soft=list(p.unsatisfied_soft),
                                     relaxed_soft=list(p.relaxed), fits_now=p.fits_now, reason=p.reason)
                    for p in plan.placements],
        unplaceable=[u.task_id for u in plan.unplaceable],
        unplaceable_reasons=[pb.UnplaceableTask(task_id=u.task_id, reason=u.reason) for u in plan.unplaceable],
        snapshot_time=_timestamp(view.time),
    )


def placement_services(latest: Callable[[], ClusterSnapshot | None], clock: Clock, settings: Settings,
                       metrics: Metrics) -> list[ServiceImpl]:
    """The composition root's hookup: the service, or nothing when `placement.enabled` is false."""
    if not settings.placement.enabled:
        return []
    servicer: Any = ConstrainedPlacementServicer(latest, clock, settings.placement, metrics,
                                                 stale_after_s=settings.telemetry.stale_after_s)
    return [ServiceImpl(SERVICE, servicer, pb_grpc.add_ConstrainedPlacementServicer_to_server)]

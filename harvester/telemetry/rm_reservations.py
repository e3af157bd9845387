"""What Morpheus's reservation loop reads from the RM (the live `ReservationObserver`,
loop/morpheus_reservations.py):

- `list(queue)`: `GET /reservation/list?queue=<plan queue>` (numbers as strings, one element
  collapsed, `{}` when empty: rm_client decodes all of it) — every reservation of the plan,
  ours and everyone else's, as `Listed` entries (the definition as a `ReservationSpec`);
- `plan_capacity(queue)`: what the plan can hold — the plan queue's absoluteCapacity (percent,
  `/scheduler`) of the cluster's resources (`/cluster/metrics` totalMB / totalVirtualCores);
- `demands()`: each recurring job's running apps (`/apps?states=RUNNING,ACCEPTED`, named by the
  recurring-name rule) with what they hold (allocatedMB / allocatedVCores) and ask for (the
  `resourceRequests` asks for any host, `*`, × their count: per-host and per-rack asks of the
  same containers are not counted again), each app also on its own (`per_app`: its REST queue
  and submit time, `startedTime`). The REST `queue` of an app in a reservation stays the plan
  queue (scenarios/recurring-reservation), so apps are matched to reservations by job, and DRA
  counts only the apps in the plan queue submitted inside a reservation's window
  (decisions/reprovisioning.inside).
Any RM failure raises `TelemetryError`.
"""

from __future__ import annotations

from typing import Callable

from rm_client import App, AppQuery, ReservationDefinition, RMClient, RMError
from rm_client.wire.scheduler import iter_queues

from harvester.decisions.reprovisioning import AppDemand, JobDemand
from harvester.decisions.reservation_actions import ReservationSpec, SpecStage
from harvester.decisions.reservation_reconcile import Listed
from harvester.domain import Resources
from harvester.telemetry.source import TelemetryError


def spec_of(d: ReservationDefinition) -> ReservationSpec:
    return ReservationSpec(d.name, d.arrival_ms, d.deadline_ms,
                           tuple(SpecStage(Resources(r.capability.memory_mb, r.capability.vcores), r.num_containers,
                                           r.min_concurrency, r.duration_ms) for r in d.requests),
                           int(d.interpreter), d.recurrence_period_ms)


def pending_of(app: App) -> Resources:
    mem = vc = 0
    for r in app.resource_requests:
        if r.resource_name == "*" and r.capability is not None and r.num_containers > 0:
            mem += r.capability.memory_mb * r.num_containers
            vc += r.capability.vcores * r.num_containers
    return Resources(mem, vc)


class RMReservationView:
    """The RM side of the reservation loop's observer port (module docstring)."""

    def __init__(self, client: RMClient, normalize: Callable[[str], str] = lambda name: name) -> None:
        self._client = client
        self._normalize = normalize

    def list(self, queue: str) -> list[Listed]:
        try:
            infos = self._client.list_reservations(queue=queue, include_resource_allocations=False)
        except RMError as exc:
            raise TelemetryError(f"reservation list of {queue} failed: {exc}") from exc
        return [Listed(i.reservation_id, i.definition.name, spec_of(i.definition), i.user) for i in infos]

    def plan_capacity(self, queue: str) -> Resources:
        try:
            info = self._client.get_scheduler()
            metrics = self._client.get_cluster_metrics()
        except RMError as exc:
            raise TelemetryError(f"plan capacity of {queue} failed: {exc}") from exc
        if info.root is None:
            raise TelemetryError("the RM's scheduler answer has no root queue")
        for _, q in iter_queues(info.root):
            if q.path == queue:
                share = (q.absolute_capacity_percent if q.absolute_capacity_percent is not None else q.capacity_percent) / 100.0
                return Resources(int(metrics.total_mb * share), int(metrics.total_vcores * share))
        raise TelemetryError(f"the RM has no queue {queue}")

    def demands(self) -> dict[str, JobDemand]:
        try:
            apps = self._client.list_apps(AppQuery(states=("RUNNING", "ACCEPTED")))
        except RMError as exc:
            raise TelemetryError(f"RM apps poll failed: {exc}") from exc
        out: dict[str, JobDemand] = {}
        for app in apps:
            job = self._normalize(app.name or app.id)
            used = Resources(max(0, app.allocated_mb), max(0, app.allocated_vcores))
            cur = out.get(job)
            pending = pending_of(app)
            one = AppDemand(app.id, app.queue, app.started_time_ms / 1000.0, used, pending)
            out[job] = JobDemand(job, (app.id,), used, pending, (one,)) if cur is None else \
                JobDemand(job, cur.apps + (app.id,), cur.used + used, cur.pending + pending, cur.per_app + (one,))
        return out

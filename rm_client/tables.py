"""Human-readable rows for ``harvester rm nodes|apps|reservations|queues`` (pure: no I/O,
no printing; the CLI renders :class:`Table`).

Conventions: memory in GB with one decimal (MB / 1024), CPU "node" figures in physical
cores and "containers" figures in vcores (the RM's units, see :mod:`rm_client.units`),
percentages with one decimal, durations as ``1d2h``/``3m05s``, instants in UTC. A value the
RM does not report shows as ``-``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from rm_client.wire.apps import App
from rm_client.wire.nodes import Node
from rm_client.wire.reservations import ReservationInfo
from rm_client.wire.resources import Resource
from rm_client.wire.scheduler import SchedulerInfo, iter_queues

__all__ = ["Table", "apps_table", "duration", "gb", "nodes_table", "queues_table", "reservations_table"]

DASH = "-"


@dataclass(frozen=True, slots=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()  # lines printed under the table (what a column means, a warning)


def gb(mb: int | None) -> str:
    """MB -> GB, one decimal (8192 -> "8.0"); negative values (over-commit) keep their sign."""
    return DASH if mb is None else f"{mb / 1024:.1f}"


def pct(value: float | None) -> str:
    return DASH if value is None else f"{value:.1f}%"


def num(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def duration(ms: int | None) -> str:
    """``90_061_000`` -> ``1d1h``; ``185_000`` -> ``3m05s``; negative or None -> ``-``."""
    if ms is None or ms < 0:
        return DASH
    s = ms // 1000
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    if d:
        return f"{d}d{h}h"
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def _used_total(used: int | None, total: int | None) -> str:
    return f"{DASH if used is None else used}/{DASH if total is None else total}"


def _res(r: Resource | None, attr: str) -> int | None:
    return None if r is None else getattr(r, attr)


def nodes_table(nodes: Iterable[Node], *, now_ms: int | None = None) -> Table:
    """One row per node. HEALTH AGE (time since the last health report) needs ``now_ms``."""
    headers = ("NODE", "STATE", "CONTAINERS", "MEM USED/TOTAL GB", "VCORES USED/TOTAL", "MEM AVAIL GB",
               "VCORES AVAIL", "HOST CPU cores", "CONTAINERS CPU vcores", "HOST MEM USED GB", "HEALTH AGE")
    rows = []
    for n in sorted(nodes, key=lambda x: x.id):
        total_mb = _res(n.total_resource, "memory_mb")
        total_vc = _res(n.total_resource, "vcores")
        ru = n.resource_utilization
        rows.append((
            n.id,
            n.state,
            str(n.num_containers),
            f"{gb(n.used_memory_mb)}/{gb(total_mb)}",
            _used_total(n.used_vcores, total_vc),
            gb(_res(n.available_resource, "memory_mb") if n.available_resource else n.avail_memory_mb),
            str(_res(n.available_resource, "vcores") if n.available_resource else n.avail_vcores),
            num(ru.node_cpu_cores if ru else None),
            num(ru.containers_cpu_vcores if ru else None),
            gb(ru.node_physical_memory_mb if ru else None),
            duration(now_ms - n.last_health_update_ms) if now_ms is not None and n.last_health_update_ms else DASH,
        ))
    return Table(headers, tuple(rows))


def apps_table(apps: Iterable[App]) -> Table:
    """One row per app, newest first. Finished apps report -1 allocations: shown as ``-``."""
    headers = ("APP ID", "NAME", "USER", "QUEUE", "STATE", "FINAL STATUS", "PROGRESS", "CONTAINERS",
               "MEM GB", "VCORES", "ELAPSED")

    def alloc(v: int) -> int | None:
        return None if v < 0 else v

    rows = []
    for a in sorted(apps, key=lambda x: x.started_time_ms, reverse=True):
        containers = alloc(a.running_containers)
        vcores = alloc(a.allocated_vcores)
        rows.append((
            a.id, a.name, a.user, a.queue, a.state, a.final_status, pct(a.progress_percent),
            DASH if containers is None else str(containers),
            gb(alloc(a.allocated_mb)),
            DASH if vcores is None else str(vcores),
            duration(a.elapsed_time_ms),
        ))
    return Table(headers, tuple(rows))


def _requests_summary(r: ReservationInfo) -> str:
    return "; ".join(
        f"{q.num_containers}x<{gb(q.capability.memory_mb)} GB,{q.capability.vcores}vc> "
        f"(gang {q.min_concurrency}) {duration(q.duration_ms)}"
        for q in r.definition.requests
    )


def _status(r: ReservationInfo, now_ms: int) -> str:
    d = r.definition
    allocated = any(a.start_ms <= now_ms < a.end_ms for a in r.allocation_windows(now_ms))
    if d.recurrence_period_ms > 0:
        return "allocated now" if allocated else f"every {duration(d.recurrence_period_ms)}"
    if now_ms < d.arrival_ms:
        return f"starts in {duration(d.arrival_ms - now_ms)}"
    if now_ms >= d.deadline_ms:
        return "ended"
    return "allocated now" if allocated else "window open"


def reservations_table(reservations: Iterable[ReservationInfo], *, now_ms: int) -> Table:
    """One row per reservation, by arrival. ``now_ms`` places each against the clock."""
    headers = ("RESERVATION ID", "NAME", "USER", "INTERPRETER", "ARRIVAL UTC", "DEADLINE UTC", "RECURRENCE",
               "REQUESTS", "STATUS")
    rows = []
    for r in sorted(reservations, key=lambda x: x.definition.arrival_ms):
        d = r.definition
        rows.append((
            r.reservation_id, d.name or DASH, r.user, d.interpreter.name, utc(d.arrival_ms), utc(d.deadline_ms),
            duration(d.recurrence_period_ms) if d.recurrence_period_ms else "once",
            _requests_summary(r), _status(r, now_ms),
        ))
    return Table(headers, tuple(rows))


QUEUE_NOTES = (
    "CAP/MAX OF PARENT: the configured share of the parent queue; USED OF CAP: the RM's usedCapacity, "
    "% of the queue's own capacity (an elastic queue above its capacity shows more than 100 %);",
    "CAP/USED OF CLUSTER: absoluteCapacity / absoluteUsedCapacity, % of the cluster's CURRENT capacity "
    "(the sum of the nodes' capacities, which node resource updates change); the root is the cluster.",
)


def queues_table(info: SchedulerInfo) -> Table:
    """The queue tree, children indented under their parent (depth-first), every percentage
    labelled with what it is of (`QUEUE_NOTES`). The RM reports the root's usedCapacity only (of
    the cluster): it fills the root's cluster columns. Above 100 % of the cluster, a note says
    the nodes hold more than their capacity (updated below their allocation, over-committed)."""
    headers = ("QUEUE", "KIND", "STATE", "CAP OF PARENT", "USED OF CAP", "MAX OF PARENT", "CAP OF CLUSTER",
               "USED OF CLUSTER", "APPS", "MEM USED GB", "VCORES USED")
    if info.root is None:
        return Table(headers, ())
    rows = []
    for depth, q in iter_queues(info.root):
        root = depth == 0
        abs_cap = 100.0 if root and q.absolute_capacity_percent is None else q.absolute_capacity_percent
        abs_used = q.used_capacity_percent if root and q.absolute_used_capacity_percent is None \
            else q.absolute_used_capacity_percent
        rows.append((
            "  " * depth + q.name,
            "reservation" if q.is_reservation_queue else q.kind,
            q.state or DASH,
            pct(q.capacity_percent), pct(q.used_capacity_percent), pct(q.max_capacity_percent),
            pct(abs_cap), pct(abs_used),
            DASH if q.num_applications is None else str(q.num_applications),
            gb(_res(q.resources_used, "memory_mb")),
            DASH if q.resources_used is None else str(q.resources_used.vcores),
        ))
    notes = QUEUE_NOTES
    used = info.root.used_capacity_percent
    if used is not None and used > 100.0:
        notes += (f"the queues use {used:.1f} % of the cluster's current capacity: nodes were updated below their "
                  "allocation and run over-committed (see `harvester rm nodes`, negative AVAIL)",)
    return Table(headers, tuple(rows), notes)

"""Reservation list and NodeManager answers.

Reservation list (captures/reservation-list*): Jettison "mapped" JSON — every number a
string, a single reservation / allocation / request collapses to an object, no reservation
gives `{}`; recurring allocations are offsets within the period; `recurrence-expression` is
"0" when none was given; `resource-allocations` only with include-resource-allocations=true.
A recurring allocation that crosses the period end is listed folded into the period, with the
time between its two parts as a zero-resource range (a live 3.3.6: a 10-minute allocation from
hh:55 listed [0, 5) and [55, 60) min at 1024 MB and [5, 55) at <0, 0>: `listed_offsets`).

NodeManager (captures/nm1-*, scenario timelines): `/ws/v1/node/containers` lists the NM's
containers (RUNNING with exitCode -1000, then DONE with the exit code and diagnostics for ~2 s;
an empty list is `{"containers":{}}`), `/ws/v1/node/info` describes the NM.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harvester.domain import Resources

from harvester.emulator.render_cluster import HADOOP_BUILD_VERSION, RM_BUILD_VERSION
from harvester.emulator.render_common import ms, res
from harvester.emulator.plan_load import Interval
from harvester.emulator.reservations import Reservation
from rm_client.wire.reservations import (
    Interpreter,
    ReservationDefinition,
    ReservationInfo,
    ReservationRequest,
    ResourceAllocation,
    encode_reservation_list,
)

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

AM_LOGS = ["launch_container.sh", "prelaunch.err", "directory.info", "prelaunch.out", "AppMaster.stdout",
           "AppMaster.stderr"]
TASK_LOGS = ["launch_container.sh", "prelaunch.err", "stderr", "directory.info", "prelaunch.out", "stdout"]


def reservation(r: Reservation, with_allocations: bool) -> ReservationInfo:
    d = r.definition
    definition = ReservationDefinition(
        arrival_ms=d.arrival, deadline_ms=d.deadline, interpreter=Interpreter(d.interpreter), name=d.name,
        priority=d.priority, recurrence_period_ms=d.period,
        requests=tuple(ReservationRequest(res(s.capability), s.num_containers, s.concurrency, s.duration_ms)
                       for s in d.stages))
    allocations = tuple(ResourceAllocation(res(iv.resources), iv.start, iv.end)
                        for iv in listed_offsets(r.intervals, d.period)) if with_allocations else None
    return ReservationInfo(r.reservation_id, r.accepted_at_ms, r.user, definition, allocations)


def listed_offsets(intervals: Sequence[Interval], period: int) -> list[Interval]:
    """The intervals as the list shows them, by start. A recurring reservation's offsets that run
    past the period end are folded into [0, period) and the gap the fold opens between the two
    parts is listed at zero resources (module docstring); other intervals are listed as held."""
    ordered = sorted(intervals, key=lambda iv: iv.start)
    if period <= 0 or not any(iv.end > period for iv in ordered):
        return ordered
    folded: list[Interval] = []
    for iv in ordered:
        if iv.end > period:
            folded += [Interval(iv.start, period, iv.resources), Interval(0, iv.end - period, iv.resources)]
        else:
            folded.append(iv)
    folded.sort(key=lambda iv: iv.start)
    head_end = max(iv.end for iv in folded if iv.start < ordered[0].start)
    tail_start = ordered[0].start
    gap = [Interval(head_end, tail_start, Resources(0, 0))] if head_end < tail_start else []
    return sorted(folded + gap, key=lambda iv: iv.start)


def reservation_list(items: list[Reservation], with_allocations: bool) -> dict[str, Any]:
    return encode_reservation_list([reservation(r, with_allocations) for r in items])


def nm_containers(emu: Emulator, node: int) -> dict[str, Any]:
    http = emu.http_addresses[node]
    node_id = emu.model.node_ids[node]
    # the NM knows a container once it was asked to start it (the AM's start, or the RM's for an AM)
    recs = [emu.containers[c.container_id] for c in emu.model.containers_on(node)
            if c.container_id in emu.containers and emu.containers[c.container_id].acquired]
    recs += [emu.containers[c] for c in emu.nm_done.get(node, [])]
    recs.sort(key=lambda r: r.container_id)
    if not recs:
        return {"containers": {}}
    items = []
    for r in recs:
        user = emu.apps[r.app_id].spec.user
        localizing = r.live and r.running_at is None
        item = {
            "id": r.container_id, "state": ("LOCALIZING" if localizing else "RUNNING") if r.live else "DONE",
            "exitCode": -1000 if r.live else r.nm_exit_code, "diagnostics": "" if r.live else r.nm_diagnostics,
            "user": user, "totalMemoryNeededMB": r.resources.memory_mb, "totalVCoresNeeded": r.resources.vcores,
            "executionType": "GUARANTEED",
            "containerLogsLink": f"http://{http}/node/containerlogs/{r.container_id}/{user}",
            "nodeId": node_id}
        if not localizing:  # the log files appear once the container launched
            item["containerLogFiles"] = AM_LOGS if r.is_am else TASK_LOGS
        items.append(item)
    return {"containers": {"container": items}}


def nm_info(emu: Emulator, node: int) -> dict[str, Any]:
    m = emu.model
    return {"nodeInfo": {
        "healthReport": "", "totalVmemAllocatedContainersMB": int(m.total_mem[node] * 2.1),
        "totalPmemAllocatedContainersMB": int(m.total_mem[node]),
        "totalVCoresAllocatedContainers": int(m.total_vcores[node]), "vmemCheckEnabled": False,
        "pmemCheckEnabled": False, "lastNodeUpdateTime": ms(emu.now), "resourceTypes": "memory-mb (unit=Mi), vcores",
        "nodeHealthy": True, "nodeManagerVersion": "3.3.6",
        "nodeManagerBuildVersion": RM_BUILD_VERSION,
        "nodeManagerVersionBuiltOn": "2023-06-18T08:31Z", "hadoopVersion": "3.3.6",
        "hadoopBuildVersion": HADOOP_BUILD_VERSION, "hadoopVersionBuiltOn": "2023-06-18T08:21Z",
        "id": m.node_ids[node], "nodeHostName": m.hostnames[node], "nmStartupTime": int(emu.registered_ms[node]),
    }}


__all__ = ["nm_containers", "nm_info", "reservation_list"]

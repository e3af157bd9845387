"""Reservation list and NodeManager answers.

Reservation list (captures/reservation-list*): Jettison "mapped" JSON — every number a
string, a single reservation / allocation / request collapses to an object, no reservation
gives `{}`; recurring allocations are offsets within the period; `recurrence-expression` is
"0" when none was given; `resource-allocations` only with include-resource-allocations=true.

NodeManager (captures/nm1-*, scenario timelines): `/ws/v1/node/containers` lists the NM's
containers (RUNNING with exitCode -1000, then DONE with the exit code and diagnostics for ~2 s;
an empty list is `{"containers":{}}`), `/ws/v1/node/info` describes the NM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harvester.emulator.jsonfmt import collapse, mapped
from harvester.emulator.render_common import mapped_resource, ms
from harvester.emulator.reservations import Reservation

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

AM_LOGS = ["launch_container.sh", "prelaunch.err", "directory.info", "prelaunch.out", "AppMaster.stdout",
           "AppMaster.stderr"]
TASK_LOGS = ["launch_container.sh", "prelaunch.err", "stderr", "directory.info", "prelaunch.out", "stdout"]


def reservation(res: Reservation, with_allocations: bool) -> dict[str, Any]:
    d = res.definition
    out: dict[str, Any] = {"acceptance-time": str(res.accepted_at_ms), "user": res.user}
    if with_allocations:
        out["resource-allocations"] = collapse([
            {"resource": mapped_resource(iv.resources), "startTime": str(iv.start), "endTime": str(iv.end)}
            for iv in sorted(res.intervals, key=lambda iv: iv.start)])
    requests = [{"capability": mapped_resource(s.capability), "min-concurrency": str(s.concurrency),
                 "num-containers": str(s.num_containers), "duration": str(s.duration_ms)} for s in d.stages]
    out["reservation-id"] = res.reservation_id
    out["reservation-definition"] = {
        "arrival": str(d.arrival), "deadline": str(d.deadline),
        "reservation-requests": {"reservation-request-interpreter": str(d.interpreter),
                                 "reservation-request": collapse(requests)},
        "reservation-name": d.name, "priority": str(d.priority), "recurrence-expression": d.recurrence,
    }
    return out


def reservation_list(items: list[Reservation], with_allocations: bool) -> dict[str, Any]:
    if not items:
        return {}
    return {"reservations": collapse([reservation(r, with_allocations) for r in items])}


def nm_containers(emu: Emulator, node: int) -> dict[str, Any]:
    http = emu.http_addresses[node]
    node_id = emu.model.node_ids[node]
    recs = [emu.containers[c.container_id] for c in emu.model.containers_on(node)
            if c.container_id in emu.containers]
    recs += [emu.containers[c] for c in emu.nm_done.get(node, [])]
    recs.sort(key=lambda r: r.container_id)
    if not recs:
        return {"containers": {}}
    items = []
    for r in recs:
        user = emu.apps[r.app_id].spec.user
        localizing = r.live and emu.now - r.started_at < emu.timing.worker_launch_s
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
    from harvester.emulator.render_cluster import CLUSTER_INFO_STATIC

    m = emu.model
    return {"nodeInfo": {
        "healthReport": "", "totalVmemAllocatedContainersMB": int(m.total_mem[node] * 2.1),
        "totalPmemAllocatedContainersMB": int(m.total_mem[node]),
        "totalVCoresAllocatedContainers": int(m.total_vcores[node]), "vmemCheckEnabled": False,
        "pmemCheckEnabled": False, "lastNodeUpdateTime": ms(emu.now), "resourceTypes": "memory-mb (unit=Mi), vcores",
        "nodeHealthy": True, "nodeManagerVersion": "3.3.6",
        "nodeManagerBuildVersion": CLUSTER_INFO_STATIC["resourceManagerBuildVersion"],
        "nodeManagerVersionBuiltOn": "2023-06-18T08:31Z", "hadoopVersion": "3.3.6",
        "hadoopBuildVersion": CLUSTER_INFO_STATIC["hadoopBuildVersion"], "hadoopVersionBuiltOn": "2023-06-18T08:21Z",
        "id": m.node_ids[node], "nodeHostName": m.hostnames[node], "nmStartupTime": int(emu.registered_ms[node]),
    }}


__all__ = ["mapped", "nm_containers", "nm_info", "reservation_list"]

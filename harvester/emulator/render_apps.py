"""Application answers: apps, one app, attempts, containers, state/queue/priority/timeouts.

Shapes follow the captures exactly, including which keys exist in which state:
`trackingUrl` only once the AM registered, or once an app that got an attempt ended; `amContainerLogs`
/ `amHostHttpAddress` only with an AM container; `resourceRequests` only while asks are
outstanding; `resourceInfo` only while the app is alive in the scheduler;
`appNodeLabelExpression` only for REST-submitted apps; `amRPCAddress` only while a registered
MapReduce AM runs; `resourceSecondsMap` is a duplicate-key `entry` map (`{}` for an app that
never got an attempt, or ended without using anything); finished apps report -1 for
allocated/reserved/running. The attempt (one) and container answers are "mapped" JSON:
strings everywhere, a single container collapses to an object, none gives `{}`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from harvester.domain import Resources
from harvester.emulator.jsonfmt import DupKeys, jfloat, mapped
from harvester.emulator.lifecycle import APP_TERMINAL, AppState
from harvester.emulator.records import AmKind, App, Attempt, ContainerRecord
from harvester.emulator.render_common import ms, res, zero

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

NOT_READY = (AppState.NEW, AppState.NEW_SAVING, AppState.SUBMITTED, AppState.ACCEPTED)
DESELECTABLE = {"resourceRequests", "timeouts", "appNodeLabelExpression", "amNodeLabelExpression", "resourceInfo"}


def _entries(pairs: list[tuple[str, int]]) -> Any:
    return DupKeys(("entry", {"key": k, "value": str(v)}) for k, v in pairs)


def _seconds(emu: Emulator, app: App) -> tuple[int, int]:
    mem, vc = app.mem_seconds, app.vcore_seconds
    for rec in emu.live_containers(app):
        took = emu.now - rec.started_at
        mem += rec.resources.memory_mb * took
        vc += rec.resources.vcores * took
    return int(mem), int(vc)


def timeout_info(emu: Emulator, app: App) -> dict[str, Any]:
    if app.lifetime_expiry_ms is None:
        return {"type": "LIFETIME", "expiryTime": "UNLIMITED", "remainingTimeInSeconds": -1}
    expiry = datetime.fromtimestamp(app.lifetime_expiry_ms / 1000, tz=timezone.utc)
    text = expiry.strftime("%Y-%m-%dT%H:%M:%S.") + f"{app.lifetime_expiry_ms % 1000:03d}+0000"
    remaining = 0 if app.state in APP_TERMINAL else max(0, (app.lifetime_expiry_ms - emu.now_ms()) // 1000)
    return {"type": "LIFETIME", "expiryTime": text, "remainingTimeInSeconds": remaining}


def app_info(emu: Emulator, app: App, deselect: frozenset[str] = frozenset()) -> dict[str, Any]:
    state = app.state
    att = app.attempt
    rm = emu.config.rm_web_address
    terminal = state in APP_TERMINAL
    # the tracking URL exists once the app runs or, for an app that got an attempt, once it ended
    ready = state not in NOT_READY and att is not None
    d: dict[str, Any] = {
        "id": app.app_id, "user": app.spec.user, "name": app.spec.name, "queue": app.queue, "state": state.value,
        "finalStatus": app.final_status,
        "progress": 100.0 if state in (AppState.FINISHED, AppState.KILLED) else 0.0,
        "trackingUI": "UNASSIGNED" if not ready else ("History" if app.finished_at else "ApplicationMaster"),
    }
    if ready:
        d["trackingUrl"] = (f"http://{rm}/cluster/app/{app.app_id}" if app.finished_at
                            else f"http://{rm}/proxy/{app.app_id}/")
    started, finished = ms(app.submitted_at), ms(app.finished_at) if app.finished_at else 0
    d.update({
        "diagnostics": app.diagnostics, "clusterId": emu.cluster_ts_ms, "applicationType": app.spec.app_type,
        "applicationTags": ",".join(app.spec.tags), "priority": app.priority, "startedTime": started,
        "launchTime": ms(app.launched_at) if app.launched_at else 0, "finishedTime": finished,
        "elapsedTime": (finished if finished else ms(emu.now)) - started,
    })
    node = None
    if att is not None and att.am_container_id is not None and att.am_node is not None:
        node = att.am_node
        http = emu.http_addresses[node]
        d["amContainerLogs"] = f"http://{http}/node/containerlogs/{att.am_container_id}/{app.spec.user}"
        d["amHostHttpAddress"] = http
        if app.spec.kind is AmKind.MAPREDUCE and app.registered and not terminal:
            d["amRPCAddress"] = f"{emu.model.hostnames[node]}:45555"
    d["masterNodeId"] = emu.model.node_ids[node] if node is not None else ""
    live = emu.live_containers(app)
    used = sum((r.resources for r in live), Resources(0, 0))
    cluster = emu.cluster_resource()
    mem_s, vc_s = _seconds(emu, app)
    if terminal:
        d.update({"allocatedMB": -1, "allocatedVCores": -1, "reservedMB": -1, "reservedVCores": -1,
                  "runningContainers": -1})
    else:
        d.update({"allocatedMB": used.memory_mb, "allocatedVCores": used.vcores, "reservedMB": 0, "reservedVCores": 0,
                  "runningContainers": len(live)})
    usage = 0.0 if terminal or cluster.memory_mb <= 0 else jfloat(100.0 * used.memory_mb / cluster.memory_mb)
    d.update({
        "memorySeconds": mem_s, "vcoreSeconds": vc_s, "queueUsagePercentage": usage, "clusterUsagePercentage": usage,
        # live apps report the scheduler's map (zeros included); ended ones only what they used
        "resourceSecondsMap": (_entries([("memory-mb", mem_s), ("vcores", vc_s)])
                               if att is not None and (not terminal or mem_s or vc_s) else {}),
        "preemptedResourceMB": app.preempted_mb, "preemptedResourceVCores": app.preempted_vcores,
        "numNonAMContainerPreempted": app.preempted_non_am, "numAMContainerPreempted": app.preempted_am,
        "preemptedMemorySeconds": int(app.preempted_mem_seconds),
        "preemptedVcoreSeconds": int(app.preempted_vcore_seconds),
        "preemptedResourceSecondsMap": (_entries([("memory-mb", int(app.preempted_mem_seconds)),
                                                  ("vcores", int(app.preempted_vcore_seconds))])
                                        if app.preempted_mb else {}),
    })
    if app.asks and not terminal and "resourceRequests" not in deselect:
        mr = app.spec.kind is AmKind.MAPREDUCE
        d["resourceRequests"] = [{
            "priority": a.priority, "allocationRequestId": a.allocation_request_id, "resourceName": "*",
            "capability": res(a.resources), "numContainers": a.count, "relaxLocality": True,
            "nodeLabelExpression": "",
            "executionTypeRequest": {"executionType": "GUARANTEED", "enforceExecutionType": mr and not a.is_am}}
            for a in app.asks]
    d["logAggregationStatus"] = emu.config.log_aggregation_status
    d["unmanagedApplication"] = False
    if app.spec.rest_submitted and "appNodeLabelExpression" not in deselect:
        d["appNodeLabelExpression"] = ""
    if "amNodeLabelExpression" not in deselect:
        d["amNodeLabelExpression"] = ""
    if not terminal and att is not None and "resourceInfo" not in deselect:
        pending = Resources(sum(a.resources.memory_mb * a.count for a in app.asks),
                            sum(a.resources.vcores * a.count for a in app.asks))
        d["resourceInfo"] = {"resourceUsagesByPartition": [{
            "partitionName": "", "used": res(used), "reserved": zero(), "pending": res(pending),
            "amUsed": res(app.spec.am), "amLimit": zero(), "userAmLimit": zero()}]}
    if "timeouts" not in deselect:
        d["timeouts"] = {"timeout": [timeout_info(emu, app)]}
    return d


def attempts(emu: Emulator, app: App) -> dict[str, Any]:
    if not app.attempts:
        return {"appAttempts": {}}
    out = []
    for att in app.attempts:
        item: dict[str, Any] = {"id": att.number, "startTime": ms(att.started_at),
                                "finishedTime": ms(att.finished_at) if att.finished_at else 0}
        if att.am_container_id is not None and att.am_node is not None:
            http = emu.http_addresses[att.am_node]
            item.update({"containerId": att.am_container_id, "nodeHttpAddress": http,
                         "nodeId": emu.model.node_ids[att.am_node],
                         "logsLink": f"http://{http}/node/containerlogs/{att.am_container_id}/{app.spec.user}",
                         "blacklistedNodes": "", "nodesBlacklistedBySystem": "", "appAttemptId": att.attempt_id,
                         "exportPorts": "null"})
        else:
            item.update({"containerId": "", "nodeHttpAddress": "", "nodeId": "", "logsLink": "",
                         "blacklistedNodes": "", "appAttemptId": att.attempt_id, "exportPorts": ""})
        out.append(item)
    return {"appAttempts": {"appAttempt": out}}


def attempt_one(emu: Emulator, app: App, att: Attempt) -> dict[str, Any]:
    rm = emu.config.rm_web_address
    d: dict[str, Any] = {
        "appAttemptId": att.attempt_id,
        "host": f"{emu.model.hostnames[att.am_node]}/127.0.0.1" if app.registered and att.am_node is not None else "N/A",
        "rpcPort": 45555 if app.spec.kind is AmKind.MAPREDUCE and app.registered else -1,
        "trackingUrl": f"http://{rm}/proxy/{app.app_id}/", "originalTrackingUrl": "N/A",
        "diagnosticsInfo": att.diagnostics, "appAttemptState": att.lifecycle.state.value,
    }
    if att.am_container_id is not None:
        d["amContainerId"] = att.am_container_id
    d["startedTime"] = ms(att.started_at)
    d["finishedTime"] = ms(att.finished_at) if att.finished_at else 0
    return mapped(d)


def container_info(emu: Emulator, app: App, rec: ContainerRecord) -> dict[str, Any]:
    http = emu.http_addresses[rec.node]
    node_id = emu.model.node_ids[rec.node]
    return mapped({
        "containerId": rec.container_id, "allocatedMB": rec.resources.memory_mb,
        "allocatedVCores": rec.resources.vcores, "assignedNodeId": node_id, "priority": rec.priority,
        "startedTime": ms(rec.started_at), "finishedTime": ms(rec.finished_at) if rec.finished_at else 0,
        "elapsedTime": ms((rec.finished_at or emu.now) - rec.started_at),
        "logUrl": f"http://{http}/node/containerlogs/{rec.container_id}/{app.spec.user}",
        "containerExitStatus": 0 if rec.live else rec.am_exit_status,
        "containerState": "RUNNING" if rec.live else "COMPLETE", "nodeHttpAddress": f"http://{http}",
        "nodeId": node_id,
        "allocatedResources": {"entry": [{"key": "memory-mb", "value": rec.resources.memory_mb},
                                         {"key": "vcores", "value": rec.resources.vcores}]},
        "exposedPorts": "",
    })


def containers(emu: Emulator, app: App, att: Attempt) -> dict[str, Any]:
    """Live containers of the attempt (the RM drops ended ones from this list at once)."""
    if att is not app.attempt:
        return {}
    items = [container_info(emu, app, rec) for rec in emu.live_containers(app)]
    if not items:
        return {}
    return {"container": items[0] if len(items) == 1 else items}

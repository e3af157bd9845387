"""Application answers: apps, one app, attempts, containers, timeouts (captures/apps-*).

Written from rm_client.wire's field tables (render_common.py); which keys exist in which state
follows the captures: `trackingUrl` only once the AM registered, or once an app that got an
attempt ended; `amContainerLogs` / `amHostHttpAddress` only with an AM container;
`resourceRequests` only while asks are outstanding; `resourceInfo` only while the app is alive
in the scheduler; `appNodeLabelExpression` only for REST-submitted apps; `amRPCAddress` only
while a registered MapReduce AM runs; `resourceSecondsMap` is a repeated-key `entry` map (`{}`
for an app that never got an attempt, or ended without using anything); apps that ended after
reaching the scheduler report -1 for allocated/reserved/running (0 if rejected before). The
attempt (one) and container answers are the "mapped" form: strings everywhere, a single
container collapses to an object, none gives `{}`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from harvester.domain import Resources
from harvester.emulator.lifecycle import APP_TERMINAL, AppState
from harvester.emulator.records import AmKind, App, Attempt, ContainerRecord
from harvester.emulator.render_common import ZERO, java_float, ms, res
from rm_client.wire.apps import APP, AppTimeout, ExecutionTypeRequest, ResourceRequest
from rm_client.wire.apps import App as WireApp
from rm_client.wire.attempts import (
    AppAttempt,
    AppAttemptDetail,
    Container,
    encode_app_attempt,
    encode_app_attempts,
    encode_container,
    encode_containers,
)
from rm_client.wire.resources import PartitionResourceUsage

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

NOT_READY = (AppState.NEW, AppState.NEW_SAVING, AppState.SUBMITTED, AppState.ACCEPTED)
DESELECTABLE = {"resourceRequests", "timeouts", "appNodeLabelExpression", "amNodeLabelExpression", "resourceInfo"}


def _seconds(emu: Emulator, app: App) -> tuple[int, int]:
    mem, vc = app.mem_seconds, app.vcore_seconds
    for rec in emu.live_containers(app):
        took = emu.now - rec.started_at
        mem += rec.resources.memory_mb * took
        vc += rec.resources.vcores * took
    return int(mem), int(vc)


def timeout(emu: Emulator, app: App) -> AppTimeout:
    if app.lifetime_expiry_ms is None:
        return AppTimeout("LIFETIME", "UNLIMITED", -1)
    expiry = datetime.fromtimestamp(app.lifetime_expiry_ms / 1000, tz=timezone.utc)
    text = expiry.strftime("%Y-%m-%dT%H:%M:%S.") + f"{app.lifetime_expiry_ms % 1000:03d}+0000"
    remaining = 0 if app.state in APP_TERMINAL else max(0, (app.lifetime_expiry_ms - emu.now_ms()) // 1000)
    return AppTimeout("LIFETIME", text, remaining)


def app_model(emu: Emulator, app: App, deselect: frozenset[str] = frozenset()) -> WireApp:
    state, att = app.state, app.attempt
    rm = emu.config.rm_web_address
    terminal = state in APP_TERMINAL
    ready = state not in NOT_READY and att is not None  # the tracking URL exists
    started, finished = ms(app.submitted_at), ms(app.finished_at) if app.finished_at else 0
    node = att.am_node if att is not None and att.am_container_id is not None else None
    http = emu.http_addresses[node] if node is not None else None
    live = emu.live_containers(app)
    used = sum((r.resources for r in live), Resources(0, 0))
    cluster = emu.cluster_resource()
    mem_s, vc_s = _seconds(emu, app)
    gone = -1 if att is not None else 0  # ended after reaching the scheduler / rejected before
    usage = 0.0 if terminal or cluster.memory_mb <= 0 else java_float(100.0 * used.memory_mb / cluster.memory_mb)
    mr = app.spec.kind is AmKind.MAPREDUCE
    asks = () if not app.asks or terminal or "resourceRequests" in deselect else tuple(
        ResourceRequest(priority=a.priority, allocation_request_id=a.allocation_request_id, resource_name="*",
                        capability=res(a.resources), num_containers=a.count, relax_locality=True,
                        node_label_expression="",
                        execution_type_request=ExecutionTypeRequest("GUARANTEED", mr and not a.is_am))
        for a in app.asks)
    partition = None
    if not terminal and att is not None and "resourceInfo" not in deselect:
        pending = Resources(sum(a.resources.memory_mb * a.count for a in app.asks),
                            sum(a.resources.vcores * a.count for a in app.asks))
        partition = (PartitionResourceUsage("", res(used), ZERO, res(pending), res(app.am_resource), ZERO, ZERO),)
    return WireApp(
        id=app.app_id, user=app.spec.user, name=app.spec.name, queue=app.queue, state=state.value,
        final_status=app.final_status,
        progress_percent=100.0 if state in (AppState.FINISHED, AppState.KILLED) else 0.0,
        tracking_ui="UNASSIGNED" if not ready else ("History" if app.finished_at else "ApplicationMaster"),
        tracking_url=None if not ready else (f"http://{rm}/cluster/app/{app.app_id}" if app.finished_at
                                             else f"http://{rm}/proxy/{app.app_id}/"),
        diagnostics=app.diagnostics, cluster_id=emu.cluster_ts_ms, application_type=app.spec.app_type,
        application_tags=tuple(app.spec.tags), priority=app.priority, started_time_ms=started,
        launch_time_ms=ms(app.launched_at) if app.launched_at else 0, finished_time_ms=finished,
        elapsed_time_ms=(finished if finished else ms(emu.now)) - started,
        am_container_logs=f"http://{http}/node/containerlogs/{att.am_container_id}/{app.spec.user}" if http else None,
        am_host_http_address=http,
        am_rpc_address=f"{emu.model.hostnames[node]}:45555" if node is not None and mr and app.registered
        and not terminal else None,
        master_node_id=emu.model.node_ids[node] if node is not None else "",
        allocated_mb=gone if terminal else used.memory_mb, allocated_vcores=gone if terminal else used.vcores,
        reserved_mb=gone if terminal else 0, reserved_vcores=gone if terminal else 0,
        running_containers=gone if terminal else len(live),
        memory_seconds=mem_s, vcore_seconds=vc_s, queue_usage_percent=usage, cluster_usage_percent=usage,
        # live apps report the scheduler's map (zeros included); ended ones only what they used
        resource_seconds=(("memory-mb", mem_s), ("vcores", vc_s))
        if att is not None and (not terminal or mem_s or vc_s) else (),
        preempted_resource_mb=app.preempted_mb, preempted_resource_vcores=app.preempted_vcores,
        num_non_am_container_preempted=app.preempted_non_am, num_am_container_preempted=app.preempted_am,
        preempted_memory_seconds=int(app.preempted_mem_seconds),
        preempted_vcore_seconds=int(app.preempted_vcore_seconds),
        preempted_resource_seconds=(("memory-mb", int(app.preempted_mem_seconds)),
                                    ("vcores", int(app.preempted_vcore_seconds))) if app.preempted_mb else (),
        resource_requests=asks, log_aggregation_status=emu.config.log_aggregation_status,
        unmanaged_application=False,
        app_node_label_expression="" if app.spec.rest_submitted and "appNodeLabelExpression" not in deselect else None,
        am_node_label_expression="" if "amNodeLabelExpression" not in deselect else None,
        partition_usage=partition,
        timeouts=(timeout(emu, app),) if "timeouts" not in deselect else (),
    )


def app_info(emu: Emulator, app: App, deselect: frozenset[str] = frozenset()) -> dict[str, Any]:
    doc = APP.encode(app_model(emu, app, deselect))
    if "timeouts" in deselect:
        doc.pop("timeouts", None)
    return doc


def attempts(emu: Emulator, app: App) -> dict[str, Any]:
    out = []
    for att in app.attempts:
        started, finished = ms(att.started_at), ms(att.finished_at) if att.finished_at else 0
        if att.am_container_id is not None and att.am_node is not None:
            http = emu.http_addresses[att.am_node]
            out.append(AppAttempt(att.number, att.attempt_id, started, finished, att.am_container_id,
                                  emu.model.node_ids[att.am_node], http,
                                  f"http://{http}/node/containerlogs/{att.am_container_id}/{app.spec.user}",
                                  blacklisted_nodes="", nodes_blacklisted_by_system="", export_ports="null"))
        else:
            out.append(AppAttempt(att.number, att.attempt_id, started, finished, "", "", "", "",
                                  blacklisted_nodes="", export_ports=""))
    return encode_app_attempts(out)


def attempt_one(emu: Emulator, app: App, att: Attempt) -> dict[str, Any]:
    rm = emu.config.rm_web_address
    registered = app.registered and att.am_node is not None
    return encode_app_attempt(AppAttemptDetail(
        attempt_id=att.attempt_id, state=att.lifecycle.state.value, am_container_id=att.am_container_id or "",
        started_time_ms=ms(att.started_at), finished_time_ms=ms(att.finished_at) if att.finished_at else 0,
        host=f"{emu.model.hostnames[att.am_node]}/127.0.0.1" if registered and att.am_node is not None else "N/A",
        rpc_port=45555 if app.spec.kind is AmKind.MAPREDUCE and app.registered else -1,
        tracking_url=f"http://{rm}/proxy/{app.app_id}/", original_tracking_url="N/A",
        diagnostics=att.diagnostics))


def container_model(emu: Emulator, app: App, rec: ContainerRecord) -> Container:
    http = emu.http_addresses[rec.node]
    node_id = emu.model.node_ids[rec.node]
    return Container(
        container_id=rec.container_id, allocated_mb=rec.resources.memory_mb, allocated_vcores=rec.resources.vcores,
        assigned_node_id=node_id, priority=rec.priority, started_time_ms=ms(rec.started_at),
        finished_time_ms=ms(rec.finished_at) if rec.finished_at else 0,
        elapsed_time_ms=ms((rec.finished_at or emu.now) - rec.started_at),
        log_url=f"http://{http}/node/containerlogs/{rec.container_id}/{app.spec.user}",
        exit_status=0 if rec.live else (rec.am_exit_status or 0), state="RUNNING" if rec.live else "COMPLETE",
        node_http_address=f"http://{http}", node_id=node_id,
        allocated_resources=(("memory-mb", rec.resources.memory_mb), ("vcores", rec.resources.vcores)),
        exposed_ports="")


def container_info(emu: Emulator, app: App, rec: ContainerRecord) -> dict[str, Any]:
    return encode_container(container_model(emu, app, rec))


def containers(emu: Emulator, app: App, att: Attempt) -> dict[str, Any]:
    """Live containers of the attempt (the RM drops ended ones from this list at once)."""
    if att is not app.attempt:
        return {}
    return encode_containers([container_model(emu, app, rec) for rec in emu.live_containers(app)])

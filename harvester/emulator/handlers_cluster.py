"""Handlers for cluster, node, label, scheduler, reservation and signal endpoints.

Answers and errors are the recorded ones (captures/*; see errors.py for the two error forms).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from harvester.emulator import errors
from harvester.emulator.bodies import as_int, ensure_object, parse_body
from harvester.emulator.render_cluster import (
    NodeRenderer,
    app_statistics,
    cluster_info,
    cluster_info_xml,
    metrics,
    user_info,
)
from rm_client.wire.nodes import encode_node_resource_info
from rm_client.wire.reservations import encode_new_reservation
from rm_client.wire.resources import Resource
from harvester.emulator.render_misc import nm_containers, nm_info, reservation_list
from harvester.emulator.render_scheduler import SchedulerView
from harvester.emulator.messages import Reply, Request, RouteTable

SIGNALS = ("OUTPUT_THREAD_DUMP", "GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN")
_CONTAINER_ID = re.compile(r"container_(e\d+_)?\d+_\d+_\d+_\d+$")
LABELS_DISABLED = "java.io.IOException: Node-label-based scheduling is disabled. Please check yarn.node-labels.enabled"
NOT_MUTABLE = ("This API only supports to retrieve scheduler configuration from a mutable-conf scheduler, "
               "underneath scheduler CapacityScheduler is not an instance of MutableConfScheduler")
KERBEROS_ONLY = ("Delegation token operations can only be carried out on a Kerberos authenticated channel. "
                 "Expected auth type is kerberos, got type {}")


def register(r: RouteTable) -> None:
    emu = r.emu
    nodes = NodeRenderer()

    def user(req: Request) -> str:
        return req.user or emu.config.web_user

    def info(req: Request, _: dict[str, str]) -> Reply:
        accept = req.header("Accept")
        if "xml" in accept and "json" not in accept:
            return Reply(200, cluster_info_xml(emu), "application/xml; charset=utf-8")
        return Reply.json(cluster_info(emu))

    for path in ("/ws/v1/cluster", "/ws/v1/cluster/info"):
        r.add("GET", path, info)
    r.add("GET", "/ws/v1/cluster/userinfo", lambda req, _: Reply.json(user_info(emu, user(req))))
    r.add("GET", "/ws/v1/cluster/metrics", lambda req, _: Reply.json(metrics(emu)))
    r.add("GET", "/ws/v1/cluster/scheduler", lambda req, _: Reply.json(SchedulerView(emu).render()))
    r.add("GET", "/ws/v1/cluster/appstatistics", lambda req, _: Reply.json(
        app_statistics(emu, set(req.params("states")) or None, set(req.params("applicationTypes")) or None)))

    def scheduler_logs(req: Request, _: dict[str, str]) -> Reply:
        form = req.body.decode("utf-8", errors="replace") if "form" in req.content_type else ""
        value = dict(p.split("=", 1) for p in form.split("&") if "=" in p).get("time") if form else None
        if value is None:
            raise errors.remote(400, "java.lang.NumberFormatException", "Cannot parse null string")
        if not value.isdigit():
            raise errors.remote(400, "java.lang.NumberFormatException", f'For input string: "{value}"')
        return Reply(200, "Capacity scheduler logs are being created.")

    r.add("POST", "/ws/v1/cluster/scheduler/logs", scheduler_logs)
    r.add("GET", "/ws/v1/cluster/scheduler/activities",
          lambda req, _: Reply.json({"activities": {"diagnostic": "waiting for next allocation"}}))

    def app_activities(req: Request, p: dict[str, str]) -> Reply:
        when = datetime.fromtimestamp(emu.now, tz=timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
        return Reply.json({"appActivities": {"applicationId": p["appid"], "diagnostic": "waiting for display",
                                             "timestamp": emu.now_ms(), "dateTime": when}})

    r.add("GET", "/ws/v1/cluster/scheduler/app-activities/{appid}", app_activities)

    # --- nodes ----------------------------------------------------------------------------

    def node_of(node_id: str) -> int:
        i = emu.node_index(node_id)
        if i is None:
            raise errors.not_found(f"nodeId, {node_id}, is not found")
        return i

    r.add("GET", "/ws/v1/cluster/nodes",
          lambda req, _: Reply.raw_json(nodes.nodes(emu, {s.upper() for s in req.params("states")} or None)))
    r.add("GET", "/ws/v1/cluster/nodes/{node}", lambda req, p: Reply.raw_json(nodes.node(emu, node_of(p["node"]))))

    def node_resource(req: Request, p: dict[str, str]) -> Reply:
        node_id = p["node"]
        if ":" not in node_id or not node_id.rsplit(":", 1)[1].isdigit():
            raise errors.remote(400, "java.lang.IllegalArgumentException",
                                f"Invalid NodeId [{node_id}]. Expected host:port")
        body = ensure_object(parse_body(req.body, req.content_type))
        if "xml" in req.content_type.lower():
            body = ensure_object(body.get("resourceOption"))
        # JAXB's defaults: no `resource` -> a new ResourceInfo (0 MB, 0 vcores); no timeout -> 0
        wanted = ensure_object(body.get("resource"))
        mem, vc = as_int(wanted.get("memory")), as_int(wanted.get("vCores"))
        timeout = as_int(body.get("overCommitTimeout"), 0)
        i = node_of(node_id)
        emu.update_node_resource(i, mem, vc, timeout)
        return Reply.json(encode_node_resource_info(Resource(mem, vc)))

    r.add("POST", "/ws/v1/cluster/nodes/{node}/resource", node_resource)
    r.add("GET", "/ws/v1/cluster/nodes/{node}/get-labels", lambda req, p: Reply.json({}))

    # --- node labels (disabled), delegation tokens (simple auth), scheduler-conf ---------------

    def labels_disabled(req: Request, _: dict[str, str]) -> Reply:
        raise errors.remote(400, errors.BAD_REQUEST, LABELS_DISABLED)

    r.add("POST", "/ws/v1/cluster/nodes/{node}/replace-labels", labels_disabled)
    r.add("POST", "/ws/v1/cluster/add-node-labels", labels_disabled)
    r.add("POST", "/ws/v1/cluster/remove-node-labels", labels_disabled)

    def replace_node_to_labels(req: Request, _: dict[str, str]) -> Reply:
        raise errors.remote(500, "java.lang.NullPointerException",
                            'Cannot invoke "String.indexOf(String)" because "nodeIdStr" is null')

    r.add("POST", "/ws/v1/cluster/replace-node-to-labels", replace_node_to_labels)
    r.add("GET", "/ws/v1/cluster/get-node-labels", lambda req, _: Reply.json({}))
    r.add("GET", "/ws/v1/cluster/get-node-to-labels", lambda req, _: Reply.json({"nodeToLabels": None}))
    r.add("GET", "/ws/v1/cluster/label-mappings", lambda req, _: Reply.json({"labelsToNodes": None}))

    def kerberos_only(req: Request, _: dict[str, str]) -> Reply:
        # without user.name the request is unauthenticated ("null", captures/err-delegation-token-
        # simple-auth); with it the simple auth handler authenticated it ("SIMPLE", seen on the live RM)
        raise errors.plain(403, KERBEROS_ONLY.format("SIMPLE" if req.user else "null"))

    r.add("POST", "/ws/v1/cluster/delegation-token", kerberos_only)
    r.add("DELETE", "/ws/v1/cluster/delegation-token", kerberos_only)
    r.add("POST", "/ws/v1/cluster/delegation-token/expiration", kerberos_only)

    def not_mutable(req: Request, _: dict[str, str]) -> Reply:
        raise errors.plain(400, NOT_MUTABLE)

    r.add("GET", "/ws/v1/cluster/scheduler-conf", not_mutable)
    r.add("PUT", "/ws/v1/cluster/scheduler-conf", not_mutable)
    r.add("POST", "/ws/v1/cluster/scheduler-conf/validate", not_mutable)
    r.add("GET", "/ws/v1/cluster/scheduler-conf/format", not_mutable)

    def conf_version(req: Request, _: dict[str, str]) -> Reply:
        raise errors.plain(400, "Configuration Version only supported by MutableConfScheduler.")

    r.add("GET", "/ws/v1/cluster/scheduler-conf/version", conf_version)

    def queue_access(req: Request, p: dict[str, str]) -> Reply:
        who = req.param("user") or user(req)
        return Reply.json({"allowed": "true", "user": who, "diagnostics": ""})

    r.add("GET", "/ws/v1/cluster/queues/{queue}/access", queue_access)

    # --- reservations ---------------------------------------------------------------------

    r.add("POST", "/ws/v1/cluster/reservation/new-reservation",
          lambda req, _: Reply.json(encode_new_reservation(emu.plan.new_reservation_id())))

    def submit(req: Request, _: dict[str, str]) -> Reply:
        emu.plan.submit(parse_body(req.body, req.content_type), user(req))
        return Reply(202)

    def update(req: Request, _: dict[str, str]) -> Reply:
        emu.plan.update(parse_body(req.body, req.content_type), user(req))
        return Reply.json({})

    def delete(req: Request, _: dict[str, str]) -> Reply:
        emu.plan.delete(parse_body(req.body, req.content_type))
        return Reply.json({})

    def listing(req: Request, _: dict[str, str]) -> Reply:
        items = emu.plan.listing(req.param("queue", "default") or "", req.param("reservation-id", "") or "",
                                 as_int(req.param("start-time", "0")), as_int(req.param("end-time", "-1"), -1))
        with_alloc = (req.param("include-resource-allocations", "false") or "").lower() == "true"
        return Reply.json(reservation_list(items, with_alloc))

    r.add("POST", "/ws/v1/cluster/reservation/submit", submit)
    r.add("POST", "/ws/v1/cluster/reservation/update", update)
    r.add("POST", "/ws/v1/cluster/reservation/delete", delete)
    r.add("GET", "/ws/v1/cluster/reservation/list", listing)

    # --- container signals ----------------------------------------------------------------

    def signal(req: Request, p: dict[str, str]) -> Reply:
        cid, command = p["cid"], p["cmd"].upper()
        if not _CONTAINER_ID.match(cid):
            raise errors.plain(500, f"Invalid ContainerId: {cid}")
        if command not in SIGNALS:
            raise errors.plain(400, f"Invalid command: {command}, valid commands are: [{', '.join(SIGNALS)}]")
        rec = emu.containers.get(cid)
        if rec is None or not rec.live:  # ClientRMService.signalToContainer, as RMWebServices passes it on
            raise errors.plain(500, f"Trying to signal an absent container {cid}")
        if command != "OUTPUT_THREAD_DUMP":
            emu.signal_container(cid, graceful=command == "GRACEFUL_SHUTDOWN")
        return Reply(200)

    r.add("POST", "/ws/v1/cluster/containers/{cid}/signal/{cmd}", signal)

    # --- NodeManager faces ----------------------------------------------------------------

    r.add("GET", "/nm/{node}/ws/v1/node/containers", lambda req, p: Reply.json(nm_containers(emu, node_of(p["node"]))))
    r.add("GET", "/nm/{node}/ws/v1/node/info", lambda req, p: Reply.json(nm_info(emu, node_of(p["node"]))))
    r.add("GET", "/nm/{node}/ws/v1/node/resources/{name}", lambda req, p: Reply.json({}))

"""One request sequence for differential tests: real RM vs emulator, and emulator vs captures.

Each step names the recorded capture whose answer has the same form (status, content type,
shape), so the same sequence serves tests/contract/test_differential_captures.py (emulator
vs those captures, always) and tests/integration/test_differential.py (emulator vs a live
RM). Values learned on one side (cluster id, a node id and its capacity, new reservation and
app ids) are bound per side, so the two sides never share ids. The sequence leaves a cluster
as it found it: the node update re-sends the node's own capacity, the reservation is deleted,
the submitted app is killed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from shape import Answer

Vars = dict[str, Any]
Send = Callable[[str, str, dict[str, str], bytes], Answer]
JSON = {"Content-Type": "application/json", "Accept": "application/json"}


@dataclass(frozen=True)
class Step:
    capture: str                                  # the recorded answer of the same form
    method: str
    path: str                                     # str.format(**vars)
    body: Callable[[Vars], Any] | None = None     # JSON document (dict) or raw text
    bind: Callable[[Vars, Any], None] | None = None


def _first_node(v: Vars, doc: Any) -> None:
    nodes = doc["nodes"]["node"]
    node = nodes[0] if isinstance(nodes, list) else nodes
    v["node"] = node["id"]
    v["node_mem"] = node["totalResource"]["memory"]
    v["node_vc"] = node["totalResource"]["vCores"]


def _reservation(v: Vars, name: str, first_stage: int) -> dict[str, Any]:
    """The recorded hourly R_ORDER_NO_GAP definition (captures/reservation-submit), moved to now."""
    return {"arrival": v["now_ms"] + 60_000, "deadline": v["now_ms"] + 3_540_000, "reservation-name": name,
            "priority": 0, "recurrence-expression": "3600000",
            "reservation-requests": {"reservation-request-interpreter": 3, "reservation-request": [
                {"capability": {"memory": 1024, "vCores": 1}, "num-containers": first_stage,
                 "min-concurrency": first_stage, "duration": 600_000},
                {"capability": {"memory": 512, "vCores": 1}, "num-containers": 4, "min-concurrency": 4,
                 "duration": 300_000}]}}


SEQUENCE: list[Step] = [
    Step("info", "GET", "/ws/v1/cluster/info", bind=lambda v, d: v.update(cluster=d["clusterInfo"]["id"])),
    Step("userinfo", "GET", "/ws/v1/cluster/userinfo"),
    Step("metrics", "GET", "/ws/v1/cluster/metrics"),
    Step("nodes", "GET", "/ws/v1/cluster/nodes", bind=_first_node),
    Step("nodes-node-localhost_45454", "GET", "/ws/v1/cluster/nodes/{node}"),
    Step("scheduler", "GET", "/ws/v1/cluster/scheduler"),
    Step("apps-empty", "GET", "/ws/v1/cluster/apps?user=harvester-differential-nobody"),
    Step("appstatistics", "GET", "/ws/v1/cluster/appstatistics"),
    Step("get-node-labels", "GET", "/ws/v1/cluster/get-node-labels"),
    Step("get-node-to-labels", "GET", "/ws/v1/cluster/get-node-to-labels"),
    Step("label-mappings", "GET", "/ws/v1/cluster/label-mappings"),
    Step("nodes-id-resource-restore-45454", "POST", "/ws/v1/cluster/nodes/{node}/resource",
         lambda v: {"resource": {"memory": v["node_mem"], "vCores": v["node_vc"]}, "overCommitTimeout": -1}),
    Step("reservation-new-reservation", "POST", "/ws/v1/cluster/reservation/new-reservation",
         bind=lambda v, d: v.update(res=d["reservation-id"])),
    Step("reservation-list-unknown-reservation-id", "GET", "/ws/v1/cluster/reservation/list?queue=default&"
         "reservation-id={res}"),
    Step("reservation-submit", "POST", "/ws/v1/cluster/reservation/submit",
         lambda v: {"queue": "default", "reservation-id": v["res"],
                    "reservation-definition": _reservation(v, "differential", 2)}),
    Step("reservation-list-with-allocations", "GET", "/ws/v1/cluster/reservation/list?queue=default&"
         "reservation-id={res}&include-resource-allocations=true"),
    Step("reservation-update", "POST", "/ws/v1/cluster/reservation/update",
         lambda v: {"reservation-id": v["res"], "reservation-definition": _reservation(v, "differential-v2", 3)}),
    Step("reservation-delete", "POST", "/ws/v1/cluster/reservation/delete", lambda v: {"reservation-id": v["res"]}),
    Step("reservation-list-6-after-rejected-submit", "GET", "/ws/v1/cluster/reservation/list?queue=default&"
         "reservation-id={res}&include-resource-allocations=true"),
    Step("err-reservation-submit-empty-object", "POST", "/ws/v1/cluster/reservation/submit", lambda v: {}),
    Step("err-reservation-delete-empty", "POST", "/ws/v1/cluster/reservation/delete", lambda v: {}),
    Step("err-reservation-new-reservation-GET-method", "GET", "/ws/v1/cluster/reservation/new-reservation"),
    Step("apps-new-application", "POST", "/ws/v1/cluster/apps/new-application",
         bind=lambda v, d: v.update(app=d["application-id"])),
    Step("apps-submit-rest-with-active-reservation", "POST", "/ws/v1/cluster/apps",
         lambda v: {"application-id": v["app"], "application-name": "harvester-differential", "queue": "root.default",
                    "am-container-spec": {"commands": {"command": "sleep 30"}}, "max-app-attempts": 1,
                    "resource": {"memory": 512, "vCores": 1}, "application-type": "YARN"}),
    Step("apps-id-state-put-KILLED", "PUT", "/ws/v1/cluster/apps/{app}/state", lambda v: {"state": "KILLED"}),
    Step("err-apps-id-state-put-unknown-app", "PUT", "/ws/v1/cluster/apps/application_{cluster}_9999/state",
         lambda v: {"state": "KILLED"}),
    Step("err-apps-id-state-put-bad-appid", "PUT", "/ws/v1/cluster/apps/app_bogus/state", lambda v: {"state": "KILLED"}),
    Step("err-container-signal-bad-containerid", "POST",
         "/ws/v1/cluster/containers/container_bogus/signal/GRACEFUL_SHUTDOWN"),
    Step("err-container-signal-bad-command", "POST",
         "/ws/v1/cluster/containers/container_{cluster}_0001_01_000001/signal/KILL_IT"),
    Step("err-nodes-id-resource-malformed-nodeid", "POST", "/ws/v1/cluster/nodes/not-a-node-id/resource",
         lambda v: {"resource": {"memory": 4096, "vCores": 4}, "overCommitTimeout": -1}),
    Step("err-add-node-labels-disabled", "POST", "/ws/v1/cluster/add-node-labels",
         lambda v: {"nodeLabelInfo": [{"name": "gpu", "exclusivity": True}]}),
    Step("err-scheduler-conf-not-mutable", "GET", "/ws/v1/cluster/scheduler-conf"),
    Step("err-delegation-token-simple-auth", "POST", "/ws/v1/cluster/delegation-token", lambda v: {"renewer": "root"}),
]


def run(send: Send, now_ms: Callable[[], int]) -> list[tuple[Step, Answer]]:
    """Send the sequence through `send`; returns each step with its answer."""
    v: Vars = {}
    out = []
    for step in SEQUENCE:
        v["now_ms"] = now_ms()
        body = b""
        headers = {"Accept": "application/json"}
        if step.body is not None:
            doc = step.body(v)
            body = (doc if isinstance(doc, str) else json.dumps(doc)).encode()
            headers = dict(JSON)
        answer = send(step.method, step.path.format(**v), headers, body)
        if step.bind is not None and answer.status < 300:
            step.bind(v, json.loads(answer.body))
        out.append((step, answer))
    return out

"""Seeded random REST sequences for differential runs against any RM (live or emulated).

`generate(seed, length)` draws a sequence of valid and invalid calls - apps (submit, rejected
submissions, kills, priority changes), reservations (submit, invalid submits, list, update,
delete, delete twice), node resource updates, container signals - from templates whose answer
forms were all recorded on a real 3.3.6 RM (each names the capture of the same form). Every step
knows what of its answer the sequence itself determines (`Step.facts`): the status, the error
class and message (digits aside), our own objects' fields (an app's queue and final state once
killed or rejected, a reservation's definition). Nothing else is compared, so a run holds on a
used, shared cluster: other tenants' apps, queues' users, capacities and timing do not matter.

Safe on a live cluster: a node update only re-posts the node's current resource with
overCommitTimeout -1 (nothing changes, nothing is killed), apps are `sleep` commands in
root.default killed at the end, reservations are small, in the future and deleted at the end
(`cleanup`). Nothing here does I/O: `run` takes the transport.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable

Vars = dict[str, Any]


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: str

    def doc(self) -> Any:
        try:
            return json.loads(self.body) if self.body.strip() else None
        except ValueError:
            return None


Send = Callable[[str, str, dict[str, str], bytes], Answer]


def normalized(text: str) -> str:
    """Ids, times and sizes differ between clusters; words and structure must not."""
    return re.sub(r"\d+", "#", text)


def error_facts(a: Answer) -> dict[str, Any]:
    doc = a.doc()
    if isinstance(doc, dict) and "RemoteException" in doc:
        rex = doc["RemoteException"]
        return {"status": a.status, "exception": rex.get("exception"), "message": normalized(rex.get("message", ""))}
    return {"status": a.status, "text": normalized(a.body.strip())}


@dataclass(frozen=True)
class Step:
    """One call. `path`/`body` are built from the run's variables; `bind` stores what the answer
    hands out (ids); `facts` is what the sequence determines about the answer."""

    name: str
    capture: str                               # a recorded answer of the same form
    method: str
    path: Callable[[Vars], str]
    body: Callable[[Vars], Any] | None = None
    bind: Callable[[Vars, Answer], None] | None = None
    facts: Callable[[Vars, Answer], dict[str, Any]] = field(default=lambda v, a: {"status": a.status})
    wait_s: float = 0.0                        # let the cluster act before the next step


def _app(i: int) -> Callable[[Vars], str]:
    return lambda v: v["apps"][i]


def _res(i: int) -> Callable[[Vars], str]:
    return lambda v: v["reservations"][i]


def _sleep_app(v: Vars, app_id: str, queue: str, name: str, reservation: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"application-id": app_id, "application-name": name, "queue": queue,
                            "am-container-spec": {"commands": {"command": "sleep 120"}}, "max-app-attempts": 1,
                            "resource": {"memory": 1024, "vCores": 1}, "application-type": "YARN"}
    if reservation is not None:
        body["reservation-id"] = reservation
    return body


def _definition(v: Vars, *, offset_ms: int, window_ms: int, containers: int, memory: int = 1024,
                period_ms: int = 0, name: str = "harvester-differential", interpreter: int = 0) -> dict[str, Any]:
    d: dict[str, Any] = {
        "arrival": v["now_ms"] + offset_ms, "deadline": v["now_ms"] + offset_ms + window_ms, "reservation-name": name,
        "reservation-requests": {"reservation-request-interpreter": interpreter, "reservation-request": [
            {"capability": {"memory": memory, "vCores": 1}, "num-containers": containers,
             "min-concurrency": containers, "duration": min(window_ms, 300_000)}]}}
    if period_ms:
        d["recurrence-expression"] = str(period_ms)
    return d


def _app_facts(v: Vars, a: Answer) -> dict[str, Any]:
    app = (a.doc() or {}).get("app", {})
    out = {"status": a.status, "queue": app.get("queue"), "name": app.get("name")}
    if app.get("state") in ("FAILED", "KILLED"):  # only final states are determined by the sequence
        out.update(state=app.get("state"), finalStatus=app.get("finalStatus"),
                   diagnostics=normalized(app.get("diagnostics", "")).split(" Details")[0])
    return out


def _listed(v: Vars, a: Answer) -> dict[str, Any]:
    doc = a.doc() or {}
    items = doc.get("reservations") or []
    items = [items] if isinstance(items, dict) else items
    return {"status": a.status, "listed": sorted(
        (normalized(r.get("reservation-id", "")), r.get("reservation-definition", {}).get("reservation-name"),
         r.get("reservation-definition", {}).get("recurrence-expression")) for r in items)}


READS = [
    Step("info", "info", "GET", lambda v: "/ws/v1/cluster/info"),
    Step("metrics", "metrics", "GET", lambda v: "/ws/v1/cluster/metrics"),
    Step("scheduler", "scheduler", "GET", lambda v: "/ws/v1/cluster/scheduler"),
    Step("appstatistics", "appstatistics", "GET", lambda v: "/ws/v1/cluster/appstatistics"),
    Step("userinfo", "userinfo", "GET", lambda v: "/ws/v1/cluster/userinfo"),
    Step("nodes", "nodes", "GET", lambda v: "/ws/v1/cluster/nodes"),
]
ERRORS = [
    Step("kill-unknown-app", "err-apps-id-state-put-unknown-app", "PUT",
         lambda v: f"/ws/v1/cluster/apps/application_{v['cluster']}_9999/state", lambda v: {"state": "KILLED"},
         facts=lambda v, a: error_facts(a)),
    Step("kill-bad-app-id", "err-apps-id-state-put-bad-appid", "PUT", lambda v: "/ws/v1/cluster/apps/app_bogus/state",
         lambda v: {"state": "KILLED"}, facts=lambda v, a: error_facts(a)),
    Step("signal-absent-container", "err-container-signal-bad-containerid", "POST",
         lambda v: f"/ws/v1/cluster/containers/container_{v['cluster']}_9999_01_000001/signal/GRACEFUL_SHUTDOWN",
         facts=lambda v, a: error_facts(a)),
    Step("signal-bad-command", "err-container-signal-bad-command", "POST",
         lambda v: f"/ws/v1/cluster/containers/container_{v['cluster']}_9999_01_000001/signal/KILL_IT",
         facts=lambda v, a: error_facts(a)),
    Step("signal-bad-container-id", "err-container-signal-bad-containerid", "POST",
         lambda v: "/ws/v1/cluster/containers/container_bogus/signal/GRACEFUL_SHUTDOWN", facts=lambda v, a: error_facts(a)),
    Step("node-resource-bad-node-id", "err-nodes-id-resource-malformed-nodeid", "POST",
         lambda v: "/ws/v1/cluster/nodes/not-a-node-id/resource",
         lambda v: {"resource": {"memory": 1024, "vCores": 1}, "overCommitTimeout": -1}, facts=lambda v, a: error_facts(a)),
    Step("node-resource-PUT", "err-nodes-id-resource-PUT-method", "PUT", lambda v: f"/ws/v1/cluster/nodes/{v['node']}/resource",
         lambda v: {"resource": {"memory": v["node_mem"], "vCores": v["node_vc"]}, "overCommitTimeout": -1},
         facts=lambda v, a: error_facts(a)),
    Step("reservation-submit-past-deadline", "err-reservation-submit-deadline-in-past", "POST",
         lambda v: "/ws/v1/cluster/reservation/submit",
         lambda v: {"queue": "root.default", "reservation-id": f"reservation_{v['cluster']}_9998",
                    "reservation-definition": _definition(v, offset_ms=-7_200_000, window_ms=600_000, containers=1)},
         facts=lambda v, a: error_facts(a)),
    Step("reservation-delete-never-accepted", "err-reservation-delete-empty", "POST",
         lambda v: "/ws/v1/cluster/reservation/delete", lambda v: {"reservation-id": f"reservation_{v['cluster']}_9997"},
         facts=lambda v, a: error_facts(a)),
]


def _new_app(v: Vars, a: Answer) -> None:
    v["apps"].append((a.doc() or {}).get("application-id", ""))


def _new_res(v: Vars, a: Answer) -> None:
    v["reservations"].append((a.doc() or {}).get("reservation-id", ""))


NEW_APP = Step("new-application", "apps-new-application", "POST", lambda v: "/ws/v1/cluster/apps/new-application",
               bind=_new_app, facts=lambda v, a: {"status": a.status})
NEW_RES = Step("new-reservation", "reservation-new-reservation", "POST",
               lambda v: "/ws/v1/cluster/reservation/new-reservation", bind=_new_res,
               facts=lambda v, a: {"status": a.status})


def _app_steps(i: int, kind: str) -> list[Step]:
    """Submit app i (a fresh id) of `kind`, read it back; valid apps are killed twice."""
    queue = {"valid": "root.default", "unknown-queue": "harvester-differential-no-such-queue",
             "short-queue": "default"}[kind]
    name = f"harvester-differential-{kind}"
    steps = [NEW_APP, Step(f"submit-app-{kind}", "apps-submit-rest-with-active-reservation", "POST",
                           lambda v: "/ws/v1/cluster/apps", lambda v: _sleep_app(v, v["apps"][i], queue, name), wait_s=1.0),
             Step(f"get-app-{kind}", "apps-id-inactive-reservation-result" if kind != "valid" else "apps-id-in-active-reservation",
                  "GET", lambda v: f"/ws/v1/cluster/apps/{v['apps'][i]}", facts=_app_facts)]
    if kind == "valid":
        steps += [
            Step("priority-in-reservable-queue", "err-apps-id-priority-put-app-in-reservation-queue", "PUT",
                 lambda v: f"/ws/v1/cluster/apps/{v['apps'][i]}/priority", lambda v: {"priority": 1},
                 facts=lambda v, a: error_facts(a)),
            Step("kill-app", "apps-id-state-put-KILLED", "PUT", lambda v: f"/ws/v1/cluster/apps/{v['apps'][i]}/state",
                 lambda v: {"state": "KILLED"}, facts=lambda v, a: {"status": a.status}, wait_s=2.0),
            Step("kill-app-again", "apps-id-state-put-KILLED-again", "PUT",
                 lambda v: f"/ws/v1/cluster/apps/{v['apps'][i]}/state", lambda v: {"state": "KILLED"},
                 facts=lambda v, a: {"status": a.status, "body": a.doc()}),
            Step("get-killed-app", "apps-id-killed", "GET", lambda v: f"/ws/v1/cluster/apps/{v['apps'][i]}",
                 facts=_app_facts),
        ]
    return steps


def _reservation_steps(i: int, recurring: bool) -> list[Step]:
    """Reservation i: submit, list, update, list, delete, delete again."""
    period = 3_600_000 if recurring else 0
    listing = "reservation-list-with-allocations" if recurring else "reservation-list-two"
    return [
        NEW_RES,
        Step("reservation-submit", "reservation-submit", "POST", lambda v: "/ws/v1/cluster/reservation/submit",
             lambda v: {"queue": "root.default", "reservation-id": v["reservations"][i], "reservation-definition":
                        _definition(v, offset_ms=900_000, window_ms=600_000, containers=1, period_ms=period)},
             facts=lambda v, a: {"status": a.status, "body": a.body}),
        Step("reservation-list", listing, "GET",
             lambda v: f"/ws/v1/cluster/reservation/list?queue=root.default&reservation-id={v['reservations'][i]}"
                       "&include-resource-allocations=true", facts=_listed),
        Step("reservation-update", "reservation-update", "POST", lambda v: "/ws/v1/cluster/reservation/update",
             lambda v: {"reservation-id": v["reservations"][i], "reservation-definition": _definition(
                 v, offset_ms=900_000, window_ms=600_000, containers=1, period_ms=period, name="harvester-differential-v2")},
             facts=lambda v, a: {"status": a.status, "body": a.doc()}),
        Step("reservation-list-updated", listing, "GET",
             lambda v: f"/ws/v1/cluster/reservation/list?queue=root.default&reservation-id={v['reservations'][i]}",
             facts=_listed),
        Step("reservation-delete", "reservation-delete", "POST", lambda v: "/ws/v1/cluster/reservation/delete",
             lambda v: {"reservation-id": v["reservations"][i]}, facts=lambda v, a: {"status": a.status, "body": a.doc()}),
        Step("reservation-delete-again", "err-reservation-delete-already-deleted", "POST",
             lambda v: "/ws/v1/cluster/reservation/delete", lambda v: {"reservation-id": v["reservations"][i]},
             facts=lambda v, a: error_facts(a)),
    ]


def _gang_too_large() -> Step:
    return Step("reservation-submit-gang-too-large", "err-reservation-submit-gang-larger-than-cluster", "POST",
                lambda v: "/ws/v1/cluster/reservation/submit",
                lambda v: {"queue": "root.default", "reservation-id": f"reservation_{v['cluster']}_9996",
                           "reservation-definition": _definition(v, offset_ms=900_000, window_ms=600_000, containers=2,
                                                                 memory=v["total_mb"], interpreter=1)},
                facts=lambda v, a: error_facts(a))


NUDGE = Step("node-resource-nudge", "nodes-id-resource-restore-8192-8", "POST",
             lambda v: f"/ws/v1/cluster/nodes/{v['node']}/resource",
             lambda v: {"resource": {"memory": v["node_mem"], "vCores": v["node_vc"]}, "overCommitTimeout": -1},
             facts=lambda v, a: {"status": a.status})


def _first_node(v: Vars, a: Answer) -> None:
    nodes = ((a.doc() or {}).get("nodes") or {}).get("node") or []
    running = [n for n in ([nodes] if isinstance(nodes, dict) else nodes) if n.get("state") == "RUNNING"]
    node = sorted(running, key=lambda n: n["id"])[0]
    v.update(node=node["id"], node_mem=node["totalResource"]["memory"], node_vc=node["totalResource"]["vCores"])


PROLOGUE = [
    Step("info", "info", "GET", lambda v: "/ws/v1/cluster/info",
         bind=lambda v, a: v.update(cluster=(a.doc() or {})["clusterInfo"]["id"])),
    Step("metrics", "metrics", "GET", lambda v: "/ws/v1/cluster/metrics",
         bind=lambda v, a: v.update(total_mb=(a.doc() or {})["clusterMetrics"]["totalMB"])),
    Step("nodes", "nodes", "GET", lambda v: "/ws/v1/cluster/nodes", bind=_first_node),
]


def generate(seed: int, length: int = 40) -> list[Step]:
    """A sequence of about `length` steps (after the prologue that learns the cluster)."""
    rng = random.Random(seed)
    steps = list(PROLOGUE)
    apps = reservations = 0
    while len(steps) - len(PROLOGUE) < length:
        kind = rng.choices(["read", "error", "app", "reservation", "nudge", "gang"], [4, 3, 3, 2, 1, 1])[0]
        if kind == "read":
            steps.append(rng.choice(READS))
        elif kind == "error":
            steps.append(rng.choice(ERRORS))
        elif kind == "app":
            steps += _app_steps(apps, rng.choice(["valid", "valid", "unknown-queue", "short-queue"]))
            apps += 1
        elif kind == "reservation":
            steps += _reservation_steps(reservations, rng.random() < 0.5)
            reservations += 1
        elif kind == "nudge":
            steps.append(NUDGE)
        else:
            steps.append(_gang_too_large())
    return steps


def body_bytes(doc: Any) -> bytes:
    return b"" if doc is None else (doc if isinstance(doc, str) else json.dumps(doc)).encode()


def new_vars() -> Vars:
    return {"apps": [], "reservations": []}


def run(send: Send, steps: list[Step], now_ms: Callable[[], int], pause: Callable[[float], None], v: Vars,
        on_answer: Callable[[Step, bytes, Answer], None] | None = None) -> list[tuple[Step, Answer, dict[str, Any]]]:
    """Send `steps` through `send` with the run's variables `v` (`new_vars()`); returns each step,
    its answer and its facts. `cleanup(send, v)` must follow (in a finally): it kills the apps and
    deletes the reservations the run made."""
    out = []
    for step in steps:
        v["now_ms"] = now_ms()
        body = body_bytes(step.body(v) if step.body is not None else None)
        headers = {"Accept": "application/json"}
        if body:
            headers["Content-Type"] = "application/json"
        answer = send(step.method, step.path(v), headers, body)
        if on_answer is not None:
            on_answer(step, body, answer)
        if step.bind is not None and answer.status < 300:
            step.bind(v, answer)
        out.append((step, answer, step.facts(v, answer)))
        if step.wait_s:
            pause(step.wait_s)
    return out


def cleanup(send: Send, made: Vars) -> None:
    """Kill every app and delete every reservation the run made (errors ignored)."""
    json_headers = {"Accept": "application/json", "Content-Type": "application/json"}
    for app in made.get("apps", []):
        send("PUT", f"/ws/v1/cluster/apps/{app}/state", json_headers, body_bytes({"state": "KILLED"}))
    for rid in made.get("reservations", []):
        send("POST", "/ws/v1/cluster/reservation/delete", json_headers, body_bytes({"reservation-id": rid}))

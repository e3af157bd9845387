"""Every recorded 3.3.6 RM capture through the client's own answer path.

For each capture in ``yarn-3.3.6/captures`` (INDEX.txt gives method, URL, status):

* success answers go through :func:`rm_client.endpoints.decode_answer` for the endpoint the
  URL maps to; the model is compared with values read from the raw JSON (independently of the
  decoders), and the endpoint's encoder must give the same JSON back (the emulator writes
  with it);
* ``err-*`` answers go through the error parser; class, status, RemoteException fields (or
  the plain text) must match the file;
* anything not decoded is listed in NOT_DECODED with the reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rm_capture_index import CAPTURES, FIXTURES_DIR, Capture, load_index

from rm_client import errors
from rm_client.endpoints import ENDPOINTS, decode_answer, match
from rm_client.wire import _json
from rm_client.wire.attempts import Container
from rm_client.wire.scheduler import iter_queues

CAPTURE_LIST = load_index()
BY_NAME = {c.name: c for c in CAPTURE_LIST}

NOT_DECODED = {
    "info-xml": "XML answer (Accept: application/xml); the client always asks for JSON",
    "scheduler-activities": "scheduler activities are a debugging aid the client does not offer",
    "scheduler-app-activities": "app activities are a debugging aid the client does not offer",
    "scheduler-logs": "text answer of POST /scheduler/logs (a debug dump the client does not offer)",
    "nm1-node-info": "NodeManager REST API (port 8042), not the ResourceManager",
    "nm1-node-containers": "NodeManager REST API (port 8042), not the ResourceManager",
    "nm1-node-resources": "NodeManager REST API (port 8042), not the ResourceManager",
}

SUCCESS = [c for c in CAPTURE_LIST if not c.name.startswith("err-") and c.name not in NOT_DECODED]
ERRORS = [c for c in CAPTURE_LIST if c.name.startswith("err-")]


def _raw(c: Capture) -> Any:
    return json.loads(c.body) if c.body.strip() else None


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else ([] if v in (None, {}) else [v])


def test_fixture_paths_agree(fixtures_dir: Path) -> None:
    assert fixtures_dir.resolve() == FIXTURES_DIR.resolve()


def test_every_capture_file_is_indexed_and_classified() -> None:
    names = {p.name.split(".")[0] for p in CAPTURES.iterdir() if p.name != "INDEX.txt"}
    assert names == set(BY_NAME), names ^ set(BY_NAME)
    assert len(CAPTURE_LIST) >= 150
    for c in SUCCESS:
        assert match(c.method, c.path) is not None, f"{c.name}: {c.method} {c.path} has no endpoint"
        assert 200 <= c.status < 300
    assert set(NOT_DECODED) <= set(BY_NAME)


# --- independent expectations, one per endpoint: model vs. raw JSON


def _res(model: Any, raw: dict[str, Any]) -> None:
    assert (model.memory_mb, model.vcores) == (int(raw["memory"]), int(raw["vCores"]))


def _check_node(m: Any, n: dict[str, Any]) -> None:
    assert (m.id, m.state, m.rack, m.num_containers) == (n["id"], n["state"], n["rack"], n["numContainers"])
    for attr, key in (("total_resource", "totalResource"), ("used_resource", "usedResource"),
                      ("available_resource", "availableResource")):
        _res(getattr(m, attr), n[key])
    ru = n["resourceUtilization"]
    assert m.resource_utilization.node_cpu_cores == ru["nodeCPUUsage"]
    assert m.resource_utilization.containers_cpu_vcores == ru["containersCPUUsage"]
    assert m.resource_utilization.node_physical_memory_mb == ru["nodePhysicalMemoryMB"]
    assert (m.used_memory_mb, m.avail_vcores) == (n["usedMemoryMB"], n["availableVirtualCores"])


def _entries_in_text(text: str, key: str) -> list[tuple[str, int]]:
    """The map entries of ``key`` as written (repeated "entry" keys included), by regex."""
    m = re.search(f'"{key}":' + r"\{(.*?)\}(?:\}|,\"pre)", text)
    return [(k, int(v)) for k, v in re.findall(r'\{"key":"([^"]+)","value":"(-?\d+)"', m.group(1))] if m else []


def _check_app(m: Any, a: dict[str, Any], text: str) -> None:
    assert (m.id, m.user, m.queue, m.state, m.final_status) == (a["id"], a["user"], a["queue"], a["state"],
                                                                   a["finalStatus"])
    assert (m.allocated_mb, m.running_containers, m.started_time_ms) == (a["allocatedMB"], a["runningContainers"],
                                                                         a["startedTime"])
    assert m.application_tags == tuple(t for t in a["applicationTags"].split(",") if t)
    assert m.progress_percent == a["progress"]
    assert len(m.timeouts) == len(_list(a["timeouts"].get("timeout")))
    if '"resourceSecondsMap":{}' not in text:
        # the RM writes {"entry":{memory-mb},"entry":{vcores}}: BOTH must survive decoding
        block = text[text.index(f'"id":"{a["id"]}"'):]
        assert m.resource_seconds == tuple(_entries_in_text(block, "resourceSecondsMap"))
        assert len(m.resource_seconds) == 2


def _check_container(m: Container, c: dict[str, Any]) -> None:
    assert (m.container_id, m.state, m.node_id) == (c["containerId"], c["containerState"], c["nodeId"])
    assert (m.allocated_mb, m.allocated_vcores) == (int(c["allocatedMB"]), int(c["allocatedVCores"]))
    assert (m.exit_status, m.priority) == (int(c["containerExitStatus"]), int(c["priority"]))
    assert m.allocated_resources == tuple((e["key"], int(e["value"])) for e in _list(c["allocatedResources"]["entry"]))


def _check_reservation(m: Any, r: dict[str, Any]) -> None:
    d = r["reservation-definition"]
    assert (m.reservation_id, m.user, m.acceptance_time_ms) == (r["reservation-id"], r["user"],
                                                                int(r["acceptance-time"]))
    md = m.definition
    assert (md.arrival_ms, md.deadline_ms) == (int(d["arrival"]), int(d["deadline"]))
    assert md.recurrence_period_ms == int(d["recurrence-expression"])
    assert int(md.interpreter) == int(d["reservation-requests"]["reservation-request-interpreter"])
    reqs = _list(d["reservation-requests"]["reservation-request"])
    assert [(q.num_containers, q.min_concurrency, q.duration_ms) for q in md.requests] == [
        (int(q["num-containers"]), int(q["min-concurrency"]), int(q["duration"])) for q in reqs]
    for q, rq in zip(md.requests, reqs, strict=True):
        _res(q.capability, rq["capability"])
    allocs = _list(r.get("resource-allocations"))
    assert [(a.start_ms, a.end_ms) for a in (m.allocations or ())] == [
        (int(a["startTime"]), int(a["endTime"])) for a in allocs]


def _check_scheduler(m: Any, raw: dict[str, Any]) -> None:
    flat_raw = []

    def walk(q: dict[str, Any]) -> None:
        flat_raw.append(q)
        for child in _list((q.get("queues") or {}).get("queue")):
            walk(child)

    walk(raw["scheduler"]["schedulerInfo"])
    flat = [q for _, q in iter_queues(m.root)]
    assert [q.name for q in flat] == [q["queueName"] for q in flat_raw]
    assert [q.used_capacity_percent for q in flat] == [q["usedCapacity"] for q in flat_raw]
    assert [q.num_applications for q in flat[1:]] == [q["numApplications"] for q in flat_raw[1:]]
    assert flat[0].path == "root" and flat[1].path == "root.default"


def check(c: Capture, model: Any, raw: Any) -> None:
    ep = match(c.method, c.path)[0].name  # type: ignore[index]
    text = c.body.decode()
    if ep in ("cluster", "cluster-info"):
        ci = raw["clusterInfo"]
        assert (model.cluster_id, model.started_on_ms, model.ha_state) == (ci["id"], ci["startedOn"], ci["haState"])
        assert model.is_active and model.rm_version == "3.3.6"
    elif ep == "cluster-metrics":
        cm = raw["clusterMetrics"]
        assert (model.total_mb, model.total_vcores, model.allocated_mb, model.active_nodes) == (
            cm["totalMB"], cm["totalVirtualCores"], cm["allocatedMB"], cm["activeNodes"])
        _res(model.total_cluster_resources_across_partition, cm["totalClusterResourcesAcrossPartition"])
    elif ep == "cluster-user-info":
        assert (model.rm_login_user, model.requested_user) == (raw["rmLoginUser"], raw["requestedUser"])
    elif ep == "nodes":
        rows = _list(raw["nodes"].get("node"))
        assert len(model) == len(rows)
        for m, n in zip(model, rows, strict=True):
            _check_node(m, n)
    elif ep == "node":
        _check_node(model, raw["node"])
    elif ep == "node-resource":
        _res(model, raw["resourceInfo"])
    elif ep == "apps":
        rows = _list(raw["apps"].get("app"))
        assert len(model) == len(rows)
        for m, a in zip(model, rows, strict=True):
            _check_app(m, a, text)
    elif ep == "app":
        _check_app(model, raw["app"], text)
    elif ep == "app-attempts":
        rows = _list(raw["appAttempts"]["appAttempt"])
        assert [(a.attempt_id, a.container_id, a.node_id, a.attempt_number) for a in model] == [
            (r["appAttemptId"], r["containerId"], r["nodeId"], r["id"]) for r in rows]
    elif ep == "app-attempt":
        assert (model.attempt_id, model.state, model.am_container_id) == (
            raw["appAttemptId"], raw["appAttemptState"], raw["amContainerId"])
        assert (model.started_time_ms, model.rpc_port) == (int(raw["startedTime"]), int(raw["rpcPort"]))
    elif ep == "containers":
        rows = _list(raw.get("container"))
        assert len(model) == len(rows)
        for m, r in zip(model, rows, strict=True):
            _check_container(m, r)
    elif ep == "container":
        _check_container(model, raw)
    elif ep in ("app-state", "app-state-put"):
        assert model == raw["state"]
    elif ep in ("app-queue", "app-queue-put"):
        assert model == raw["queue"]
    elif ep in ("app-priority", "app-priority-put"):
        assert model == raw["priority"]
    elif ep == "app-timeouts":
        assert [(t.type, t.expiry_time, t.remaining_time_s) for t in model] == [
            (t["type"], t["expiryTime"], t["remainingTimeInSeconds"]) for t in raw["timeouts"]["timeout"]]
    elif ep in ("app-timeout", "app-timeout-put"):
        assert (model.type, model.expiry_time) == (raw["timeout"]["type"], raw["timeout"]["expiryTime"])
    elif ep == "app-statistics":
        assert [(s.state, s.count) for s in model] == [(s["state"], s["count"]) for s in raw["appStatInfo"]["statItem"]]
    elif ep == "new-application":
        assert model.application_id == raw["application-id"]
        _res(model.maximum_resource_capability, raw["maximum-resource-capability"])
    elif ep == "reservation-new":
        assert model == raw["reservation-id"]
    elif ep == "reservation-list":
        rows = _list(raw.get("reservations"))
        assert len(model) == len(rows)
        for m, r in zip(model, rows, strict=True):
            _check_reservation(m, r)
    elif ep == "scheduler":
        _check_scheduler(model, raw)
    elif ep == "queue-access":
        assert model.allowed is (raw["allowed"] == "true") and model.user == raw["user"]
    elif ep in ("node-labels", "node-labels-of-node"):
        assert model == () and raw == {}
    elif ep in ("node-to-labels", "labels-to-nodes"):
        assert model == {} and list(raw.values()) == [None]
    elif ENDPOINTS[ep].decode is None:
        assert model is None and c.body == ENDPOINTS[ep].fixed_body
    else:  # pragma: no cover - a new endpoint without an expectation
        pytest.fail(f"no expectation for endpoint {ep}")


@pytest.mark.parametrize("c", SUCCESS, ids=lambda c: c.name)
def test_success_capture_decodes_to_the_recorded_values(c: Capture) -> None:
    ep, _ = match(c.method, c.path)  # type: ignore[misc]
    model = decode_answer(ep, c.status, c.body, method=c.method, path=c.path)
    check(c, model, _raw(c))
    if ep.encode is None:
        return
    encoded = ep.encode(model)
    recorded = _json.loads(c.body)
    assert _json.loads(_json.dumps(encoded)) == recorded
    assert _json.dumps(encoded) == c.body, "the emulator's bytes differ from the RM's"


_STATUS_CLASS = {400: errors.RMBadRequestError, 403: errors.RMForbiddenError, 404: errors.RMNotFoundError,
                 500: errors.RMServerError}


@pytest.mark.parametrize("c", ERRORS, ids=lambda c: c.name)
def test_error_capture_parses_with_context(c: Capture) -> None:
    body = c.body
    err = errors.error_for_response(method=c.method, path=c.path, status=c.status, body=body,
                                    rm_url="http://localhost:8088")
    assert type(err) is _STATUS_CLASS[c.status]
    assert isinstance(err, errors.RMHTTPError) and isinstance(err, errors.RMError)
    assert (err.method, err.path, err.status) == (c.method, c.path, c.status)
    assert c.content_type is not None and c.content_type.startswith("application/json")
    text = body.decode()
    if text.lstrip().startswith('{"RemoteException"'):
        remote = json.loads(text)["RemoteException"]
        assert err.remote_exception == remote["exception"]
        assert err.remote_java_class == remote["javaClassName"]
        assert err.remote_message == remote.get("message", "")
        assert remote["exception"] in str(err)
    else:  # plain text served as application/json (signal, scheduler-conf, delegation token)
        assert err.remote_exception is None and err.remote_java_class is None
        assert err.remote_message == text.strip() and err.remote_message
    rendered = str(err)
    assert f"{c.method} {c.path}" in rendered and f"HTTP {c.status}" in rendered
    assert (err.remote_message or "")[:40] in rendered
    found = match(c.method, c.path)
    if found is not None:  # the client's own path raises the same thing
        with pytest.raises(type(err)) as raised:
            decode_answer(found[0], c.status, body, method=c.method, path=c.path)
        assert raised.value.remote_message == err.remote_message


def test_plain_text_error_forms_are_recorded() -> None:
    """The three plain-text families the parser must handle are really in the captures."""
    plain = {c.name for c in ERRORS if not c.body.lstrip().startswith(b"{")}
    assert {"err-container-signal-bad-command", "err-container-signal-bad-containerid",
            "err-scheduler-conf-not-mutable", "err-scheduler-conf-version",
            "err-delegation-token-simple-auth"} <= plain


def test_error_hints_for_known_336_failures() -> None:
    c = BY_NAME["err-apps-id-priority-put-app-in-reservation-queue"]
    with pytest.raises(errors.RMServerError) as raised:
        decode_answer(ENDPOINTS["app-priority-put"], c.status, c.body, method=c.method, path=c.path)
    assert raised.value.remote_exception == "ClassCastException" and "reservable" in (raised.value.hint or "")
    assert "non-reservable leaf queue" in str(raised.value)  # the hint is part of the message
    c = BY_NAME["err-reservation-submit-6-PlanningQuotaException"]
    with pytest.raises(errors.RMBadRequestError) as raised2:
        decode_answer(ENDPOINTS["reservation-submit"], c.status, c.body, method=c.method, path=c.path)
    assert "quota" in (raised2.value.hint or "")

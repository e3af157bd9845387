"""The node-ordering face over real loopback servers: the control plane's node-ordering loop
publishes from the harvesting state on the board, GET /v1/yarn/node-ordering long-polls it
(ETag, 304), gRPC GetNodeOrdering reads it — wired as harvester/app.py wires them."""

from __future__ import annotations

import threading
import time
from typing import Iterator

import grpc
import pytest
import requests
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.advice.grpc_server import GrpcServer
from harvester.advice.node_ordering_http import PATH, node_ordering_route
from harvester.advice.yarn_advisor import yarn_advisor_service
from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.board.node_ordering import SCHEMA
from harvester.config import parse_settings
from harvester.control import ControlPlane
from harvester.decisions.guard import GuardDecision
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.runner import LoopSpec
from harvester.observability.metrics import Metrics
from harvester.telemetry.memory import InMemoryTelemetrySource
from harvester.v1 import yarn_advisor_pb2, yarn_advisor_pb2_grpc

from test_node_ordering import CLASSES, NODES

NOW = 1_800_000_000.0


@pytest.fixture()
def face() -> Iterator[tuple[str, yarn_advisor_pb2_grpc.YarnAdvisorStub, HarvestingBoard, LoopSpec, Metrics]]:
    settings = parse_settings({"harvesting": {"node_ordering": {
        "queues": {"root.etl": "long", "root.adhoc": "short"}, "stale_after_s": 60, "long_poll_max_s": 2}}}, environ={})
    board, metrics = Board(), Metrics(CollectorRegistry())
    plane = ControlPlane(settings, board, source=InMemoryTelemetrySource(), store=SqliteHistoryStore(":memory:"),
                         metrics=metrics)
    loop = next(spec for spec in plane.loops if spec.name == "node-ordering")
    assert loop.interval_s == settings.harvesting.control_period_s, "every guard period"
    admin = AdminServer("127.0.0.1:0")
    admin.route(PATH, node_ordering_route(plane.node_ordering, max_wait_s=2))
    admin.start()
    server = GrpcServer("127.0.0.1:0", metrics, [yarn_advisor_service(plane.harvesting, metrics, orderings=plane.node_ordering)])
    server.start()
    channel = grpc.insecure_channel(server.address)
    yield (f"http://{admin.address}{PATH}", yarn_advisor_pb2_grpc.YarnAdvisorStub(channel), plane.harvesting, loop,
           metrics)
    board.close()
    channel.close()
    server.stop(0.1)
    admin.stop()


def _decide(state: HarvestingBoard, at: float) -> None:
    state.publish_classes(CLASSES)
    state.publish_guard(GuardDecision(at, (), NODES))


def test_before_the_first_tick_the_face_says_so(face) -> None:
    url, stub, _, _, _ = face
    r = requests.get(url, timeout=5)
    assert r.status_code == 503 and r.headers["Retry-After"] == "5" and "node-ordering loop" in r.json()["error"]
    with pytest.raises(grpc.RpcError) as info:
        stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.etl"))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_orders_served_over_http_with_etag_and_304(face) -> None:
    url, _, state, parts, metrics = face
    _decide(state, NOW - 5)
    summary = parts.tick(NOW).summary
    r = requests.get(url, timeout=5)
    assert r.status_code == 200 and r.headers["ETag"] == f'"{summary["version"]}"'
    doc = r.json()
    assert doc["schema"] == SCHEMA and doc["version"] == summary["version"] == int(NOW * 1000)
    assert doc["orderings"]["long"]["node_ids"] == ["c1:1", "p2:1", "p1:1", "u2:1", "u1:1", "x1:1"]
    assert doc["orderings"]["short"]["node_ids"][:2] == ["u2:1", "u1:1"]
    assert doc["queues"] == {"root.adhoc": "short", "root.etl": "long"}
    assert doc["guard_as_of_ms"] == int((NOW - 5) * 1000)
    again = requests.get(url, headers={"If-None-Match": r.headers["ETag"]}, params={"wait": "0"}, timeout=5)
    assert again.status_code == 304 and again.content == b""
    # the same orders a tick later: no new version (long-polls are not woken for nothing)
    assert parts.tick(NOW + 5).summary["version"] == summary["version"]
    assert metrics.registry.get_sample_value("harvester_node_ordering_advised_nodes", {"job_type": "long"}) == 6


def test_long_poll_wakes_on_a_changed_order_and_stale_guard_means_no_advice(face) -> None:
    url, _, state, parts, _ = face
    _decide(state, NOW - 5)
    first = parts.tick(NOW).summary["version"]
    got: dict = {}

    def poll() -> None:
        got["r"] = requests.get(url, headers={"If-None-Match": f'"{first}"'}, params={"wait": "2"}, timeout=10)

    t = threading.Thread(target=poll)
    t.start()
    time.sleep(0.2)  # let the request reach the server (an ordering aid, not an assertion)
    later = parts.tick(NOW + 100).summary  # the guard's decision is now 105 s old (> 60 s)
    t.join(10)
    r = got["r"]
    assert r.status_code == 200 and r.json()["version"] == later["version"] == first + 1
    assert all(o["node_ids"] == [] and "no advice" in o["reason"] for o in r.json()["orderings"].values())


def test_grpc_get_node_ordering_by_queue_or_job_type(face) -> None:
    _, stub, state, parts, _ = face
    _decide(state, NOW - 5)
    version = parts.tick(NOW).summary["version"]
    etl = stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.etl"))
    assert etl.version == version and etl.job_type == yarn_advisor_pb2.JOB_TYPE_LONG
    assert list(etl.node_ids) == ["c1:1", "p2:1", "p1:1", "u2:1", "u1:1", "x1:1"] and "weighted room" in etl.reason
    short = stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.etl",
                                                                         job_type=yarn_advisor_pb2.JOB_TYPE_SHORT))
    assert short.job_type == yarn_advisor_pb2.JOB_TYPE_SHORT and short.node_ids[0] == "u2:1"
    same = stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.etl",
                                                                        if_version_differs_from=version))
    assert same.unchanged and not same.node_ids and same.version == version
    with pytest.raises(grpc.RpcError) as info:
        stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.unknown"))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "harvesting.node_ordering.queues" in info.value.details()
    # one RM (no rm.clusters): "default" is the same document, another name is no sub-cluster
    named = stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.etl", subcluster="default"))
    assert list(named.node_ids) == list(etl.node_ids) and named.version == version
    with pytest.raises(grpc.RpcError) as info:
        stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.etl", subcluster="east"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND and "rm.clusters is not set" in info.value.details()


def test_bad_wait_is_400(face) -> None:
    url, _, state, parts, _ = face
    _decide(state, NOW)
    parts.tick(NOW)
    assert requests.get(url, params={"wait": "-1"}, timeout=5).status_code == 400

"""HDFS-H wired end to end: a fake NameNode over HTTP -> the control plane's poll tick -> the
state board -> the HTTP and gRPC faces (advice/hdfs_wiring.py), as harvester/app.py wires them."""

from __future__ import annotations

import grpc
import requests
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.advice.grpc_server import GrpcServer
from harvester.advice.hdfs_wiring import HDFS_SERVICE, hdfs_faces
from harvester.board import Board
from harvester.board.hdfs import PlacementBoard
from harvester.config import parse_settings
from harvester.control import ControlPlane
from harvester.history.sqlite import SqliteHistoryStore
from harvester.observability.metrics import Metrics
from harvester.telemetry.memory import InMemoryTelemetrySource
from harvester.telemetry.namenode_jmx import NameNodeJmxClient
from harvester.v1 import hdfs_placement_pb2 as pb
from harvester.v1 import hdfs_placement_pb2_grpc as pb_grpc
from nn_fakes import DN, FakeNameNode, info_doc


def test_disabled_builds_nothing_and_says_how_to_enable() -> None:
    settings, metrics, store, board = parse_settings({}, environ={}), Metrics(CollectorRegistry()), SqliteHistoryStore(":memory:"), Board()
    plane = ControlPlane(settings, board, source=InMemoryTelemetrySource(), store=store, metrics=metrics)
    assert plane.hdfs is None and not any(spec.name.startswith("hdfs") for spec in plane.loops)
    hdfs = hdfs_faces(settings.hdfs, PlacementBoard(board), store, metrics)
    assert (hdfs.service, hdfs.routes) == (None, {})
    assert "hdfs.enabled" in hdfs.unimplemented_reason and hdfs.status() == {"enabled": False}


def test_enabled_from_jmx_to_both_faces() -> None:
    nn = FakeNameNode(info_doc([DN(f"web-{i}", f"10.0.0.{i}", rack=f"/r{i % 2}") for i in range(3)] +
                               [DN(f"db-{i}", f"10.0.1.{i}", rack=f"/r{i % 2}") for i in range(3)]))
    settings = parse_settings({
        "harvesting": {"tenants": [{"tenant": "web", "hostname_pattern": "^web-"}, {"tenant": "db", "hostname_pattern": "^db-"}]},
        "hdfs": {"enabled": True, "namenode_urls": [nn.url]},
    }, environ={})
    metrics, store, board = Metrics(CollectorRegistry()), SqliteHistoryStore(":memory:"), Board()
    client = NameNodeJmxClient([nn.url])
    plane = ControlPlane(settings, board, source=InMemoryTelemetrySource(), store=store, metrics=metrics, namenode=client)
    loops = {spec.name: spec for spec in plane.loops}
    assert [(n, loops[n].interval_s) for n in ("hdfs-poll", "hdfs-refit")] == [("hdfs-poll", 30.0), ("hdfs-refit", 86400.0)]
    hdfs = hdfs_faces(settings.hdfs, PlacementBoard(board), store, metrics)
    admin = AdminServer("127.0.0.1:0")
    for path, handler in hdfs.routes.items():
        admin.route(path, handler)
    server = GrpcServer("127.0.0.1:0", metrics, [hdfs.service])
    admin.start()
    server.start()
    channel = grpc.insecure_channel(server.address)
    try:
        base = f"http://{admin.address}"
        assert requests.get(f"{base}/v1/hdfs/placement-table", timeout=5).status_code == 503
        loops["hdfs-poll"].tick(1_800_000_000.0)
        r = requests.get(f"{base}/v1/hdfs/placement-table", timeout=5)
        assert r.status_code == 200 and r.headers["ETag"] == '"1"'
        assert {d["tenant"] for d in r.json()["datanodes"]} == {"web", "db"}
        grid = requests.get(f"{base}/v1/hdfs/grid", timeout=5).json()
        assert grid["version"] == 1 and {t["tenant"] for t in grid["tenants"]} == {"web", "db"}
        assert all(t["cpu_source"] == "default" for t in grid["tenants"]), "no CPU history in an empty store"
        status = requests.get(f"{base}/v1/hdfs/status", timeout=5).json()
        assert status["published_version"] == 1 and status["versions"][0]["reasons"] == ["first table"]
        assert status["namenode"] == nn.url
        stub = pb_grpc.HdfsPlacementStub(channel)
        assert stub.GetPlacementTable(pb.GetPlacementTableRequest()).version == 1
        targets = stub.ChooseTargets(pb.ChooseTargetsRequest(replication=2, writer="web-0", seed=1)).targets
        assert targets[0].datanode_id == "10.0.0.0:9866" and targets[1].tenant == "db"
        assert server.services[HDFS_SERVICE] == "serving"
    finally:
        board.close()
        client.close()
        channel.close()
        server.stop(0.2)
        admin.stop()
        nn.close()

"""The composition root serves ConstrainedPlacement over the embedded emulator's telemetry."""

from __future__ import annotations

import grpc
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.v1 import common_pb2
from harvester.v1 import constrained_placement_pb2 as pb
from harvester.v1 import constrained_placement_pb2_grpc as pb_grpc


def test_embedded_sidecar_places_on_the_demo_cluster() -> None:
    settings = parse_settings({
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
        "embedded": {"listen": "127.0.0.1:0"}, "store": {"backend": "memory"},
        "placement": {"node_attributes": [{"hostname_pattern": "^db-", "attributes": {"disks": 12}}]},
    }, environ={})
    app = Harvester(settings, clock=SimClock(1_795_430_000.0), registry=CollectorRegistry())
    app.start(run_loops=False)
    try:
        assert app.status()["grpc"]["services"]["harvester.v1.ConstrainedPlacement"] == "serving"
        app.loop("telemetry").run_once()
        with grpc.insecure_channel(app.grpc.address) as channel:
            resp = pb_grpc.ConstrainedPlacementStub(channel).PlaceTasks(pb.PlaceTasksRequest(job_id="j", tasks=[
                pb.TaskRequest(task_id="t", resources=common_pb2.Resources(memory_mb=1024, vcores=1),
                               constraints=[pb.Constraint(attribute="disks", op=pb.CONSTRAINT_OP_GE, value="6")])]))
        assert resp.placements[0].fits_now and resp.placements[0].node_ids[0].startswith("db-")
    finally:
        app.stop()

"""harvester.v1.ConstrainedPlacement over a real loopback gRPC server, on a SimClock and a
telemetry snapshot built like the RM's (decisions tested in tests/decisions)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import grpc
import pytest
from google.protobuf import descriptor_pb2
from prometheus_client import CollectorRegistry

from harvester.advice.constrained_placement import placement_services
from harvester.advice.grpc_server import GrpcServer
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.domain import ClusterSnapshot, NodeSample, Resources
from harvester.observability.metrics import Metrics
from harvester.v1 import common_pb2
from harvester.v1 import constrained_placement_pb2 as pb
from harvester.v1 import constrained_placement_pb2_grpc as pb_grpc

T0 = 1_795_430_000.0
ROOT = Path(__file__).resolve().parents[2]


def _node(i: int, host: str, rack: str, used_vc: int = 0, labels: tuple[str, ...] = (), state: str = "RUNNING") -> NodeSample:
    return NodeSample(f"{host}:45454", T0, state, rack, host, Resources(8192, 8), Resources(used_vc * 1024, used_vc), used_vc,
                      0.5, 0.0, 1000.0, 0.0, 8.0, labels)


NODES = (
    _node(0, "web-00", "/r1"), _node(1, "web-01", "/r1", used_vc=6), _node(2, "gpu-00", "/r2", labels=("gpu",)),
    _node(3, "arm-00", "/r2"), _node(4, "arm-01", "/r3", state="LOST"),
)
SETTINGS = {
    "telemetry": {"stale_after_s": 30},
    "placement": {
        "node_attributes": [{"hostname_pattern": ".", "attributes": {"isa": "x86_64"}},
                            {"hostname_pattern": "^web-", "attributes": {"cores": 16}},
                            {"hostname_pattern": "^arm-", "attributes": {"isa": "aarch64", "cores": 64}}],
        "label_attributes": {"gpu": {"gpu": 1, "cores": 32}},
        "max_wait_s": 5,
        "max_tasks_per_request": 50,
    },
}


class Source:
    def __init__(self) -> None:
        self.snapshot: ClusterSnapshot | None = None

    def latest(self) -> ClusterSnapshot | None:
        return self.snapshot


@pytest.fixture()
def served() -> Iterator[tuple[pb_grpc.ConstrainedPlacementStub, Source, SimClock, Metrics]]:
    clock, source, metrics = SimClock(T0), Source(), Metrics(CollectorRegistry())
    settings = parse_settings(SETTINGS, environ={})
    server = GrpcServer("127.0.0.1:0", metrics, placement_services(source.latest, clock, settings, metrics))
    server.start()
    channel = grpc.insecure_channel(server.address)
    yield pb_grpc.ConstrainedPlacementStub(channel), source, clock, metrics
    channel.close()
    server.stop(0.1)


def _task(task_id: str, *constraints: pb.Constraint, mb: int = 1024, vc: int = 1, **kw) -> pb.TaskRequest:
    return pb.TaskRequest(task_id=task_id, resources=common_pb2.Resources(memory_mb=mb, vcores=vc),
                          constraints=list(constraints), **kw)


def _c(attribute: str, op: int, value: str = "", kind: int = pb.CONSTRAINT_KIND_HARD, values=()) -> pb.Constraint:
    return pb.Constraint(attribute=attribute, op=op, value=value, kind=kind, values=list(values))


def _code(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code(), info.value.details()


def test_no_snapshot_or_a_stale_one_is_refused(served) -> None:
    stub, source, clock, _ = served
    req = pb.PlaceTasksRequest(job_id="j", tasks=[_task("a")])
    assert _code(lambda: stub.PlaceTasks(req)) == (
        grpc.StatusCode.FAILED_PRECONDITION, "no telemetry snapshot yet: Harvester has not polled the RM")
    source.snapshot = ClusterSnapshot(T0, "rm", NODES)
    clock.advance(31)
    code, details = _code(lambda: stub.GetConstraintResourceVector(pb.GetConstraintResourceVectorRequest()))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "31 s old" in details and "not placing on stale data" in details


def test_places_a_batch_with_attributes_from_config_and_labels(served) -> None:
    stub, source, _, metrics = served
    source.snapshot = ClusterSnapshot(T0, "rm", NODES)
    resp = stub.PlaceTasks(pb.PlaceTasksRequest(job_id="j", candidates_per_task=2, tasks=[
        _task("any"),
        _task("arm", _c("isa", pb.CONSTRAINT_OP_EQ, "aarch64")),
        _task("gpu", _c("gpu", pb.CONSTRAINT_OP_EQ, "1"), _c("cores", pb.CONSTRAINT_OP_GE, "32")),
        _task("labelled", _c("label", pb.CONSTRAINT_OP_IN, values=["gpu", "fpga"])),
        _task("big", _c("cores", pb.CONSTRAINT_OP_GT, "100")),
        _task("fast", _c("clock_ghz", pb.CONSTRAINT_OP_GT, "3", kind=pb.CONSTRAINT_KIND_SOFT)),
    ]))
    placed = {p.task_id: p for p in resp.placements}
    assert placed["arm"].node_ids[0] == "arm-00:45454", "arm-01 is LOST"
    assert list(placed["arm"].node_ids) == ["arm-00:45454"], "the only RUNNING arm node"
    assert placed["gpu"].node_ids[0] == "gpu-00:45454" and placed["labelled"].node_ids[0] == "gpu-00:45454"
    assert all(p.fits_now and p.expected_queueing_delay_s == 0 for p in resp.placements)
    assert list(resp.unplaceable) == ["big"] and "cores>100" in resp.unplaceable_reasons[0].reason
    assert list(placed["fast"].relaxed_soft) == ["clock_ghz>3"] and "relaxed soft clock_ghz>3" in placed["fast"].reason
    assert resp.placements[-1].task_id in {"any", "fast"}, "the scarce tasks were placed first"
    assert resp.snapshot_time.seconds == int(T0)
    assert metrics.registry.get_sample_value("harvester_placement_tasks_total", {"outcome": "placed"}) == 5
    assert metrics.registry.get_sample_value("harvester_placement_tasks_total", {"outcome": "unplaceable"}) == 1
    assert metrics.registry.get_sample_value("harvester_placement_decision_duration_seconds_count") == 1


def test_free_resources_of_the_snapshot_bound_the_batch(served) -> None:
    stub, source, _, _ = served
    source.snapshot = ClusterSnapshot(T0, "rm", NODES)
    # web-01 has 2 vcores free, web-00 8: ten 1-vcore web tasks... only the x86 nodes count
    resp = stub.PlaceTasks(pb.PlaceTasksRequest(job_id="j", tasks=[
        _task(f"t{i}", _c("hostname", pb.CONSTRAINT_OP_IN, values=["web-00", "web-01"])) for i in range(12)]))
    fits = [p for p in resp.placements if p.fits_now]
    assert len(fits) == 10
    queued = [p for p in resp.placements if not p.fits_now]
    assert len(queued) == 2 and all(0 < p.expected_queueing_delay_s < math.inf for p in queued)
    assert all(set(p.node_ids) == {"web-00:45454", "web-01:45454"} for p in queued)


def test_demand_window_feeds_the_crv(served) -> None:
    stub, source, clock, _ = served
    source.snapshot = ClusterSnapshot(T0, "rm", NODES)
    stub.PlaceTasks(pb.PlaceTasksRequest(job_id="j1", tasks=[_task(f"a{i}", _c("isa", pb.CONSTRAINT_OP_EQ, "aarch64"))
                                                             for i in range(3)]))
    crv = stub.GetConstraintResourceVector(pb.GetConstraintResourceVectorRequest())
    dims = {d.key: d for d in crv.dimensions}
    arm = dims["isa=aarch64"]
    assert (arm.attribute, arm.value, arm.op, arm.demand, arm.supply, arm.ratio) == (
        "isa", "aarch64", pb.CONSTRAINT_OP_EQ, 3.0, 1.0, 3.0)
    assert dims["*"].demand == 3.0 and dims["*"].supply == 4.0 and crv.window_s == 300
    assert arm.expected_queueing_delay_s > 0
    # the next batch sees the window's demand in its CRV ratio: (3 + 1) / 1
    resp = stub.PlaceTasks(pb.PlaceTasksRequest(job_id="j2", tasks=[_task("b", _c("isa", pb.CONSTRAINT_OP_EQ, "aarch64"))]))
    assert resp.placements[0].crv_ratio == 4.0
    clock.advance(301)
    source.snapshot = ClusterSnapshot(clock.now(), "rm", NODES)
    assert {d.key for d in stub.GetConstraintResourceVector(pb.GetConstraintResourceVectorRequest()).dimensions} == {"*"}


@pytest.mark.parametrize(("tasks", "message"), [
    ([], "tasks is empty"),
    ([_task("")], "tasks[0].task_id is empty"),
    ([_task("a"), _task("a")], "tasks[1].task_id 'a' repeats an earlier task"),
    ([_task("a", mb=0)], "tasks[0].resources: memory_mb must be within 1..2147483647"),
    ([_task("a", expected_duration_s=-1)], "tasks[0].expected_duration_s must be finite and within 0..31536000 s"),
    ([_task("a", _c("cores", pb.CONSTRAINT_OP_GT, "many"))], "tasks[0].constraints[0]: cores>many: '>' needs a number"),
    ([_task("a", _c("cores", pb.CONSTRAINT_OP_UNSPECIFIED, "1"))], "tasks[0].constraints[0].op: give one of"),
    ([_task("a", _c("", pb.CONSTRAINT_OP_EQ, "1"))], "tasks[0].constraints[0]: attribute ''"),
    ([_task("a", placement=[pb.PlacementConstraint()])], "tasks[0].placement[0]: kind must be AFFINITY or ANTI_AFFINITY"),
    ([_task(f"t{i}") for i in range(51)], "tasks: 51 tasks exceed placement.max_tasks_per_request (50)"),
])
def test_bad_requests_name_the_field(served, tasks, message: str) -> None:
    stub, source, _, _ = served
    source.snapshot = ClusterSnapshot(T0, "rm", NODES)
    code, details = _code(lambda: stub.PlaceTasks(pb.PlaceTasksRequest(job_id="j", tasks=tasks)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith(message)


def test_placement_constraints_over_grpc(served) -> None:
    stub, source, _, _ = served
    source.snapshot = ClusterSnapshot(T0, "rm", NODES)
    spread = pb.PlacementConstraint(kind=pb.PLACEMENT_KIND_ANTI_AFFINITY)
    resp = stub.PlaceTasks(pb.PlaceTasksRequest(job_id="j", tasks=[_task(f"s{i}", placement=[spread]) for i in range(3)]))
    racks = {p.node_ids[0].split("-")[0] + p.node_ids[0] for p in resp.placements}
    assert len(resp.placements) == 2 and len(racks) == 2, "two RUNNING racks: the third task cannot spread"
    assert list(resp.unplaceable) == ["s2"]


def test_disabled_means_no_service() -> None:
    settings = parse_settings({"placement": {"enabled": False}}, environ={})
    assert placement_services(lambda: None, SimClock(0), settings, Metrics(CollectorRegistry())) == []


def _file_descriptor(proto: Path, tmp: Path) -> descriptor_pb2.FileDescriptorProto:
    out = tmp / "set.pb"
    include = proto.parent
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"-I{include}",
                    f"--descriptor_set_out={out}", proto.name], cwd=include, check=True)
    fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return fds.file[-1]


def test_the_contract_only_grew_since_the_first_version(tmp_path: Path) -> None:
    old = _file_descriptor(Path(__file__).parent / "data" / "constrained_placement_v0.proto", tmp_path)
    new = descriptor_pb2.FileDescriptorProto.FromString(pb.DESCRIPTOR.serialized_pb)
    new_msgs = {m.name: m for m in new.message_type}
    for m in old.message_type:
        assert m.name in new_msgs, f"message {m.name} removed"
        fields = {f.number: f for f in new_msgs[m.name].field}
        for f in m.field:
            g = fields.get(f.number)
            assert g is not None and (g.name, g.type, g.label, g.type_name) == (f.name, f.type, f.label, f.type_name), \
                f"{m.name}.{f.name} (#{f.number}) changed"
    new_enums = {e.name: {v.number: v.name for v in e.value} for e in new.enum_type}
    for e in old.enum_type:
        assert all(new_enums[e.name].get(v.number) == v.name for v in e.value), f"enum {e.name} changed"
    new_methods = {(s.name, m.name): (m.input_type, m.output_type) for s in new.service for m in s.method}
    for s in old.service:
        for m in s.method:
            assert new_methods[(s.name, m.name)] == (m.input_type, m.output_type)

"""gRPC harvester.v1.HdfsPlacement over a real server on loopback (advice/hdfs_grpc.py)."""

from __future__ import annotations

import threading
import time
from typing import Iterator

import grpc
import pytest
from prometheus_client import CollectorRegistry

from harvester.advice.grpc_server import GrpcServer
from harvester.board.hdfs import PlacementBoard
from harvester.advice.hdfs_grpc import hdfs_service
from harvester.observability.metrics import Metrics
from harvester.v1 import hdfs_placement_pb2 as pb
from harvester.v1 import hdfs_placement_pb2_grpc as pb_grpc
from hdfs_tables import nine_cell_table


@pytest.fixture()
def served() -> Iterator[tuple[pb_grpc.HdfsPlacementStub, PlacementBoard, Metrics]]:
    board = PlacementBoard()
    metrics = Metrics(CollectorRegistry())
    server = GrpcServer("127.0.0.1:0", metrics,
                        [hdfs_service(board, metrics, default_block_size=128 << 20, max_watch_streams=2)])
    server.start()
    channel = grpc.insecure_channel(server.address)
    yield pb_grpc.HdfsPlacementStub(channel), board, metrics
    board.close()
    channel.close()
    server.stop(0.5)


def code_of(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code(), info.value.details()


def test_every_method_fails_precondition_until_a_table_exists(served) -> None:
    stub, _, _ = served
    for call in (lambda: stub.GetPlacementTable(pb.GetPlacementTableRequest()),
                 lambda: stub.ChooseTargets(pb.ChooseTargetsRequest(replication=3)),
                 lambda: stub.ChooseReplicaToDelete(pb.ChooseReplicaToDeleteRequest(replicas=["a:1", "b:1"], replication=1)),
                 lambda: stub.VerifyPlacement(pb.VerifyPlacementRequest(replicas=["a:1"]))):
        code, details = code_of(call)
        assert code == grpc.StatusCode.FAILED_PRECONDITION and "no placement table yet" in details


def test_get_table_and_the_unchanged_answer(served) -> None:
    stub, board, _ = served
    board.publish(nine_cell_table(4, grid_version=2))
    full = stub.GetPlacementTable(pb.GetPlacementTableRequest())
    assert (full.version, full.grid_version, full.unchanged, len(full.cells), len(full.datanodes)) == (4, 2, False, 9, 18)
    assert full.generated_at.ToMilliseconds() == 1_795_431_979_089
    e = full.datanodes[0]
    assert (e.datanode_id, e.hostname, e.tenant, e.environment, e.row, e.col) == ("10.1.0.0:9866", "dn000", "c00", "env00", 0, 0)
    same = stub.GetPlacementTable(pb.GetPlacementTableRequest(if_version_differs_from=4))
    assert (same.version, same.unchanged, len(same.datanodes)) == (4, True, 0)
    other = stub.GetPlacementTable(pb.GetPlacementTableRequest(if_version_differs_from=3))
    assert not other.unchanged and len(other.datanodes) == 18


def test_choose_targets_runs_algorithm2_on_the_table(served) -> None:
    stub, board, _ = served
    board.publish(nine_cell_table(5, busy=frozenset({"10.1.4.0:9866", "10.1.4.1:9866"})))
    req = pb.ChooseTargetsRequest(writer="dn000", replication=3, seed=11, excluded=["10.1.8.0:9866", "unknown:1"])
    a, b = stub.ChooseTargets(req), stub.ChooseTargets(req)
    assert a == b, "a seed makes the choice deterministic"
    assert a.table_version == 5 and len(a.targets) == 3
    assert a.targets[0].datanode_id == "10.1.0.0:9866", "the writer's DataNode holds the first replica"
    cells = [(t.row, t.col) for t in a.targets]
    assert len({r for r, _ in cells}) == 3 and len({c for _, c in cells}) == 3, "Algorithm 2: distinct rows and columns"
    assert all(t.datanode_id not in ("10.1.8.0:9866", "10.1.4.0:9866", "10.1.4.1:9866") for t in a.targets)
    assert all(not t.relaxed for t in a.targets) and a.reason.startswith("3 of 3 targets")
    more = stub.ChooseTargets(pb.ChooseTargetsRequest(replication=3, existing=[t.datanode_id for t in a.targets[:2]]))
    assert len(more.targets) == 1 and more.targets[0].datanode_id not in {t.datanode_id for t in a.targets[:2]}


def test_delete_and_verify(served) -> None:
    stub, board, _ = served
    board.publish(nine_cell_table(6))
    same_row = ["10.1.0.0:9866", "10.1.1.0:9866", "10.1.4.1:9866"]  # rows 0, 0, 1
    v = stub.VerifyPlacement(pb.VerifyPlacementRequest(replicas=[*same_row, "9.9.9.9:9866"], replication=3))
    assert v.table_version == 6 and not v.satisfied and any(x.startswith("row:") for x in v.violations)
    assert list(v.unknown) == ["9.9.9.9:9866"]
    d = stub.ChooseReplicaToDelete(pb.ChooseReplicaToDeleteRequest(replicas=same_row, replication=2))
    assert len(d.delete) == 1 and d.delete[0] in same_row[:2], "removing a same-row replica loses no diversity"
    ok = stub.VerifyPlacement(pb.VerifyPlacementRequest(replicas=["10.1.0.0:9866", "10.1.4.1:9866", "10.1.8.0:9866"]))
    assert ok.satisfied and list(ok.violations) == []


@pytest.mark.parametrize(
    ("method", "request_", "expected"),
    [
        ("ChooseTargets", pb.ChooseTargetsRequest(replication=0), "replication must be within 1..512"),
        ("ChooseTargets", pb.ChooseTargetsRequest(replication=600), "replication must be within 1..512"),
        ("ChooseTargets", pb.ChooseTargetsRequest(replication=3, block_size_bytes=-1), "block_size_bytes must be >= 0"),
        ("ChooseTargets", pb.ChooseTargetsRequest(replication=3, excluded=["a:1", " "]), "excluded[1] is empty"),
        ("ChooseReplicaToDelete", pb.ChooseReplicaToDeleteRequest(replication=1), "replicas is empty"),
        ("ChooseReplicaToDelete", pb.ChooseReplicaToDeleteRequest(replicas=["a:1"], replication=0), "replication must be >= 1"),
        ("VerifyPlacement", pb.VerifyPlacementRequest(), "replicas is empty"),
        ("VerifyPlacement", pb.VerifyPlacementRequest(replicas=["a:1"], replication=-2), "replication must be >= 0"),
        ("GetPlacementTable", pb.GetPlacementTableRequest(if_version_differs_from=-1), "if_version_differs_from must be >= 0"),
    ],
)
def test_bad_requests_are_invalid_arguments_with_the_field_named(served, method, request_, expected) -> None:
    stub, board, _ = served
    board.publish(nine_cell_table(1))
    code, details = code_of(lambda: getattr(stub, method)(request_))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and expected in details


def test_watch_streams_the_first_table_then_every_new_version(served) -> None:
    stub, board, metrics = served
    stream = stub.WatchPlacementTable(pb.WatchPlacementTableRequest())
    messages = iter(stream)
    got: list[pb.PlacementTable] = []
    reader = threading.Thread(target=lambda: got.append(next(messages)))
    reader.start()
    time.sleep(0.2)
    assert got == [], "no table yet: the stream waits instead of failing"
    board.publish(nine_cell_table(1))
    reader.join(5)
    assert [g.version for g in got] == [1]
    board.publish(nine_cell_table(2, busy=frozenset({"10.1.0.0:9866"})))
    second = next(messages)
    assert second.version == 2 and second.datanodes[0].busy
    assert metrics.registry.get_sample_value("harvester_hdfs_table_waiters", {"face": "grpc_watch"}) == 1
    stream.cancel()


def test_watch_since_the_current_version_waits_for_the_next(served) -> None:
    stub, board, _ = served
    board.publish(nine_cell_table(3))
    stream = stub.WatchPlacementTable(pb.WatchPlacementTableRequest(since_version=3))
    threading.Timer(0.3, lambda: board.publish(nine_cell_table(4))).start()
    first = next(iter(stream))
    stream.cancel()
    assert first.version == 4


def test_watch_streams_are_limited(served) -> None:
    stub, board, metrics = served
    board.publish(nine_cell_table(1))
    open_streams = [stub.WatchPlacementTable(pb.WatchPlacementTableRequest()) for _ in range(2)]
    for s in open_streams:
        assert next(iter(s)).version == 1
    code, details = code_of(lambda: next(iter(stub.WatchPlacementTable(pb.WatchPlacementTableRequest()))))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "hdfs.max_watch_streams" in details
    assert metrics.registry.get_sample_value("harvester_hdfs_table_waiters", {"face": "grpc_watch"}) == 2
    for s in open_streams:
        s.cancel()

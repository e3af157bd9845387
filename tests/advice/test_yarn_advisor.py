"""YarnAdvisor over a real gRPC server on loopback (GrpcServer + ServiceImpl)."""

from __future__ import annotations

from typing import Iterator

import grpc
import pytest
from prometheus_client import CollectorRegistry

from harvester.advice.grpc_server import GrpcServer
from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.advice.yarn_advisor import yarn_advisor_service
from harvester.decisions.class_selection import ClassState
from harvester.decisions.guard import evaluate
from harvester.decisions.reserve import ReserveTable
from harvester.domain import Resources
from harvester.models.job_history import JobRun, fit_job_history
from harvester.models.patterns import Pattern
from harvester.models.utilization_classes import TenantAssignment, TenantClassModel, UtilizationClass
from harvester.observability.metrics import Metrics
from harvester.v1 import common_pb2, yarn_advisor_pb2, yarn_advisor_pb2_grpc

from harvesting_builders import context, node_strategy, sample, snapshot

MODEL = TenantClassModel(
    5, 1_700_000_000.5,
    (UtilizationClass("periodic-0", Pattern.PERIODIC, 0.3, 0.7, 2, 2.0),
     UtilizationClass("constant-0", Pattern.CONSTANT, 0.2, 0.22, 1, 1.0)),
    (TenantAssignment("web-a", "periodic-0", Pattern.PERIODIC, 0.3, 0.7, 0.9, 0.2, 21600),
     TenantAssignment("web-b", "periodic-0", Pattern.PERIODIC, 0.3, 0.7, 0.9, 0.2, 21600),
     TenantAssignment("db", "constant-0", Pattern.CONSTANT, 0.2, 0.22, 0.0, 0.01, 21600)),
)
CLASSES = (
    ClassState("periodic-0", Pattern.PERIODIC, 0.3, 0.7, 0.35, Resources(1 << 20, 320), nodes=20),
    ClassState("constant-0", Pattern.CONSTANT, 0.2, 0.22, 0.2, Resources(1 << 19, 160), nodes=10),
)
RESERVES = ReserveTable({"periodic-0": 0.12, "constant-0": 0.05}, {"periodic-0": "fit", "constant-0": "fit"}, 0.2)
C = common_pb2.Resources(memory_mb=2048, vcores=1)


@pytest.fixture()
def served() -> Iterator[tuple[yarn_advisor_pb2_grpc.YarnAdvisorStub, HarvestingBoard, Metrics]]:
    state = HarvestingBoard(Board())
    metrics = Metrics(CollectorRegistry())
    server = GrpcServer("127.0.0.1:0", metrics, [yarn_advisor_service(state, metrics, seed=0)])
    server.start()
    channel = grpc.insecure_channel(server.address)
    yield yarn_advisor_pb2_grpc.YarnAdvisorStub(channel), state, metrics
    channel.close()
    server.stop(0.1)


def _publish(state: HarvestingBoard) -> None:
    state.publish_model(MODEL, RESERVES, {"periodic-0": 20, "constant-0": 10})
    state.publish_classes(CLASSES)
    state.publish_jobs(fit_job_history([JobRun("etl", "application_1_0001", 0, 9000, 40)], min_runs=50))


def _code(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code(), info.value.details()


def test_select_classes_runs_algorithm_1_with_history(served) -> None:
    stub, state, metrics = served
    _publish(state)
    r = stub.SelectClasses(yarn_advisor_pb2.SelectClassesRequest(job_name="etl", container=C, seed=3))
    assert r.job_type == yarn_advisor_pb2.JOB_TYPE_LONG and r.required_containers == 40 and r.model_version == 5
    assert len(r.classes) == 1 and r.classes[0].containers == 40
    choice = r.classes[0]
    assert choice.class_id in {"periodic-0", "constant-0"} and 0 < choice.headroom <= 1 and choice.weighted_headroom > 0
    assert "peak of past runs" in r.reason and "line 10" in r.reason
    again = stub.SelectClasses(yarn_advisor_pb2.SelectClassesRequest(job_name="etl", container=C, seed=3))
    assert again == r, "a seed makes the pick deterministic"
    assert metrics.registry.get_sample_value("harvester_harvest_decision_duration_seconds_count",
                                             {"decision": "select_classes"}) == 2


def test_select_classes_with_a_dag_and_overrides(served) -> None:
    stub, state, _ = served
    _publish(state)
    dag = [yarn_advisor_pb2.Stage(name="m", tasks=300), yarn_advisor_pb2.Stage(name="r", tasks=20, parents=["m"])]
    r = stub.SelectClasses(yarn_advisor_pb2.SelectClassesRequest(job_name="new", container=C, dag=dag, last_run_seconds=60))
    assert r.job_type == yarn_advisor_pb2.JOB_TYPE_SHORT and r.required_containers == 300
    assert sum(c.containers for c in r.classes) == 300 and len(r.classes) == 2, "300 fit only in both classes"
    r = stub.SelectClasses(yarn_advisor_pb2.SelectClassesRequest(max_concurrent_containers=100000, container=C))
    assert r.job_type == yarn_advisor_pb2.JOB_TYPE_MEDIUM and list(r.classes) == [] and "line 16" in r.reason


@pytest.mark.parametrize(
    ("request_kwargs", "code", "text"),
    [
        ({"job_name": "etl"}, grpc.StatusCode.INVALID_ARGUMENT, "container"),
        ({"job_name": "etl", "container": common_pb2.Resources(memory_mb=1024, vcores=0)}, grpc.StatusCode.INVALID_ARGUMENT, "container"),
        ({"job_name": "etl", "container": C, "max_concurrent_containers": -1}, grpc.StatusCode.INVALID_ARGUMENT, "max_concurrent"),
        ({"job_name": "etl", "container": C, "last_run_seconds": -5}, grpc.StatusCode.INVALID_ARGUMENT, "last_run_seconds"),
        ({"container": C}, grpc.StatusCode.INVALID_ARGUMENT, "job_name is required"),
        ({"job_name": "x", "container": C, "dag": [yarn_advisor_pb2.Stage(name="a", tasks=1, parents=["a"])]},
         grpc.StatusCode.INVALID_ARGUMENT, "cycle"),
        ({"job_name": "never-ran", "container": C}, grpc.StatusCode.FAILED_PRECONDITION, "no past run"),
    ],
)
def test_select_classes_validates_requests(served, request_kwargs: dict, code: grpc.StatusCode, text: str) -> None:
    stub, state, _ = served
    _publish(state)
    got, details = _code(lambda: stub.SelectClasses(yarn_advisor_pb2.SelectClassesRequest(**request_kwargs)))
    assert got == code and text in details


def test_nothing_published_yet_is_a_failed_precondition(served) -> None:
    stub, _, metrics = served
    code, details = _code(lambda: stub.SelectClasses(yarn_advisor_pb2.SelectClassesRequest(job_name="etl", container=C)))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "no utilization classes" in details
    assert _code(lambda: stub.ListTenantClasses(yarn_advisor_pb2.ListTenantClassesRequest()))[0] == grpc.StatusCode.FAILED_PRECONDITION
    assert _code(lambda: stub.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest()))[0] == grpc.StatusCode.FAILED_PRECONDITION
    assert metrics.registry.get_sample_value(
        "harvester_grpc_requests_total", {"method": "/harvester.v1.YarnAdvisor/SelectClasses", "code": "FAILED_PRECONDITION"}) == 1


def test_list_tenant_classes(served) -> None:
    stub, state, _ = served
    _publish(state)
    r = stub.ListTenantClasses(yarn_advisor_pb2.ListTenantClassesRequest())
    assert r.model_version == 5 and r.fitted_at.seconds == 1_700_000_000 and r.fitted_at.nanos == 500_000_000
    by_id = {c.class_id: c for c in r.classes}
    assert list(by_id["periodic-0"].tenants) == ["web-a", "web-b"] and by_id["periodic-0"].nodes == 20
    assert by_id["constant-0"].pattern == common_pb2.PATTERN_CONSTANT
    assert by_id["periodic-0"].reserve_fraction == pytest.approx(0.12)
    assert by_id["periodic-0"].peak_utilization == pytest.approx(0.7)


def test_list_node_capacities_from_the_guards_last_decision(served) -> None:
    stub, state, _ = served
    nodes = [node_strategy("n1:1"), node_strategy("n2:1")]
    state.publish_guard(evaluate(context(snapshot([sample("n1:1", node_cpu=5.2)]), nodes)))
    r = stub.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest())
    by_id = {n.node_id: n for n in r.nodes}
    assert by_id["n1:1"].harvestable.vcores == 8 and not by_id["n1:1"].stale
    assert "16 cores − primary 5.20" in by_id["n1:1"].reason and by_id["n1:1"].primary_cpu_cores == pytest.approx(5.2)
    assert by_id["n2:1"].stale and "not in the last snapshot" in by_id["n2:1"].reason
    one = stub.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest(node_ids=["n2:1", "zz"]))
    assert [n.node_id for n in one.nodes] == ["n2:1"]
    code, details = _code(lambda: stub.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest(node_ids=[""])))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "empty" in details


def test_get_node_ordering_without_a_published_order_is_a_precondition(served) -> None:
    stub, _, _ = served  # served without a node-ordering board (tests/shim/test_node_ordering_grpc.py has one)
    code, details = _code(lambda: stub.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(queue="root.default")))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "no node ordering is published yet" in details

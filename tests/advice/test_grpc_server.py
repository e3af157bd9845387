from __future__ import annotations

from typing import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client import CollectorRegistry

from harvester.advice.grpc_server import CONTRACT, GrpcServer, ServiceImpl
from harvester.observability.metrics import Metrics
from harvester.v1 import hdfs_placement_pb2, slo_pb2, slo_pb2_grpc, yarn_advisor_pb2, yarn_advisor_pb2_grpc


class _Yarn(yarn_advisor_pb2_grpc.YarnAdvisorServicer):
    def ListTenantClasses(self, request, context):  # noqa: N802 (generated name)
        return yarn_advisor_pb2.ListTenantClassesResponse(model_version=7)


@pytest.fixture()
def served() -> Iterator[tuple[grpc.Channel, Metrics, GrpcServer]]:
    metrics = Metrics(CollectorRegistry())
    impl = ServiceImpl("harvester.v1.YarnAdvisor", _Yarn(), yarn_advisor_pb2_grpc.add_YarnAdvisorServicer_to_server)
    server = GrpcServer("127.0.0.1:0", metrics, [impl])
    server.start()
    channel = grpc.insecure_channel(server.address)
    yield channel, metrics, server
    channel.close()
    server.stop(0.1)


def test_health_serving_for_the_server_and_implemented_services(served) -> None:
    channel, _, _ = served
    stub = health_pb2_grpc.HealthStub(channel)
    assert stub.Check(health_pb2.HealthCheckRequest(service="")).status == health_pb2.HealthCheckResponse.SERVING
    assert stub.Check(health_pb2.HealthCheckRequest(service="harvester.v1.YarnAdvisor")).status == health_pb2.HealthCheckResponse.SERVING
    assert stub.Check(health_pb2.HealthCheckRequest(service="harvester.v1.SloAdvisor")).status == health_pb2.HealthCheckResponse.NOT_SERVING


def test_reflection_lists_every_contract_service(served) -> None:
    channel, _, _ = served
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    names = {s.name for s in next(responses).list_services_response.service}
    assert set(CONTRACT) <= names and "grpc.health.v1.Health" in names


def test_unimplemented_methods_answer_unimplemented_with_a_clear_message(served) -> None:
    channel, metrics, _ = served
    with pytest.raises(grpc.RpcError) as info:
        slo_pb2_grpc.SloAdvisorStub(channel).ListSlos(slo_pb2.ListSlosRequest())
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "harvester.v1.SloAdvisor/ListSlos is not implemented" in info.value.details()
    # a streaming method of an unimplemented service, too
    from harvester.v1 import hdfs_placement_pb2_grpc

    stream = hdfs_placement_pb2_grpc.HdfsPlacementStub(channel).WatchPlacementTable(hdfs_placement_pb2.WatchPlacementTableRequest())
    with pytest.raises(grpc.RpcError) as info:
        next(iter(stream))
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert metrics.registry.get_sample_value(
        "harvester_grpc_requests_total", {"method": "/harvester.v1.SloAdvisor/ListSlos", "code": "UNIMPLEMENTED"}
    ) == 1


def test_implemented_method_is_served_and_counted(served) -> None:
    channel, metrics, _ = served
    # unimplemented methods of an implemented servicer keep grpc's own UNIMPLEMENTED answer
    stub = yarn_advisor_pb2_grpc.YarnAdvisorStub(channel)
    assert stub.ListTenantClasses(yarn_advisor_pb2.ListTenantClassesRequest()).model_version == 7
    assert metrics.registry.get_sample_value(
        "harvester_grpc_requests_total", {"method": "/harvester.v1.YarnAdvisor/ListTenantClasses", "code": "OK"}
    ) == 1


def test_rejects_services_outside_the_contract() -> None:
    with pytest.raises(ValueError, match="not services of the harvester.v1 contract"):
        GrpcServer("127.0.0.1:0", Metrics(CollectorRegistry()), [ServiceImpl("x.Y", object(), lambda s, srv: None)])

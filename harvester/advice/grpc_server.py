"""The gRPC advice server: harvester.v1 services, standard health and server reflection.

Every service of the contract is registered. Those whose implementation has not landed get
a handler built from the service descriptor that answers UNIMPLEMENTED with a message naming
the method — never fake data. Every call is timed and counted by status code in `Metrics`.
"""

from __future__ import annotations

import logging
import time
from concurrent import futures
from dataclasses import dataclass
from typing import Any, Callable

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from harvester.observability.metrics import Metrics
from harvester.v1 import constrained_placement_pb2, hdfs_placement_pb2, slo_pb2, yarn_advisor_pb2

log = logging.getLogger(__name__)

#: Every service of the harvester.v1 contract, by full name.
CONTRACT: dict[str, ServiceDescriptor] = {
    d.full_name: d
    for d in (
        hdfs_placement_pb2.DESCRIPTOR.services_by_name["HdfsPlacement"],
        yarn_advisor_pb2.DESCRIPTOR.services_by_name["YarnAdvisor"],
        constrained_placement_pb2.DESCRIPTOR.services_by_name["ConstrainedPlacement"],
        slo_pb2.DESCRIPTOR.services_by_name["SloAdvisor"],
    )
}


@dataclass(frozen=True)
class ServiceImpl:
    """A servicer for one contract service and the generated function that registers it."""

    full_name: str
    servicer: Any
    register: Callable[[Any, grpc.Server], None]


def _unimplemented_handler(service: ServiceDescriptor, why: str) -> grpc.GenericRpcHandler:
    handlers = {}
    for method in service.methods:
        request_cls = message_factory.GetMessageClass(method.input_type)
        response_cls = message_factory.GetMessageClass(method.output_type)
        message = f"{service.full_name}/{method.name} is not implemented in this Harvester: {why}"

        def behaviour(request: Any, context: grpc.ServicerContext, _m: str = message) -> Any:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, _m)

        factory = grpc.unary_stream_rpc_method_handler if method.server_streaming else grpc.unary_unary_rpc_method_handler
        handlers[method.name] = factory(
            behaviour, request_deserializer=request_cls.FromString, response_serializer=response_cls.SerializeToString
        )
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


class _MetricsInterceptor(grpc.ServerInterceptor):
    """Times every call and counts it by method and final status code."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def _code(self, context: grpc.ServicerContext, failed: bool) -> str:
        code = context.code()
        if code is None:
            return "UNKNOWN" if failed else "OK"
        return code.name

    def intercept_service(self, continuation, handler_call_details):  # noqa: ANN001 (grpc API)
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        metrics = self._metrics

        if handler.unary_unary is not None:
            inner = handler.unary_unary

            def unary(request, context):
                start, failed = time.perf_counter(), True
                try:
                    response = inner(request, context)
                    failed = False
                    return response
                finally:
                    metrics.record_grpc(method, self._code(context, failed), time.perf_counter() - start)

            return handler._replace(unary_unary=unary)
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            def stream(request, context):
                start, failed = time.perf_counter(), True
                try:
                    yield from inner_stream(request, context)
                    failed = False
                finally:
                    metrics.record_grpc(method, self._code(context, failed), time.perf_counter() - start)

            return handler._replace(unary_stream=stream)
        return handler


class GrpcServer:
    """Serves the contract on `listen` (host:port; port 0 picks one, see `.port`)."""

    def __init__(
        self,
        listen: str,
        metrics: Metrics,
        implementations: list[ServiceImpl] | None = None,
        *,
        max_workers: int = 8,
        unimplemented_reason: Callable[[str], str] = lambda name: "this service's issue has not landed yet",
    ) -> None:
        impls = {i.full_name: i for i in implementations or []}
        unknown = set(impls) - set(CONTRACT)
        if unknown:
            raise ValueError(f"not services of the harvester.v1 contract: {sorted(unknown)}")
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="grpc"),
            interceptors=[_MetricsInterceptor(metrics)],
            # gRPC sets SO_REUSEPORT by default: a second sidecar would share the port silently
            options=[("grpc.so_reuseport", 0)],
        )
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self._server)
        self.services: dict[str, str] = {}
        for name, descriptor in CONTRACT.items():
            if name in impls:
                impls[name].register(impls[name].servicer, self._server)
                self.services[name] = "serving"
            else:
                self._server.add_generic_rpc_handlers((_unimplemented_handler(descriptor, unimplemented_reason(name)),))
                self.services[name] = "unimplemented"
        reflection.enable_server_reflection(
            [*CONTRACT, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
            self._server,
        )
        try:
            self.port = self._server.add_insecure_port(listen)
        except RuntimeError:  # grpcio >= 1.60 raises instead of returning 0
            self.port = 0
        if self.port == 0:
            raise OSError(f"cannot listen on {listen} for gRPC")
        self.address = f"{listen.rpartition(':')[0]}:{self.port}"

    def start(self) -> None:
        self._server.start()
        serving = health_pb2.HealthCheckResponse.SERVING
        self.health.set("", serving)
        for name, state in self.services.items():
            self.health.set(name, serving if state == "serving" else health_pb2.HealthCheckResponse.NOT_SERVING)

    def stop(self, grace_s: float) -> None:
        self.health.enter_graceful_shutdown()
        self._server.stop(grace_s).wait(grace_s + 0.5)

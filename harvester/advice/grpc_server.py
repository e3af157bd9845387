"""The gRPC advice server: harvester.v1 services, standard health and server reflection.

Every service of the contract is registered. Those whose implementation has not landed get
a handler built from the service descriptor that answers UNIMPLEMENTED with a message naming
the method — never fake data. Every call is timed and counted by status code in `Metrics`.

Robustness (issue 15): a payload that does not decode answers INVALID_ARGUMENT and logs ONE
line (gRPC's own "Exception deserializing" traceback never runs); a servicer bug answers
INTERNAL with one log line naming the exception, not UNKNOWN with a traceback per call.
Servicers refuse out-of-range values themselves with INVALID_ARGUMENT. The port is bound
without SO_REUSEPORT (`grpc.so_reuseport: 0`): a second Harvester on the same port fails to
start instead of silently sharing the traffic. TLS / mutual TLS: `credentials`
(advice/tls.py); requests larger than `max_message_bytes` get RESOURCE_EXHAUSTED.
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


class _Undecodable:
    """Stands for a request payload that did not decode (the servicer is never called)."""

    def __init__(self, error: str) -> None:
        self.error = error


def _safe_deserializer(deserialize: Callable[[bytes], Any] | None, method: str) -> Callable[[bytes], Any] | None:
    if deserialize is None:
        return None

    def decode(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception as exc:  # protobuf DecodeError and friends: the client's payload is bad
            log.info("gRPC %s: undecodable request (%d bytes): %s", method, len(data), str(exc)[:200])
            return _Undecodable(f"{type(exc).__name__}: {exc}"[:300])

    return decode


def _guarded(method: str, request: Any, context: grpc.ServicerContext) -> None:
    if isinstance(request, _Undecodable):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request does not decode as {method}'s message: {request.error}")


def _internal(method: str, exc: Exception, context: grpc.ServicerContext) -> None:
    log.error("gRPC %s failed: %s: %s", method, type(exc).__name__, str(exc)[:300])
    context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {str(exc)[:300]}")


class _MetricsInterceptor(grpc.ServerInterceptor):
    """Times every call and counts it by method and final status code; undecodable payloads
    and servicer exceptions become INVALID_ARGUMENT / INTERNAL with one log line."""

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
                    _guarded(method, request, context)
                    try:
                        response = inner(request, context)
                    except Exception as exc:
                        if context.code() is not None or isinstance(exc, grpc.RpcError):
                            raise  # an abort(): its status stands
                        _internal(method, exc, context)
                    failed = False
                    return response
                finally:
                    metrics.record_grpc(method, self._code(context, failed), time.perf_counter() - start)

            return handler._replace(unary_unary=unary,
                                    request_deserializer=_safe_deserializer(handler.request_deserializer, method))
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            def stream(request, context):
                start, failed = time.perf_counter(), True
                try:
                    _guarded(method, request, context)
                    try:
                        yield from inner_stream(request, context)
                    except Exception as exc:
                        if context.code() is not None or isinstance(exc, grpc.RpcError):
                            raise
                        _internal(method, exc, context)
                    failed = False
                finally:
                    metrics.record_grpc(method, self._code(context, failed), time.perf_counter() - start)

            return handler._replace(unary_stream=stream,
                                    request_deserializer=_safe_deserializer(handler.request_deserializer, method))
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
        credentials: grpc.ServerCredentials | None = None,
        max_message_bytes: int = 4 * 1024 * 1024,
    ) -> None:
        impls = {i.full_name: i for i in implementations or []}
        unknown = set(impls) - set(CONTRACT)
        if unknown:
            raise ValueError(f"not services of the harvester.v1 contract: {sorted(unknown)}")
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="grpc"),
            interceptors=[_MetricsInterceptor(metrics)],
            options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", max_message_bytes)],
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
            if credentials is not None:
                self.port = self._server.add_secure_port(listen, credentials)
            else:
                self.port = self._server.add_insecure_port(listen)
        except RuntimeError as exc:  # grpcio >= 1.5x raises instead of returning 0
            raise OSError(f"cannot listen on {listen} for gRPC (in use by another process?): {exc}") from None
        if self.port == 0:
            raise OSError(f"cannot listen on {listen} for gRPC (in use by another process?)")
        self.tls = credentials is not None
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

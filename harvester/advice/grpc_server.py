"""The gRPC advice server: harvester.v1 services, standard health and server reflection.

Every service of the contract is registered. Those whose implementation has not landed get
a handler built from the service descriptor that answers UNIMPLEMENTED with a message naming
the method — never fake data. Every call is timed and counted by status code in `Metrics`.

Robustness (issue 15): a payload that does not decode answers INVALID_ARGUMENT and logs ONE
line (gRPC's own "Exception deserializing" traceback never runs); a servicer bug answers
INTERNAL with one log line naming the exception, not UNKNOWN with a traceback per call.
Servicers refuse out-of-range values themselves with INVALID_ARGUMENT naming the field (huge
integers, NaN/inf, negative counts); every status message is cut to `echo.MAX_MESSAGE`
characters, and servicers echo input through `echo.shown`. The port is bound
without SO_REUSEPORT (`grpc.so_reuseport: 0`): a second Harvester on the same port fails to
start instead of silently sharing the traffic. TLS / mutual TLS: `credentials`
(advice/tls.py); requests larger than `max_message_bytes` get RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import logging
import math
import time
from concurrent import futures
from dataclasses import dataclass
from typing import Any, Callable

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from harvester.advice.grpc_forward import Forwarder
from harvester.echo import clip
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


#: The largest container or task a request may ask for (memory MB, vcores): the contract's
#: int64 memory would overflow the placement arithmetic (PlaceTasks answered INTERNAL for
#: 2^63-1), and no node has 2 PB or 2^31 cores.
MAX_MEMORY_MB = MAX_VCORES = 2**31 - 1
#: The longest duration a request may state (seconds): a year (1e308 overflowed the M/G/1 sums).
MAX_DURATION_S = 365 * 86400.0


def resources_problem(memory_mb: int, vcores: int, where: str) -> str | None:
    """Why a request's resources cannot be answered (INVALID_ARGUMENT naming `where`), or None."""
    if not 0 < memory_mb <= MAX_MEMORY_MB or not 0 < vcores <= MAX_VCORES:
        return (f"{where}: memory_mb must be within 1..{MAX_MEMORY_MB} and vcores within 1..{MAX_VCORES}, "
                f"got {memory_mb} MB, {vcores} vcores")
    return None


def duration_problem(seconds: float, where: str) -> str | None:
    """Why a stated duration cannot be used (not finite, negative, over a year), or None."""
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_DURATION_S:
        return f"{where} must be finite and within 0..{MAX_DURATION_S:.0f} s, got {seconds}"
    return None


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


class _ClippedContext:
    """The servicer's context with every status message cut (harvester/echo.py): a message that
    echoes a 20 KB name would not fit the status header, and the client would see
    RESOURCE_EXHAUSTED instead of the answer (issue 25)."""

    def __init__(self, context: grpc.ServicerContext) -> None:
        self._context = context

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._context.abort(code, clip(details))

    def set_details(self, details: str) -> None:
        self._context.set_details(clip(details))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def _guarded(method: str, request: Any, context: grpc.ServicerContext) -> None:
    if isinstance(request, _Undecodable):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request does not decode as {method}'s message: {request.error}")


def _internal(method: str, exc: Exception, context: grpc.ServicerContext) -> None:
    log.error("gRPC %s failed: %s: %s", method, type(exc).__name__, str(exc)[:300])
    context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {str(exc)[:300]}")


class _MetricsInterceptor(grpc.ServerInterceptor):
    """Times every call and counts it by method and final status code; undecodable payloads
    and servicer exceptions become INVALID_ARGUMENT / INTERNAL with one log line."""

    def __init__(self, metrics: Metrics, forwarder: Forwarder | None = None) -> None:
        self._metrics = metrics
        self._forwarder = forwarder

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
        if self._forwarder is not None and self._forwarder.owns(method, handler):
            return handler  # the main process decodes, times and counts it
        metrics = self._metrics

        if handler.unary_unary is not None:
            inner = handler.unary_unary

            def unary(request, context):
                start, failed = time.perf_counter(), True
                try:
                    _guarded(method, request, context)
                    try:
                        response = inner(request, _ClippedContext(context))
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
                        yield from inner_stream(request, _ClippedContext(context))
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
        forwarder: Forwarder | None = None,
        states: dict[str, str] | None = None,
    ) -> None:
        """`forwarder` (the advice process, advice/advice_process.py): what `implementations` do not
        answer is forwarded instead of answered UNIMPLEMENTED; `states` then says which services the
        main process serves ("serving" / "unimplemented"), for health."""
        impls = {i.full_name: i for i in implementations or []}
        unknown = set(impls) - set(CONTRACT)
        if unknown:
            raise ValueError(f"not services of the harvester.v1 contract: {sorted(unknown)}")
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="grpc"),
            interceptors=[_MetricsInterceptor(metrics, forwarder)],
            options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", max_message_bytes)],
        )
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self._server)
        self.services: dict[str, str] = {}
        for name, descriptor in CONTRACT.items():
            if name in impls:
                impls[name].register(impls[name].servicer, self._server)
                self.services[name] = "serving"
            elif forwarder is None:
                self._server.add_generic_rpc_handlers((_unimplemented_handler(descriptor, unimplemented_reason(name)),))
                self.services[name] = "unimplemented"
        if forwarder is not None:
            self._server.add_generic_rpc_handlers((forwarder,))  # last: only what the local ones leave
            self.services = {name: (states or {}).get(name, "serving") for name in CONTRACT}
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
        self.address = listen if listen.startswith("unix:") else f"{listen.rpartition(':')[0]}:{self.port}"

    def start(self) -> None:
        self._server.start()
        serving = health_pb2.HealthCheckResponse.SERVING
        self.health.set("", serving)
        for name, state in self.services.items():
            self.health.set(name, serving if state == "serving" else health_pb2.HealthCheckResponse.NOT_SERVING)

    def stop(self, grace_s: float) -> None:
        self.health.enter_graceful_shutdown()
        self._server.stop(grace_s).wait(grace_s + 0.5)

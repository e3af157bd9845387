"""Forwarding of gRPC calls to another server, byte for byte (the advice process, issue 29).

The advice process (advice/advice_process.py) answers the latency-critical methods itself
and hands every other method of the contract to the main process's server on a private Unix
socket: the request's bytes, its metadata and its deadline go through unchanged, and the
answer's bytes or its status code and details come back unchanged, so a client cannot tell a
forwarded call from a local one (only its latency: one more loopback hop). The main process
decodes, validates, times and counts the call as it does any other.
"""

from __future__ import annotations

from typing import Any, Iterator

import grpc
from google.protobuf.descriptor import ServiceDescriptor

#: Metadata a client sends that the transport sets itself on the forwarded call.
_TRANSPORT_KEYS = frozenset({"user-agent", "te", "content-type"})
_TRANSPORT_PREFIXES = ("grpc-", ":")


def _identity(data: bytes) -> bytes:
    return data


#: A call without a deadline reports an infinite or huge time remaining (seconds).
_NO_DEADLINE_S = 1e8


def forwarded_timeout(context: grpc.ServicerContext) -> float | None:
    """The caller's deadline as the forwarded call's timeout; None when the caller set none."""
    remaining = context.time_remaining()
    return None if remaining is None or remaining >= _NO_DEADLINE_S else remaining


def forwarded_metadata(metadata: Any) -> tuple[tuple[str, Any], ...]:
    """The caller's own metadata (auth tokens, trace ids), without the transport's headers."""
    return tuple((m.key, m.value) for m in metadata or ()
                 if m.key not in _TRANSPORT_KEYS and not m.key.startswith(_TRANSPORT_PREFIXES))


class Forwarder(grpc.GenericRpcHandler):
    """Serves every method of `services` by forwarding it over `channel` (see module docstring).
    Registered after the local handlers, it answers only what they leave."""

    def __init__(self, channel: grpc.Channel, services: dict[str, ServiceDescriptor]) -> None:
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}
        for service in services.values():
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                if method.server_streaming:
                    upstream_stream = channel.unary_stream(path, _identity, _identity)
                    self._handlers[path] = grpc.unary_stream_rpc_method_handler(
                        self._stream(upstream_stream), _identity, _identity)
                else:
                    upstream = channel.unary_unary(path, _identity, _identity)
                    self._handlers[path] = grpc.unary_unary_rpc_method_handler(self._unary(upstream), _identity, _identity)

    def owns(self, method: str, handler: grpc.RpcMethodHandler) -> bool:
        """Whether `handler` is this forwarder's (not a local one) for `method`."""
        return self._handlers.get(method) is handler

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        return self._handlers.get(handler_call_details.method)

    @staticmethod
    def _unary(upstream: grpc.UnaryUnaryMultiCallable) -> Any:
        def forward(request: bytes, context: grpc.ServicerContext) -> bytes:
            try:
                return upstream(request, timeout=forwarded_timeout(context),
                                metadata=forwarded_metadata(context.invocation_metadata()))
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details() or "")
                raise  # not reached: abort raises

        return forward

    @staticmethod
    def _stream(upstream: grpc.UnaryStreamMultiCallable) -> Any:
        def forward(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
            call = upstream(request, timeout=forwarded_timeout(context),
                            metadata=forwarded_metadata(context.invocation_metadata()))
            context.add_callback(call.cancel)  # the client went away: so does the upstream stream
            try:
                yield from call
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.CANCELLED or context.is_active():
                    context.abort(exc.code(), exc.details() or "")

        return forward

"""The advice process's own side (advice/advice_process.py explains why it exists).

Runs no loop: it holds a mirror of the board's harvesting item, answers SelectClasses and
ListTenantClasses from it, forwards every other method to the main process
(advice/grpc_forward.py), and sends the timings of what it answered back to the main process
(the only place /metrics is served). It exits when the main process tells it to or goes away
(its end of the pipe closes).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any

import grpc

from harvester.advice.grpc_forward import Forwarder
from harvester.advice.grpc_server import CONTRACT, GrpcServer, ServiceImpl
from harvester.advice.tls import grpc_server_credentials
from harvester.advice.yarn_advisor import YarnAdvisorServicer
from harvester.board import Board
from harvester.board.harvesting import HARVESTING, HarvestingBoard
from harvester.config_server import TlsSettings
from harvester.decisions.strategy import SelectionStrategy
from harvester.v1 import yarn_advisor_pb2

log = logging.getLogger(__name__)

YARN_ADVISOR = "harvester.v1.YarnAdvisor"
#: Answered here, from the mirrored item; the rest of the contract is forwarded.
LOCAL_METHODS = ("SelectClasses", "ListTenantClasses")
#: The HarvestingView fields those two read (the guard's decision, 50,000 nodes, is not mirrored).
MIRRORED_FIELDS = ("model", "reserves", "class_nodes", "classes", "table", "jobs")
#: How often the timings of local calls go to the main process (seconds).
METRICS_FLUSH_S = 0.5


@dataclass(frozen=True)
class AdviceSpec:
    """What the advice process needs to serve, sent to it when it is started (picklable)."""

    listen: str
    upstream: str            # the main process's server (unix:...)
    tls: TlsSettings
    max_workers: int
    max_message_bytes: int
    states: dict[str, str]   # service → serving | unimplemented (health)
    selection: SelectionStrategy
    log_level: str = "INFO"
    log_format: str = "text"
    cpus: frozenset[int] = frozenset()  # pinned here when given (server.grpc_advice_cpus)


class ShippedMetrics:
    """The two recorders the local methods call (`Metrics.record_grpc`, `record_decision`),
    buffered and sent to the main process every METRICS_FLUSH_S."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[tuple[str, str, str, float]] = []

    def record_grpc(self, method: str, code: str, seconds: float) -> None:
        with self._lock:
            self._pending.append(("grpc", method, code, seconds))

    def record_decision(self, decision: str, seconds: float) -> None:
        with self._lock:
            self._pending.append(("decision", decision, "", seconds))

    def take(self) -> list[tuple[str, str, str, float]]:
        with self._lock:
            out, self._pending = self._pending, []
        return out


def _register_local(servicer: YarnAdvisorServicer, server: grpc.Server) -> None:
    messages = yarn_advisor_pb2.DESCRIPTOR.services_by_name["YarnAdvisor"].methods_by_name
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            getattr(servicer, name),
            request_deserializer=getattr(yarn_advisor_pb2, messages[name].input_type.name).FromString,
            response_serializer=getattr(yarn_advisor_pb2, messages[name].output_type.name).SerializeToString,
        )
        for name in LOCAL_METHODS
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(YARN_ADVISOR, handlers),))


def apply_mirror(board: HarvestingBoard, fields: dict[str, Any]) -> None:
    """Swap the mirrored fields into the item, in one update (readers never see half of one)."""
    unknown = set(fields) - set(MIRRORED_FIELDS)
    if unknown:
        raise ValueError(f"not mirrored fields of the harvesting item: {sorted(unknown)}")
    board.board.update(HARVESTING, lambda view: replace(view, **fields))


def serve(conn: Connection, spec: AdviceSpec) -> None:
    """The advice process's body (the spawn target): serve until told to stop or orphaned."""
    from harvester.observability.logs import configure_logging

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the main process stops this one
    if spec.cpus:  # before any thread starts: gRPC's threads inherit it
        os.sched_setaffinity(0, spec.cpus)
    configure_logging(spec.log_level, spec.log_format)
    board, metrics = HarvestingBoard(Board()), ShippedMetrics()
    channel = grpc.insecure_channel(spec.upstream, options=[("grpc.max_receive_message_length", -1),
                                                            ("grpc.max_send_message_length", -1)])
    servicer = YarnAdvisorServicer(board, spec.selection, metrics)  # type: ignore[arg-type]
    try:
        server = GrpcServer(spec.listen, metrics, [ServiceImpl(YARN_ADVISOR, servicer, _register_local)],  # type: ignore[arg-type]
                            max_workers=spec.max_workers, credentials=grpc_server_credentials(spec.tls),
                            max_message_bytes=spec.max_message_bytes, forwarder=Forwarder(channel, CONTRACT),
                            states=spec.states)
        server.start()
    except Exception as exc:  # the port is taken, the TLS files are unreadable: the main process says so
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    send_lock, stopped = threading.Lock(), threading.Event()
    with send_lock:
        conn.send(("ready", server.address))

    def flush() -> None:
        while not stopped.wait(METRICS_FLUSH_S):
            batch = metrics.take()
            if batch:
                try:
                    with send_lock:
                        conn.send(("metrics", batch))
                except OSError:
                    return  # the main process is gone: the receive loop ends too

    flusher = threading.Thread(target=flush, name="advice-metrics", daemon=True)
    flusher.start()
    grace = 1.0
    try:
        while True:
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):
                log.warning("advice process: the main process went away; stopping")
                break
            if kind == "harvesting":
                apply_mirror(board, payload)
            elif kind == "sync":  # all sent before it is applied: say so (AdviceProcess.sync)
                with send_lock:
                    conn.send(("synced", payload))
            elif kind == "stop":
                grace = float(payload)
                break
    finally:
        stopped.set()
        server.stop(grace)
        channel.close()

"""gRPC `harvester.v1.HdfsPlacement`: the placement table and Algorithm 2 for tools and tests.

Every method reads one immutable `Published` snapshot of the board (board/hdfs.py), so
ChooseTargets, ChooseReplicaToDelete and VerifyPlacement run the very `hdfs_placement` code
(and table) the NameNode plug-in uses, and report the `table_version` they used.

Status codes:
- FAILED_PRECONDITION: no table has been published yet (every method but Watch, which waits);
- INVALID_ARGUMENT: a request that can never be answered, with the field named (replication
  outside 1..512 — HDFS's `dfs.replication.max` default — a negative block size or version,
  an empty DataNode name, no replicas to judge);
- RESOURCE_EXHAUSTED: more than `hdfs.max_watch_streams` concurrent watch streams (each holds a
  gRPC worker thread for its lifetime; raise `server.grpc_max_workers` with it).
`GetPlacementTable` with `if_version_differs_from` equal to the current version answers only
the version with `unchanged = true` (the gRPC twin of HTTP 304). Without `seed`,
ChooseTargets draws from a per-thread generator (numpy generators are not thread-safe).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
import numpy as np
from google.protobuf.timestamp_pb2 import Timestamp

from harvester.advice.grpc_server import ServiceImpl
from harvester.board.hdfs import PlacementBoard, Published
from harvester.observability.metrics import Metrics
from harvester.v1 import hdfs_placement_pb2 as pb
from harvester.v1 import hdfs_placement_pb2_grpc as pb_grpc
from hdfs_placement import PlacementTable, choose_replicas_to_delete, choose_targets, verify_placement

SERVICE = "harvester.v1.HdfsPlacement"
MAX_REPLICATION = 512  # dfs.replication.max default
NO_TABLE = ("no placement table yet: Harvester has not completed its first NameNode poll and grid fit "
            "(see /status, loops hdfs-poll and hdfs-refit)")
WATCH_CHECK_S = 1.0  # how often an idle watch stream notices a cancelled client or shutdown


def table_message(table: PlacementTable) -> pb.PlacementTable:
    """The proto form of a table (field names match the JSON of hdfs_placement.table)."""
    ts = Timestamp()
    ts.FromMilliseconds(table.generated_at_ms)
    return pb.PlacementTable(
        version=table.version, grid_version=table.grid_version, generated_at=ts,
        busy_cpu_threshold=table.busy_cpu_threshold,
        cells=[pb.GridCell(row=c.row, col=c.col, available_bytes=c.available_bytes, tenants=c.tenants) for c in table.cells],
        datanodes=[pb.DataNodeEntry(datanode_id=e.datanode_id, hostname=e.hostname, rack=e.rack, tenant=e.tenant,
                                    environment=e.environment, row=e.row, col=e.col, capacity_bytes=e.capacity_bytes,
                                    remaining_bytes=e.remaining_bytes, busy=e.busy) for e in table.datanodes],
    )


def _names(field: str, values: Sequence[str], context: grpc.ServicerContext) -> list[str]:
    for i, v in enumerate(values):
        if not v.strip():
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{field}[{i}] is empty: give a DataNode id (ip:port) or hostname")
    return list(values)


class HdfsPlacementServicer(pb_grpc.HdfsPlacementServicer):
    """Serves the board's current table; see the module docstring."""

    def __init__(self, board: PlacementBoard, metrics: Metrics, *, default_block_size: int, max_watch_streams: int) -> None:
        self._board = board
        self._metrics = metrics
        self._default_block = default_block_size
        self._watch_slots = threading.BoundedSemaphore(max_watch_streams)
        self._max_watch = max_watch_streams
        self._cache_lock = threading.Lock()
        self._cached: tuple[int, pb.PlacementTable] | None = None
        self._local = threading.local()

    def _current(self, context: grpc.ServicerContext) -> Published:
        pub = self._board.current()
        if pub is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, NO_TABLE)
        return pub

    def _message(self, pub: Published) -> pb.PlacementTable:
        with self._cache_lock:
            if self._cached is not None and self._cached[0] == pub.version:
                return self._cached[1]
        msg = table_message(pub.table)
        with self._cache_lock:
            self._cached = (pub.version, msg)
        return msg

    def _rng(self, request: pb.ChooseTargetsRequest) -> np.random.Generator | int:
        if request.HasField("seed"):
            return int(request.seed)
        gen = getattr(self._local, "gen", None)
        if gen is None:
            gen = self._local.gen = np.random.default_rng()
        return gen

    # --- methods --------------------------------------------------------------------------

    def GetPlacementTable(self, request: pb.GetPlacementTableRequest, context: grpc.ServicerContext) -> pb.PlacementTable:  # noqa: N802
        if request.if_version_differs_from < 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "if_version_differs_from must be >= 0")
        pub = self._current(context)
        if request.if_version_differs_from == pub.version:
            return pb.PlacementTable(version=pub.version, grid_version=pub.table.grid_version, unchanged=True)
        return self._message(pub)

    def WatchPlacementTable(self, request: pb.WatchPlacementTableRequest, context: grpc.ServicerContext) -> Iterator[pb.PlacementTable]:  # noqa: N802
        if request.since_version < 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "since_version must be >= 0")
        if not self._watch_slots.acquire(blocking=False):
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                          f"{self._max_watch} WatchPlacementTable streams are open (hdfs.max_watch_streams); "
                          "poll GetPlacementTable or the HTTP long-poll instead")
        self._metrics.record_hdfs_waiters("grpc_watch", 1)
        try:
            seen: int | None = request.since_version or None
            while context.is_active() and not self._board.closed:
                pub = self._board.wait_for_change(seen, WATCH_CHECK_S)
                if pub is not None and pub.version != seen and context.is_active():
                    seen = pub.version
                    yield self._message(pub)
        finally:
            self._metrics.record_hdfs_waiters("grpc_watch", -1)
            self._watch_slots.release()

    def ChooseTargets(self, request: pb.ChooseTargetsRequest, context: grpc.ServicerContext) -> pb.ChooseTargetsResponse:  # noqa: N802
        if not 1 <= request.replication <= MAX_REPLICATION:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"replication must be within 1..{MAX_REPLICATION} (replicas wanted in total), got {request.replication}")
        if request.block_size_bytes < 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"block_size_bytes must be >= 0, got {request.block_size_bytes}")
        existing = _names("existing", request.existing, context)
        excluded = _names("excluded", request.excluded, context)
        favored = _names("favored", request.favored, context)
        pub = self._current(context)
        res = choose_targets(
            pub.index, replication=request.replication, block_size=request.block_size_bytes or self._default_block,
            rng=self._rng(request), writer=request.writer or None, existing=existing, excluded=excluded, favored=favored,
        )
        return pb.ChooseTargetsResponse(
            table_version=res.table_version, reason=res.reason,
            targets=[pb.Target(datanode_id=t.datanode_id, row=t.row, col=t.col, tenant=t.tenant, environment=t.environment,
                               rack=t.rack, relaxed=list(t.relaxed)) for t in res.targets],
        )

    def ChooseReplicaToDelete(self, request: pb.ChooseReplicaToDeleteRequest, context: grpc.ServicerContext) -> pb.ChooseReplicaToDeleteResponse:  # noqa: N802
        if not request.replicas:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "replicas is empty: list the block's current replicas")
        if request.replication < 1:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"replication must be >= 1 (the replicas to keep; the last one is never chosen), got {request.replication}")
        replicas = _names("replicas", request.replicas, context)
        pub = self._current(context)
        choice = choose_replicas_to_delete(pub.index, replicas, request.replication)
        return pb.ChooseReplicaToDeleteResponse(table_version=choice.table_version, delete=list(choice.delete),
                                                reason=choice.reason)

    def VerifyPlacement(self, request: pb.VerifyPlacementRequest, context: grpc.ServicerContext) -> pb.VerifyPlacementResponse:  # noqa: N802
        if not request.replicas:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "replicas is empty: list the block's replicas to verify")
        if request.replication < 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"replication must be >= 0 (0 = the number of replicas), got {request.replication}")
        replicas = _names("replicas", request.replicas, context)
        pub = self._current(context)
        status = verify_placement(pub.index, replicas, request.replication or None)
        return pb.VerifyPlacementResponse(table_version=status.table_version, satisfied=status.satisfied,
                                          violations=list(status.violations), unknown=list(status.unknown))


def hdfs_service(board: PlacementBoard, metrics: Metrics, *, default_block_size: int, max_watch_streams: int) -> ServiceImpl:
    """The `ServiceImpl` to hand to `GrpcServer`."""
    servicer: Any = HdfsPlacementServicer(board, metrics, default_block_size=default_block_size,
                                          max_watch_streams=max_watch_streams)
    return ServiceImpl(SERVICE, servicer, pb_grpc.add_HdfsPlacementServicer_to_server)

"""HDFS-H's parts, built from settings for the composition root to wire (`build_hdfs`).

harvester/app.py stays the one place that starts things; this module only builds them:

    hdfs = build_hdfs(settings, metrics, store)
    for name, interval_s, tick in hdfs.loops:
        loops.append(ControlLoop(name, interval_s, tick, clock, metrics))
    GrpcServer(..., implementations=[*others, *([hdfs.service] if hdfs.service else [])],
               unimplemented_reason=lambda name: hdfs.unimplemented_reason if name == HDFS_SERVICE else ...)
    for path, handler in hdfs.routes.items():
        admin.route(path, handler)
    status["hdfs"] = hdfs.status()        # in /status
    observers.append(hdfs.telemetry_observer)   # RecordTelemetry, after the tenant-slot fold (if set)
    ...; hdfs.close()                     # on stop, before the servers stop (wakes long-polls)

With `hdfs.enabled: false` (the default) there are no loops, no routes, no service, and
`unimplemented_reason` says how to enable it. Routes (all GET, JSON):
- /v1/hdfs/placement-table — the plug-in's long-poll (advice/hdfs_http.py, docs/hdfs.md);
- /v1/hdfs/grid — the current grid: every tenant's cell and the statistics it was fitted with;
- /v1/hdfs/status — NameNode, grid summary, published version and the last versions' reasons.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from harvester.advice.admin_http import Request, Response, Route
from harvester.advice.grpc_server import ServiceImpl
from harvester.advice.hdfs_board import PlacementBoard
from harvester.advice.hdfs_grpc import SERVICE, hdfs_service
from harvester.advice.hdfs_http import PATH, placement_table_route
from harvester.config import Settings
from harvester.domain import ClusterSnapshot
from harvester.history.store import HistoryStore
from harvester.loop.hdfs_placement import HdfsPlacementLoop, NameNodeSource
from harvester.loop.runner import TickResult
from harvester.observability.metrics import Metrics
from harvester.telemetry.namenode_jmx import NameNodeJmxClient

HDFS_SERVICE = SERVICE
Tick = Callable[[float], TickResult]


@dataclass
class HdfsComponents:
    """What `build_hdfs` hands to the composition root (see the module docstring)."""

    loops: list[tuple[str, float, Tick]]
    service: ServiceImpl | None
    routes: dict[str, Route]
    status: Callable[[], dict[str, Any]]
    close: Callable[[], None]
    unimplemented_reason: str = ""
    # RecordTelemetry observer (register AFTER the tenant-slot fold): busy flags each telemetry tick
    telemetry_observer: Callable[[ClusterSnapshot], Mapping[str, Any]] | None = None
    board: PlacementBoard | None = field(default=None, repr=False)


def _finite(x: float) -> float | None:
    """JSON has no infinity: an open band's bound (no tenant on one side) is null."""
    return x if math.isfinite(x) else None


def _disabled() -> HdfsComponents:
    return HdfsComponents(
        loops=[], service=None, routes={}, status=lambda: {"enabled": False}, close=lambda: None,
        unimplemented_reason="HDFS-H is disabled: set hdfs.enabled: true and hdfs.namenode_urls",
    )


def build_hdfs(settings: Settings, metrics: Metrics, store: HistoryStore, *,
               namenode: NameNodeSource | None = None) -> HdfsComponents:
    """Build the HDFS-H loop, gRPC service and admin routes; `namenode` replaces the JMX client (tests)."""
    s = settings.hdfs
    if not s.enabled:
        return _disabled()
    client = None
    if namenode is None:
        client = NameNodeJmxClient(
            [str(u) for u in s.namenode_urls], connect_timeout_s=s.connect_timeout_s, read_timeout_s=s.read_timeout_s,
            tls_verify=str(s.ca_bundle) if s.ca_bundle else s.tls_verify,
        )
        namenode = client
    board = PlacementBoard()
    loop = HdfsPlacementLoop(hdfs=s, harvesting=settings.harvesting, namenode=namenode, store=store, board=board,
                             metrics=metrics)

    def status() -> dict[str, Any]:
        pub = board.current()
        versions = store.hdfs_table_versions(limit=10)
        return {"enabled": True, **loop.status(), "published_version": pub.version if pub else None,
                "versions": [asdict(v) for v in versions]}

    def grid(req: Request) -> Response:
        model = store.hdfs_grid()
        if model is None:
            return Response.json(503, {"error": "no grid fitted yet"})
        return Response.json(200, {**model.summary(), "window_s": model.window_s,
                                   "row_bounds": [_finite(b) for b in model.row_bounds],
                                   "col_bounds": [[_finite(b) for b in row] for row in model.col_bounds],
                                   "tenants": [{"row": t.row, "col": t.col, **asdict(t.stats)} for t in model.tenants]})

    def close() -> None:
        board.close()
        if client is not None:
            client.close()

    return HdfsComponents(
        loops=[("hdfs-poll", s.poll_interval_s, loop.poll), ("hdfs-refit", s.refit_interval_s, loop.refit)],
        service=hdfs_service(board, metrics, default_block_size=s.default_block_size, max_watch_streams=s.max_watch_streams),
        routes={
            PATH: placement_table_route(board, metrics, max_wait_s=s.long_poll_max_s),
            "/v1/hdfs/grid": grid,
            "/v1/hdfs/status": lambda req: Response.json(200, status()),
        },
        status=status,
        close=close,
        telemetry_observer=lambda snapshot: loop.on_telemetry(snapshot.time),
        board=board,
    )

"""HDFS-H's read side, built from settings for the composition root to wire (`hdfs_faces`).

The HDFS-H loop (loop/hdfs_placement.py, built by harvester/control.py) publishes the table and
its status on the state board (board/hdfs.py); this module builds what serves them, reading
only the board and the history store:

    faces = hdfs_faces(settings.hdfs, PlacementBoard(board), store, metrics)
    GrpcServer(..., implementations=[*others, *([faces.service] if faces.service else [])],
               unimplemented_reason=lambda name: faces.unimplemented_reason if name == HDFS_SERVICE else ...)
    for path, handler in faces.routes.items():
        admin.route(path, handler)
    status["hdfs"] = faces.status()       # in /status

With `hdfs.enabled: false` (the default) there is no route and no service, and
`unimplemented_reason` says how to enable it. Routes (all GET, JSON):
- /v1/hdfs/placement-table — the plug-in's long-poll (advice/hdfs_http.py, docs/hdfs.md);
- /v1/hdfs/grid — the current grid: every tenant's cell and the statistics it was fitted with;
- /v1/hdfs/status — NameNode, grid summary, published version and the last versions' reasons.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from harvester.advice.admin_http import Request, Response, Route
from harvester.advice.grpc_server import ServiceImpl
from harvester.advice.hdfs_grpc import SERVICE, hdfs_service
from harvester.advice.hdfs_http import PATH, placement_table_route
from harvester.advice.long_poll import WaitSlots
from harvester.board.hdfs import PlacementBoard
from harvester.config_hdfs import HdfsSettings
from harvester.history.store import HistoryStore
from harvester.observability.metrics import Metrics

HDFS_SERVICE = SERVICE


@dataclass
class HdfsFaces:
    """What `hdfs_faces` hands to the composition root (see the module docstring)."""

    service: ServiceImpl | None
    routes: dict[str, Route]
    status: Callable[[], dict[str, Any]]
    unimplemented_reason: str = ""


def _finite(x: float) -> float | None:
    """JSON has no infinity: an open band's bound (no tenant on one side) is null."""
    return x if math.isfinite(x) else None


def hdfs_faces(s: HdfsSettings, board: PlacementBoard, store: HistoryStore, metrics: Metrics, *,
               slots: WaitSlots | None = None) -> HdfsFaces:
    """The gRPC service and admin routes of HDFS-H over the board and the store."""
    if not s.enabled:
        return HdfsFaces(service=None, routes={}, status=lambda: {"enabled": False},
                         unimplemented_reason="HDFS-H is disabled: set hdfs.enabled: true and hdfs.namenode_urls")

    def status() -> dict[str, Any]:
        pub = board.current()
        versions = store.hdfs_table_versions(limit=10)
        return {"enabled": True, **board.status(), "published_version": pub.version if pub else None,
                "versions": [asdict(v) for v in versions]}

    def grid(req: Request) -> Response:
        model = store.hdfs_grid()
        if model is None:
            return Response.json(503, {"error": "no grid fitted yet"})
        return Response.json(200, {**model.summary(), "window_s": model.window_s,
                                   "row_bounds": [_finite(b) for b in model.row_bounds],
                                   "col_bounds": [[_finite(b) for b in row] for row in model.col_bounds],
                                   "tenants": [{"row": t.row, "col": t.col, **asdict(t.stats)} for t in model.tenants]})

    return HdfsFaces(
        service=hdfs_service(board, metrics, default_block_size=s.default_block_size, max_watch_streams=s.max_watch_streams),
        routes={
            PATH: placement_table_route(board, metrics, max_wait_s=s.long_poll_max_s, slots=slots),
            "/v1/hdfs/grid": grid,
            "/v1/hdfs/status": lambda req: Response.json(200, status()),
        },
        status=status,
    )

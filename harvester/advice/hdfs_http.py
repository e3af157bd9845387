"""`GET /v1/hdfs/placement-table`: the table for the NameNode plug-in (JSON, ETag, long-poll).

The Java plug-in (deploy/shim, JDK HttpClient, no extra jars) keeps a cached table and
refreshes it in the background with the long-poll of `long_poll` (docs/hdfs.md, docs/shim.md):

    GET /v1/hdfs/placement-table?wait=30
    If-None-Match: "41"

200 + the table (`PlacementTable.dumps()`: flat JSON, schema harvester.hdfs-placement.v1) with
`ETag: "<version>"`; 304 when the held version is still current after `wait` seconds (capped
at `hdfs.long_poll_max_s`); 503 + `Retry-After` while no table exists yet; 400 for a bad `wait`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from harvester.advice.admin_http import Request, Response
from harvester.advice.long_poll import RETRY_AFTER_S, WaitSlots, etag, long_poll_route
from harvester.board.hdfs import PlacementBoard
from harvester.observability.metrics import Metrics

__all__ = ["PATH", "RETRY_AFTER_S", "etag", "placement_table_route"]

PATH = "/v1/hdfs/placement-table"


def placement_table_route(board: PlacementBoard, metrics: Metrics, *, max_wait_s: float,
                          slots: WaitSlots | None = None) -> Callable[[Request], Awaitable[Response]]:
    """The handler to register on the admin server at `PATH`."""
    return long_poll_route(
        board, max_wait_s=max_wait_s,
        not_ready={"error": "no placement table yet: the first NameNode poll and grid fit have not completed",
                   "see": "/status (loops hdfs-poll, hdfs-refit)"},
        waiters=lambda delta: metrics.record_hdfs_waiters("http_long_poll", delta), slots=slots,
    )

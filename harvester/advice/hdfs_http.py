"""`GET /v1/hdfs/placement-table`: the table for the NameNode plug-in (JSON, ETag, long-poll).

The Java plug-in (JDK HttpClient, no extra jars) keeps a cached table and refreshes it in the
background with a long-poll (docs/hdfs.md):

    GET /v1/hdfs/placement-table?wait=30
    If-None-Match: "41"

- 200 + the table (`PlacementTable.dumps()`: flat JSON, schema harvester.hdfs-placement.v1)
  and `ETag: "<version>"` when the current version differs from If-None-Match (or there is
  none) — at once, or as soon as a new version is published while waiting;
- 304 Not Modified (empty body, same ETag) when If-None-Match names the current version
  and no new version came within `wait` seconds (0 = answer at once; capped at
  `hdfs.long_poll_max_s`);
- 503 with a JSON error and `Retry-After` while no table exists yet (after waiting `wait`
  seconds for the first one);
- 400 for a `wait` that is not a number >= 0.
If-None-Match accepts `"41"`, `W/"41"`, a bare `41`, a comma-separated list, or `*` (any
table matches). `Cache-Control: no-cache` keeps proxies from answering for us.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from harvester.advice.admin_http import Request, Response
from harvester.advice.hdfs_board import PlacementBoard, Published
from harvester.observability.metrics import Metrics

PATH = "/v1/hdfs/placement-table"
RETRY_AFTER_S = 5


def etag(version: int) -> str:
    return f'"{version}"'


def _header(req: Request, name: str) -> str | None:
    for k, v in req.headers.items():
        if k.lower() == name.lower():
            return v
    return None


def _matches(if_none_match: str | None, version: int) -> bool:
    if if_none_match is None:
        return False
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*":
            return True
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag.strip('"') == str(version):
            return True
    return False


def _table(pub: Published) -> Response:
    return Response(200, pub.body, "application/json",
                    {"ETag": etag(pub.version), "Cache-Control": "no-cache"})


def placement_table_route(board: PlacementBoard, metrics: Metrics, *, max_wait_s: float) -> Callable[[Request], Response]:
    """The handler to register on the admin server at `PATH`."""

    def handle(req: Request) -> Response:
        raw = (req.query.get("wait") or ["0"])[-1]
        try:
            wait = float(raw)
        except ValueError:
            wait = math.nan
        if not wait >= 0:  # NaN and negatives; +inf is capped below
            return Response.json(400, {"error": f"wait={raw!r}: expected seconds >= 0 (at most {max_wait_s:g} are used)"})
        wait = min(wait, max_wait_s)
        inm = _header(req, "If-None-Match")
        pub = board.current()
        if pub is not None and not _matches(inm, pub.version):
            return _table(pub)
        held = pub.version if pub is not None else None
        if wait > 0:
            metrics.record_hdfs_waiters("http_long_poll", 1)
            try:
                pub = board.wait_for_change(held, wait)
            finally:
                metrics.record_hdfs_waiters("http_long_poll", -1)
        if pub is None:
            body = {"error": "no placement table yet: the first NameNode poll and grid fit have not completed",
                    "see": "/status (loops hdfs-poll, hdfs-refit)"}
            return Response(503, (json.dumps(body) + "\n").encode(), "application/json",
                            {"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-cache"})
        if pub.version == held:
            return Response(304, b"", "application/json", {"ETag": etag(pub.version), "Cache-Control": "no-cache"})
        return _table(pub)

    return handle

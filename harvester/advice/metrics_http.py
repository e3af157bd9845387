"""`GET /metrics`: the Prometheus exposition, rendered at most once per `max_age_s`.

Rendering walks every metric family (thousands of per-node series on a large cluster) and
holds the GIL: 1,000 scrapers at once must not mean 1,000 renderings. One rendering runs in a
worker thread while every request that arrives meanwhile awaits the same result; with
`max_age_s` > 0 a rendering younger than that is served as is (0, the default: a request that
arrives after a rendering finished gets a new one).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from harvester.advice.admin_http import Request, Response
from harvester.observability.metrics import CONTENT_TYPE, Metrics


def metrics_route(metrics: Metrics, *, max_age_s: float = 0.0) -> Callable[[Request], Awaitable[Response]]:
    cached: list[tuple[float, bytes]] = []
    pending: list[asyncio.Future[bytes]] = []

    async def handle(req: Request) -> Response:
        now = time.monotonic()
        if cached and max_age_s > 0 and now - cached[0][0] <= max_age_s:
            return Response(200, cached[0][1], CONTENT_TYPE)
        if pending and not pending[0].done():
            body = await asyncio.shield(pending[0])
        else:
            future = asyncio.ensure_future(asyncio.to_thread(metrics.exposition))
            pending[:] = [future]
            body = await asyncio.shield(future)
            cached[:] = [(time.monotonic(), body)]
        return Response(200, body, CONTENT_TYPE)

    return handle

"""`GET /metrics`: the Prometheus exposition, rendered at most once per `max_age_s`.

Rendering walks every metric family (thousands of per-node series on a large cluster) and
holds the GIL: 1,000 scrapers at once must not mean 1,000 renderings. One rendering runs in a
worker thread while every request that arrives meanwhile awaits the same result; with
`max_age_s` > 0 a rendering younger than that is served as is (0, the default: a request that
arrives after a rendering finished gets a new one). A scraper that accepts gzip (Prometheus
does) gets the rendering compressed once per rendering, like prometheus_client's own
exposition server: a tenth of the bytes to write per scrape on a 1,000-node cluster.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from collections.abc import Awaitable, Callable

from harvester.advice.admin_http import Request, Response
from harvester.observability.metrics import CONTENT_TYPE, Metrics


def metrics_route(metrics: Metrics, *, max_age_s: float = 0.0) -> Callable[[Request], Awaitable[Response]]:
    cached: list[tuple[float, bytes, bytes]] = []  # (when, plain, gzip)
    pending: list[asyncio.Future[tuple[bytes, bytes]]] = []

    def render() -> tuple[bytes, bytes]:  # in a worker thread
        plain = metrics.exposition()
        return plain, gzip.compress(plain, compresslevel=1)

    async def handle(req: Request) -> Response:
        now = time.monotonic()
        if cached and max_age_s > 0 and now - cached[0][0] <= max_age_s:
            plain, packed = cached[0][1], cached[0][2]
        elif pending and not pending[0].done():
            plain, packed = await asyncio.shield(pending[0])
        else:
            future = asyncio.ensure_future(asyncio.to_thread(render))
            pending[:] = [future]
            plain, packed = await asyncio.shield(future)
            cached[:] = [(time.monotonic(), plain, packed)]
        if accepts_gzip(req.header("Accept-Encoding")):
            return Response(200, packed, CONTENT_TYPE, {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
        return Response(200, plain, CONTENT_TYPE, {"Vary": "Accept-Encoding"})

    return handle


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether an Accept-Encoding value allows gzip (a `q=0` refuses it)."""
    for part in (accept_encoding or "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=").strip() if params.strip().startswith("q=") else "1"
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False

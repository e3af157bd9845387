"""GET /metrics (advice/metrics_http.py): gzip for scrapers that accept it (Prometheus does),
plain text otherwise, over the real admin server."""

from __future__ import annotations

import gzip
import http.client
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.advice.metrics_http import accepts_gzip, metrics_route
from harvester.observability.metrics import Metrics


@pytest.fixture()
def served() -> Iterator[tuple[AdminServer, Metrics]]:
    metrics = Metrics(CollectorRegistry())
    metrics.record_harvest({f"nm-{i}:45454": i for i in range(50)}, {"class-1": 100})
    server = AdminServer("127.0.0.1:0")  # no metrics of its own: the exposition stays constant
    server.route("/metrics", metrics_route(metrics))
    server.start()
    yield server, metrics
    server.stop()


def _get(server: AdminServer, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/metrics", headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def test_a_gzip_accepting_scraper_gets_the_same_exposition_compressed(served: tuple[AdminServer, Metrics]) -> None:
    server, metrics = served
    status, headers, body = _get(server, {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
    assert gzip.decompress(body) == metrics.exposition()
    assert len(body) < len(metrics.exposition()) / 3


def test_a_plain_scraper_gets_plain_text(served: tuple[AdminServer, Metrics]) -> None:
    server, metrics = served
    status, headers, body = _get(server, {})
    assert status == 200 and "content-encoding" not in headers
    assert body == metrics.exposition() and headers["content-type"].startswith("text/plain")


@pytest.mark.parametrize(("value", "gz"), [
    (None, False), ("", False), ("gzip", True), ("GZIP", True), ("deflate, gzip;q=0.5", True),
    ("gzip;q=0", False), ("gzip;q=0.0, identity", False), ("*", True), ("identity", False),
    ("gzip;q=abc", False), ("br, deflate", False),
])
def test_accept_encoding(value: str | None, gz: bool) -> None:
    assert accepts_gzip(value) is gz

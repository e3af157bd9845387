"""HTTP admin endpoint: /healthz, /readyz, /metrics, /status, plus routes later stages add.

The standard library's threading HTTP server is enough here: a handful of cheap routes,
each request on its own thread (so a long-poll route does not block /metrics). Each route
names the methods it accepts (GET by default); another method answers 405 with an `Allow`
header. A request body (POST) is read whole and handed to the route as `Request.body`.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping
from urllib.parse import parse_qs, urlsplit

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes = b""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def json(status: int, doc: Any, headers: Mapping[str, str] | None = None) -> Response:
        return Response(status, (json.dumps(doc, indent=1, default=str, ensure_ascii=False) + "\n").encode(), headers=headers or {})

    @staticmethod
    def text(status: int, text: str, content_type: str = "text/plain; charset=utf-8") -> Response:
        return Response(status, text.encode(), content_type)


Route = Callable[[Request], Response]


class AdminServer:
    """Routes requests by exact path and method; unknown paths get 404 JSON listing the routes."""

    def __init__(self, listen: str) -> None:
        host, _, port = listen.rpartition(":")
        self._routes: dict[str, tuple[Route, tuple[str, ...]]] = {}
        routes = self._routes

        class Handler(BaseHTTPRequestHandler):
            server_version = "harvester-admin"
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:  # route access logs to logging
                log.debug(fmt, *args)

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length > 0 else b""  # always drained: keep-alive stays in sync
                entry = routes.get(parts.path)
                if entry is None:
                    resp = Response.json(404, {"error": f"no route {parts.path}", "routes": sorted(routes)})
                elif self.command not in entry[1]:
                    allowed = ", ".join(entry[1])
                    resp = Response.json(405, {"error": f"{self.command} not allowed; use {allowed}"},
                                         headers={"Allow": allowed})
                else:
                    req = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()), body)
                    try:
                        resp = entry[0](req)
                    except Exception as exc:  # a broken route answers 500; the server lives on
                        log.exception("admin route failed", extra={"path": parts.path})
                        resp = Response.json(500, {"error": f"{type(exc).__name__}: {exc}"})
                self.send_response(resp.status)
                self.send_header("Content-Type", resp.content_type)
                self.send_header("Content-Length", str(len(resp.body)))
                for k, v in resp.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(resp.body)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

        self._httpd = ThreadingHTTPServer((host, int(port)), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.address = f"{host}:{self.port}"
        self._thread: threading.Thread | None = None

    def route(self, path: str, handler: Route, methods: tuple[str, ...] = ("GET",)) -> None:
        """Serve `path` with `handler` for the given HTTP methods (upper case)."""
        if path in self._routes:
            raise ValueError(f"route {path} registered twice")
        if not methods or any(m != m.upper() for m in methods):
            raise ValueError(f"route {path}: methods must be upper-case names, got {methods!r}")
        self._routes[path] = (handler, tuple(methods))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="admin-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:  # shutdown() waits for serve_forever: only when it runs
            self._httpd.shutdown()
        self._httpd.server_close()

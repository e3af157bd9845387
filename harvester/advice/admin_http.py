"""HTTP admin/advice face: /healthz, /readyz, /metrics, /status, the advice documents, plus routes
later stages add — on aiohttp's low-level server, with bounded inputs and bearer-token writes.

Registering a route is one call, whatever the feature (Morpheus `slo` routes, `explain`):

    admin.route("/v1/slo/contracts", handler)                   # GET, run in a worker thread
    admin.route("/v1/harvesting/refit", refit, methods=("POST",))
    admin.route("/healthz", quick, blocking=False)              # sync but instant: on the event loop
    admin.route("/v1/yarn/node-ordering", async_handler)        # `async def`: awaited on the loop
    admin.route("/resourceestimator/*", handler, methods=("GET", "POST", "DELETE"))  # every path under it

A handler takes a `Request` and returns a `Response` (or an awaitable of one). Blocking
handlers run in a bounded thread pool (`handler_threads`), so the event loop keeps serving
/healthz, /metrics and thousands of long-polls (advice/long_poll.py awaits the state board
without a thread per waiter). Routes are matched by exact path; another method answers 405
with `Allow`, an unknown path 404 listing the routes the caller may call (all with the token, else
the public reads); every error is JSON `{"error": ...}`. A path ending in `/*` is a prefix route:
it answers every path under it (its handler reads `Request.path`; the metrics label is the route,
not the path). A `Response` with an empty content type is sent without Content-Type (a 204).

Limits (`HttpLimits`, from `server.admin_http`), so no client can exhaust the process:
- at most `max_connections` open connections: the next one gets a 503 and is closed;
- request line and each header at most `max_header_bytes`, at most `max_headers` headers
  (aiohttp's parser: 400 / 431 as JSON); a malformed request (bad Content-Length, garbage)
  answers 400 JSON and logs ONE debug line, never a traceback;
- a body is read only up to `max_body_bytes` (a larger declared one is refused with 413
  before any of it is read) and within `body_timeout_s`; a refused request's unread body is
  never drained: the connection is closed;
- `idle_timeout_s`: a connection with no request in progress (new, between keep-alive
  requests, or trickling its headers) is closed after that long.

Authentication (`AdminAuth`): every write (any method but GET/HEAD) needs
`Authorization: Bearer <token>`, compared in constant time; without a configured token writes
are refused (403). Reads are open for the paths in `public_reads` ("*" = all; "/v1/hdfs/*" =
a prefix); the others need the token too. `public_writes` (same form, default none) opens
writes the same way (the Resource Estimator face's `estimator.open_writes`). The token is never logged nor echoed. TLS: pass an
`ssl.SSLContext` (config: `server.tls`, advice/tls.py).
"""

from __future__ import annotations

import asyncio
import hmac
import inspect
import json
import logging
import socket
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, cast
from urllib.parse import parse_qs

from aiohttp import web

from harvester.echo import shown
from harvester.observability.metrics import Metrics

log = logging.getLogger(__name__)

READS = ("GET", "HEAD")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """A header's value by case-insensitive name (None when absent)."""
        name = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == name), None)


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


Route = Callable[[Request], "Response | Awaitable[Response]"]


@dataclass(frozen=True)
class HttpLimits:
    """Input limits of the admin server (module docstring; config `server.admin_http`)."""

    max_connections: int = 4096
    max_body_bytes: int = 1024 * 1024
    max_header_bytes: int = 8190
    max_headers: int = 100
    idle_timeout_s: float = 15.0
    body_timeout_s: float = 10.0
    handler_threads: int = 8
    backlog: int = 2048


class AdminAuth:
    """Who may call what (module docstring). The token never appears in a repr."""

    def __init__(self, token: str | None = None, public_reads: tuple[str, ...] = ("*",),
                 public_writes: tuple[str, ...] = ()) -> None:
        self._token = token.encode() if token else None
        self.public_reads = tuple(public_reads)
        self.public_writes = tuple(public_writes)

    def __repr__(self) -> str:
        return (f"AdminAuth(token={'set' if self._token else 'none'}, public_reads={self.public_reads!r}, "
                f"public_writes={self.public_writes!r})")

    @property
    def has_token(self) -> bool:
        return self._token is not None

    def is_public(self, method: str, path: str) -> bool:
        paths = self.public_reads if method in READS else self.public_writes
        return any(p == "*" or p == path or (p.endswith("*") and path.startswith(p[:-1])) for p in paths)

    def authorized(self, authorization: str | None) -> bool:
        """True when `authorization` carries the configured bearer token (constant time)."""
        scheme, _, given = (authorization or "").partition(" ")
        return (self._token is not None and scheme.lower() == "bearer"
                and hmac.compare_digest(given.strip().encode(), self._token))

    def refusal(self, method: str, path: str, authorization: str | None) -> tuple[int, str] | None:
        """None when allowed, else (status, message)."""
        if self.is_public(method, path):
            return None
        what = "reading this path" if method in READS else "admin writes"
        if self._token is None:
            return 403, (f"{what} need a bearer token and none is configured: set server.auth.token_file or "
                         "HARVESTER_ADMIN_TOKEN")
        if not self.authorized(authorization):
            return 401, f"{what} need a valid 'Authorization: Bearer <token>' header"
        return None

    def visible(self, paths: list[str], authorization: str | None) -> list[str]:
        """The routes a 404 may list to this caller: all with the token, else the public reads
        only (a closed face does not tell strangers what it serves)."""
        if self.authorized(authorization):
            return paths
        return [p for p in paths if self.is_public("GET", p)]


def _json_response(status: int, doc: dict[str, Any], headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=(json.dumps(doc) + "\n").encode(),
                        headers={"Content-Type": "application/json", "Server": "harvester", **(headers or {})})


_REFUSED = b'{"error": "too many connections to the admin server; retry later"}\n'
_REFUSED_ANSWER = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                   b"Connection: close\r\nContent-Length: " + str(len(_REFUSED)).encode() + b"\r\n\r\n" + _REFUSED)


class _Handler(web.RequestHandler):
    """aiohttp's connection handler with JSON errors, one log line per malformed request, and a
    503 for a connection over the server's limit (answered, half-closed, its input discarded)."""

    _refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        manager = self._manager
        if isinstance(manager, _Server) and len(manager.open) >= manager.max_connections:
            self._refused = True
            t = cast(asyncio.Transport, transport)
            t.write(_REFUSED_ANSWER)
            if t.can_write_eof():
                t.write_eof()
            asyncio.get_running_loop().call_later(1.0, t.close)  # not at once: no RST before it is read
            if manager.metrics is not None:
                manager.metrics.record_admin_refused("max_connections")
            return
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if not self._refused:
            super().data_received(data)

    def eof_received(self) -> None:
        if not self._refused:
            super().eof_received()

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self._refused:
            super().connection_lost(exc)

    def handle_error(self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        detail = ((message or (type(exc).__name__ if exc is not None else "")).strip().splitlines() or [""])[0]
        log.debug("admin http: malformed request answered %d: %s", status, detail[:200])
        manager = self._manager
        if isinstance(manager, _Server) and manager.metrics is not None:
            manager.metrics.record_admin_request("(malformed)", "?", status)
        what = "bad request" if status < 500 else "internal error"
        resp = _json_response(status, {"error": f"{what}: {detail}"[:300]})
        resp.force_close()
        return resp


class _Server(web.Server):
    """Low-level server that builds `_Handler`s and counts open connections."""

    def __init__(self, handler: Any, *, max_connections: int, metrics: Metrics | None, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self._handler_kwargs = kwargs
        self.max_connections = max_connections
        self.metrics = metrics
        self.open: set[web.RequestHandler] = set()

    def __call__(self) -> web.RequestHandler:
        return _Handler(self, loop=asyncio.get_running_loop(), **self._handler_kwargs)

    def connection_made(self, handler: web.RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self.open.add(handler)
        if self.metrics is not None:
            self.metrics.set_admin_connections(len(self.open))

    def connection_lost(self, handler: web.RequestHandler, exc: BaseException | None = None) -> None:
        super().connection_lost(handler, exc)
        self.open.discard(handler)
        if self.metrics is not None:
            self.metrics.set_admin_connections(len(self.open))


def _new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop (libuv: about twice the requests per second of asyncio's own on this
    workload, bench/admin_load.py) where it is installed, else asyncio's."""
    try:
        import uvloop
    except ImportError:  # not on every platform: asyncio's loop serves the same, slower
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


@dataclass(frozen=True)
class _Entry:
    handler: Route
    methods: tuple[str, ...]
    blocking: bool
    is_async: bool  # a coroutine function: awaited on the loop (looked up once, not per request)


class AdminServer:
    """The admin face on `listen` (host:port; port 0 picks one). Binds at construction."""

    def __init__(self, listen: str, *, limits: HttpLimits | None = None, auth: AdminAuth | None = None,
                 ssl_context: ssl.SSLContext | None = None, metrics: Metrics | None = None) -> None:
        host, _, port = listen.rpartition(":")
        self.limits = limits or HttpLimits()
        self.auth = auth or AdminAuth()
        self._ssl = ssl_context
        self._metrics = metrics
        self._routes: dict[str, _Entry] = {}
        self._prefixes: list[str] = []
        self._sock = socket.create_server((host.strip("[]"), int(port)), backlog=self.limits.backlog,
                                          family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.port = self._sock.getsockname()[1]
        self.address = f"{host}:{self.port}"
        self.scheme = "https" if ssl_context is not None else "http"
        self._pool = ThreadPoolExecutor(max_workers=self.limits.handler_threads, thread_name_prefix="admin")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.BaseRunner | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.address}"

    def route(self, path: str, handler: Route, methods: tuple[str, ...] = ("GET",), *, blocking: bool = True) -> None:
        """Serve `path` with `handler` for the given HTTP methods (upper case); `blocking=False`
        runs a sync handler on the event loop itself (only for instant ones)."""
        if path in self._routes:
            raise ValueError(f"route {path} registered twice")
        if not methods or any(m != m.upper() for m in methods):
            raise ValueError(f"route {path}: methods must be upper-case names, got {methods!r}")
        self._routes[path] = _Entry(handler, tuple(methods), blocking, inspect.iscoroutinefunction(handler))
        if path.endswith("/*"):
            self._prefixes.append(path)
            self._prefixes.sort(key=len, reverse=True)  # the longest prefix wins

    def _match(self, path: str) -> tuple[str, _Entry | None]:
        """(metrics label, route) of a request path: the exact route, else the longest prefix route."""
        entry = self._routes.get(path)
        if entry is not None:
            return path, entry
        for prefix in self._prefixes:
            if path.startswith(prefix[:-1]):
                return prefix, self._routes[prefix]
        return "(unknown)", None

    # --- serving --------------------------------------------------------------------------

    async def _body(self, request: web.BaseRequest) -> bytes | web.Response:
        cap = self.limits.max_body_bytes
        if request.content_length is not None and request.content_length > cap:
            return _json_response(413, {"error": f"request body of {request.content_length} bytes is larger than "
                                                 f"{cap} (server.admin_http.max_body_bytes)"})
        chunks, size = [], 0
        try:
            async with asyncio.timeout(self.limits.body_timeout_s):
                while chunk := await request.content.readany():
                    size += len(chunk)
                    if size > cap:
                        return _json_response(413, {"error": f"request body larger than {cap} bytes"})
                    chunks.append(chunk)
        except TimeoutError:
            return _json_response(408, {"error": f"request body not received within {self.limits.body_timeout_s:g}s"})
        return b"".join(chunks)

    async def _dispatch(self, request: web.BaseRequest) -> web.StreamResponse:
        path, method = request.path, request.method
        label, entry = self._match(path)
        resp = await self._answer(request, entry, path, method)
        if request.body_exists and not request.content.is_eof():
            resp.force_close()  # the unread rest of a refused body is never drained
        if self._metrics is not None:
            self._metrics.record_admin_request(label, method, resp.status)
        return resp

    async def _answer(self, request: web.BaseRequest, entry: _Entry | None, path: str, method: str) -> web.StreamResponse:
        if entry is None:
            return _json_response(404, {"error": f"no route {shown(path)}",
                                        "routes": self.auth.visible(sorted(self._routes), request.headers.get("Authorization"))})
        if method not in entry.methods:
            allowed = ", ".join(entry.methods)
            return _json_response(405, {"error": f"{method} not allowed; use {allowed}"}, {"Allow": allowed})
        refused = self.auth.refusal(method, path, request.headers.get("Authorization"))
        if refused is not None:
            status, message = refused
            if self._metrics is not None:
                self._metrics.record_admin_refused("auth")
            return _json_response(status, {"error": message}, {"WWW-Authenticate": "Bearer"} if status == 401 else None)
        body = b""
        if request.body_exists:
            got = await self._body(request)
            if isinstance(got, web.Response):
                return got
            body = got
        req = Request(method, path, parse_qs(request.query_string), dict(request.headers.items()), body)
        try:
            if entry.is_async:
                result: Any = await entry.handler(req)
            elif entry.blocking:
                result = await asyncio.get_running_loop().run_in_executor(self._pool, entry.handler, req)
            else:
                result = entry.handler(req)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # a broken route answers 500; the server lives on
            log.exception("admin route failed", extra={"path": path})
            return _json_response(500, {"error": f"{type(exc).__name__}: {exc}"})
        headers = {"Content-Type": result.content_type} if result.content_type else {}
        return web.Response(status=result.status, body=result.body or None,
                            headers={**headers, "Server": "harvester", **result.headers})

    async def _start(self) -> None:
        lim = self.limits
        server = _Server(self._dispatch, max_connections=lim.max_connections, metrics=self._metrics,
                         keepalive_timeout=lim.idle_timeout_s, max_line_size=lim.max_header_bytes,
                         max_field_size=lim.max_header_bytes, max_headers=lim.max_headers, lingering_time=0,
                         access_log=None)
        self._runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        # asyncio re-listens on the socket with the site's backlog (default 128: 1,000 clients
        # connecting at once would lose SYNs and retry after 1 s): pass ours again
        await web.SockSite(self._runner, self._sock, ssl_context=self._ssl, backlog=lim.backlog).start()

    def start(self) -> None:
        ready = threading.Event()
        failed: list[BaseException] = []

        def run() -> None:
            loop = _new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start())
            except BaseException as exc:  # reported to start()'s caller
                failed.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="admin-http", daemon=True)
        self._thread.start()
        ready.wait()
        if failed:
            raise failed[0]

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and self._thread is not None and self._thread.is_alive():
            if self._runner is not None:
                try:
                    asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(timeout=3.0)
                except Exception as exc:  # shutdown goes on
                    log.warning("admin server did not stop cleanly: %s", exc)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(timeout=3.0)
        self._sock.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

"""Test doubles for rm_client: a real HTTP server on loopback that answers scripted RM
responses (recorded bodies), and a requests adapter that records what would be sent.

Fakes, not mocks (DESIGN.md principle 13): the client talks real HTTP to ScriptedRM."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from requests.adapters import HTTPAdapter


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json;charset=utf-8"})
    delay_s: float = 0.0


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


class ScriptedRM:
    """``script(method, path, *replies)``: answers in order, the last one repeats. Unscripted
    paths answer 404 with a RemoteException. ``seen`` lists every request received."""

    def __init__(self, on_request: Any = None) -> None:
        """`on_request(seen)` runs for every request before it is answered (e.g. to move a
        test clock: an RM that is slow in the clock's time)."""
        self.seen: list[Seen] = []
        self._on_request = on_request
        self._scripts: dict[tuple[str, str], deque[Reply]] = defaultdict(deque)
        self._default: Reply | None = None
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                split = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                reply = owner._record_and_pick(Seen(self.command, split.path, parse_qs(split.query),
                                                    dict(self.headers), body))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (read timeout test)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, method: str, path: str, *replies: Reply) -> None:
        with self._lock:
            self._scripts[(method, path)].extend(replies)

    def default(self, reply: Reply) -> None:
        self._default = reply

    def _record_and_pick(self, seen: Seen) -> Reply:
        if self._on_request is not None:
            self._on_request(seen)
        with self._lock:
            self.seen.append(seen)
            queue = self._scripts.get((seen.method, seen.path))
            if queue:
                return queue.popleft() if len(queue) > 1 else queue[0]
        if self._default is not None:
            return self._default
        return Reply(404, b'{"RemoteException":{"exception":"NotFoundException","message":"not scripted",'
                          b'"javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}')

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


#: Sockets bound and never listening, held for the test process's life: their ports refuse
#: every connection, and nothing else can bind them meanwhile (a closed-then-freed port could be
#: taken by `make run` or another test in between).
_HELD: list[Any] = []


def closed_port_url() -> str:
    """A loopback URL that is guaranteed to refuse connections (a port bound, never listening)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD.append(s)
    return f"http://127.0.0.1:{s.getsockname()[1]}"


class RecordingAdapter(HTTPAdapter):
    """Records every request the client would send, answers ``reply`` or raises ``raise_exc``."""

    def __init__(self, reply: Reply | None = None, raise_exc: Exception | None = None) -> None:
        super().__init__()
        self.reply = reply or Reply()
        self.raise_exc = raise_exc
        self.calls: list[dict[str, Any]] = []

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> requests.Response:
        self.calls.append({"method": request.method, "url": request.url, "body": request.body,
                           "headers": dict(request.headers), "timeout": timeout, "verify": verify, "cert": cert})
        if self.raise_exc is not None:
            raise self.raise_exc
        resp = requests.Response()
        resp.status_code = self.reply.status
        resp._content = self.reply.body
        resp._content_consumed = True  # the body is already here: a streamed read reuses it
        resp.headers.update(self.reply.headers)
        resp.url = request.url or ""
        resp.request = request
        return resp


def recording_session(adapter: RecordingAdapter) -> requests.Session:
    s = requests.Session()
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s


class FlakyFront:
    """A real RM (e.g. the emulator) behind an HTTP front that answers 500 — the RM's
    WebApplicationException body — to the next `times` requests of one path (`fail`), and
    forwards everything else unchanged. `failed` lists the paths it failed."""

    ERROR = (b'{"RemoteException":{"exception":"WebApplicationException","message":"java.io.IOException: '
             b'injected by the test","javaClassName":"javax.ws.rs.WebApplicationException"}}')

    def __init__(self, upstream: str) -> None:
        self._upstream = upstream.rstrip("/")
        self._fail: dict[str, int] = {}
        self.failed: list[str] = []
        self._lock = threading.Lock()
        self._session = requests.Session()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = urlsplit(self.path).path
                with owner._lock:
                    failing = owner._fail.get(path, 0) > 0
                    if failing:
                        owner._fail[path] -= 1
                        owner.failed.append(path)
                if failing:
                    status, data, ctype = 500, owner.ERROR, "application/json"
                else:
                    r = owner._session.request(self.command, owner._upstream + self.path, data=body or None, timeout=10,
                                               headers={k: v for k, v in self.headers.items()
                                                        if k.lower() in ("content-type", "accept")})
                    status, data, ctype = r.status_code, r.content, r.headers.get("Content-Type", "application/json")
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def fail(self, path: str, times: int = 1) -> None:
        with self._lock:
            self._fail[path] = self._fail.get(path, 0) + times

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._session.close()

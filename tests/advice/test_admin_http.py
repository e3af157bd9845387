"""The admin HTTP server over real sockets: routing, JSON errors, bearer-token writes, per-route
open reads, and the input limits of issue 15 finding 2 (a 100 MB body read before the 405, a
malformed Content-Length answered with nothing and a traceback, no idle timeout, 534 of 1,000
clients timing out)."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Iterator

import pytest

from harvester.advice.admin_http import AdminAuth, AdminServer, HttpLimits, Response
from harvester.advice.long_poll import WaitSlots, long_poll_route
from harvester.board.versioned_board import VersionedBoard

TOKEN = "tok-3f9a-not-for-logs"


def _call(url: str, method: str = "GET", data: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, method=method, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers.items()), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()


def _raw(server: AdminServer, data: bytes, timeout: float = 10.0) -> bytes:
    """Send raw bytes, return everything the server answers until it closes the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def _serve(**kw: object) -> AdminServer:
    s = AdminServer("127.0.0.1:0", **kw)  # type: ignore[arg-type]
    s.route("/hello", lambda req: Response.json(200, {"q": req.query.get("x", [])}, headers={"ETag": '"3"'}))
    s.route("/boom", lambda req: 1 / 0)
    s.route("/act", lambda req: Response.json(200, {"method": req.method, "body": req.body.decode()}), methods=("POST",))
    s.start()
    return s


@pytest.fixture()
def server() -> Iterator[AdminServer]:
    s = _serve(auth=AdminAuth(TOKEN))
    yield s
    s.stop()


BEARER = {"Authorization": f"Bearer {TOKEN}"}


def test_routes_query_and_headers(server: AdminServer) -> None:
    status, headers, body = _call(f"http://{server.address}/hello?x=1&x=2")
    assert status == 200 and json.loads(body) == {"q": ["1", "2"]} and headers["ETag"] == '"3"'


def test_unknown_path_lists_routes(server: AdminServer) -> None:
    status, _, body = _call(f"http://{server.address}/nope")
    assert status == 404 and "/hello" in json.loads(body)["routes"]


def test_wrong_method_is_405(server: AdminServer) -> None:
    assert _call(f"http://{server.address}/hello", "POST", headers=BEARER)[0] == 405


def test_a_failing_route_answers_500_and_the_server_lives(server: AdminServer) -> None:
    status, _, body = _call(f"http://{server.address}/boom")
    assert status == 500 and "ZeroDivisionError" in json.loads(body)["error"]
    assert _call(f"http://{server.address}/hello")[0] == 200


def test_duplicate_route_is_refused(server: AdminServer) -> None:
    with pytest.raises(ValueError):
        server.route("/hello", lambda req: Response.text(200, ""))


def test_a_route_names_its_methods_and_gets_the_body(server: AdminServer) -> None:
    status, _, body = _call(f"http://{server.address}/act", "POST", b'{"x": 1}', BEARER)
    assert status == 200 and json.loads(body) == {"method": "POST", "body": '{"x": 1}'}
    status, headers, _ = _call(f"http://{server.address}/act")
    assert status == 405 and headers["Allow"] == "POST"
    assert _call(f"http://{server.address}/hello", "POST", b"{}", BEARER)[0] == 405


def test_methods_must_be_upper_case(server: AdminServer) -> None:
    with pytest.raises(ValueError):
        server.route("/lower", lambda req: Response.text(200, ""), methods=("post",))


# --- authentication (finding 3) -------------------------------------------------------------


def test_writes_need_the_bearer_token(server: AdminServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"http://{server.address}/act"
    status, headers, body = _call(url, "POST", b"{}")
    assert status == 401 and headers["WWW-Authenticate"] == "Bearer" and "Bearer" in json.loads(body)["error"]
    assert _call(url, "POST", b"{}", {"Authorization": "Bearer wrong"})[0] == 401
    assert _call(url, "POST", b"{}", {"Authorization": f"Basic {TOKEN}"})[0] == 401
    assert _call(url, "POST", b"{}", BEARER)[0] == 200
    assert TOKEN not in caplog.text and TOKEN not in repr(server.auth)


def test_without_a_configured_token_writes_are_refused() -> None:
    s = _serve()
    try:
        status, _, body = _call(f"http://{s.address}/act", "POST", b"{}", {"Authorization": "Bearer anything"})
        assert status == 403 and "HARVESTER_ADMIN_TOKEN" in json.loads(body)["error"]
        assert _call(f"http://{s.address}/hello")[0] == 200, "reads stay open by default"
    finally:
        s.stop()


def test_reads_can_be_closed_and_opened_per_route() -> None:
    s = _serve(auth=AdminAuth(TOKEN, public_reads=("/boom", "/v1/open/*")))
    s.route("/v1/open/doc", lambda req: Response.json(200, {}))
    try:
        assert _call(f"http://{s.address}/hello")[0] == 401
        assert _call(f"http://{s.address}/hello", headers=BEARER)[0] == 200
        assert _call(f"http://{s.address}/v1/open/doc")[0] == 200
        assert _call(f"http://{s.address}/boom")[0] == 500
    finally:
        s.stop()


# --- input limits (finding 2) ---------------------------------------------------------------


def test_a_body_over_the_cap_is_refused_before_it_is_read() -> None:
    s = _serve(auth=AdminAuth(TOKEN), limits=HttpLimits(max_body_bytes=1024))
    try:
        head = (f"POST /act HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                f"Content-Length: {100 * 1024 * 1024}\r\n\r\n").encode()
        answer = _raw(s, head + b"x" * 4096)  # 4 KB of a declared 100 MB: answered and closed at once
        assert answer.startswith(b"HTTP/1.1 413") and b'"error"' in answer
        # a wrong method with a big body: 405 without reading it either
        answer = _raw(s, b"POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n" + b"y" * 1000)
        assert answer.startswith(b"HTTP/1.1 405")
        # chunked, no length: read only up to the cap
        body = b"800\r\n" + b"z" * 0x800 + b"\r\n0\r\n\r\n"
        answer = _raw(s, f"POST /act HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                         "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode() + body)
        assert answer.startswith(b"HTTP/1.1 413")
    finally:
        s.stop()


def test_a_malformed_request_gets_a_json_400_and_no_traceback(server: AdminServer,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    answer = _raw(server, b"POST /act HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\nhello")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"400" and b"application/json" in head
    assert json.loads(body)["error"].startswith("bad request")
    assert "Traceback" not in caplog.text
    assert _raw(server, b"\x16\x03\x01garbage\r\n\r\n").split(b" ")[1] == b"400"


def test_oversized_headers_are_refused(server: AdminServer) -> None:
    answer = _raw(server, b"GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
    assert answer.split(b" ", 2)[1] in (b"400", b"431")


def test_an_idle_connection_is_closed() -> None:
    s = _serve(limits=HttpLimits(idle_timeout_s=0.3))
    try:
        with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:
            assert c.recv(100) == b"", "closed by the server, long before the 10 s socket timeout"
        with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:  # slowloris: trickled headers
            c.sendall(b"GET /hello HTTP/1.1\r\n")
            assert c.recv(100) == b""
    finally:
        s.stop()


def test_connections_over_the_limit_get_503_and_are_closed() -> None:
    s = _serve(limits=HttpLimits(max_connections=2))
    held = [socket.create_connection(("127.0.0.1", s.port), timeout=10) for _ in range(2)]
    try:
        for c in held:  # make sure both are accepted before the third
            c.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            assert c.recv(65536).startswith(b"HTTP/1.1 200")
        answer = _raw(s, b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 503") and b"too many connections" in answer
    finally:
        for c in held:
            c.close()
        s.stop()


def test_long_polls_do_not_hold_handler_threads() -> None:
    """One handler thread, 30 long-polls waiting: a blocking route is still served, and a
    publication wakes every waiter."""
    board: VersionedBoard[int] = VersionedBoard()
    board.publish(0, lambda v: b'{"v": %d}\n' % v, content=0, first_version=1)
    s = AdminServer("127.0.0.1:0", limits=HttpLimits(handler_threads=1))
    s.route("/doc", long_poll_route(board, max_wait_s=30, not_ready={"error": "none"}, slots=WaitSlots(100)))
    s.route("/block", lambda req: Response.json(200, {"ok": True}))
    s.start()
    results: list[int] = []

    def poll() -> None:
        results.append(_call(f"http://{s.address}/doc?wait=20", headers={"If-None-Match": '"1"'})[0])

    threads = [threading.Thread(target=poll) for _ in range(30)]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while s._metrics is None and len(results) == 0 and time.monotonic() < deadline:  # noqa: SLF001
            if _call(f"http://{s.address}/block")[0] == 200:
                break
        assert _call(f"http://{s.address}/block")[0] == 200
        board.publish(1, lambda v: b'{"v": %d}\n' % v, content=1, first_version=1)
        for t in threads:
            t.join(15)
        assert results == [200] * 30
    finally:
        board.close()
        s.stop()


def test_long_polls_over_the_cap_get_503() -> None:
    board: VersionedBoard[int] = VersionedBoard()
    board.publish(0, lambda v: b"{}\n", content=0, first_version=1)
    s = AdminServer("127.0.0.1:0")
    s.route("/doc", long_poll_route(board, max_wait_s=30, not_ready={}, slots=WaitSlots(0)))
    s.start()
    try:
        status, headers, _ = _call(f"http://{s.address}/doc?wait=5", headers={"If-None-Match": '"1"'})
        assert status == 503 and headers["Retry-After"] == "1"
        assert _call(f"http://{s.address}/doc")[0] == 200, "a request that does not wait is served"
    finally:
        board.close()
        s.stop()


def test_async_handlers_and_sync_handlers_returning_awaitables() -> None:
    s = AdminServer("127.0.0.1:0")

    async def coro(req):  # noqa: ANN001, ANN202
        return Response.json(200, {"async": True})

    s.route("/a", coro)
    s.route("/b", lambda req: coro(req))
    s.route("/c", lambda req: Response.text(200, "ok\n"), blocking=False)
    s.start()
    try:
        assert [_call(f"http://{s.address}/{p}")[0] for p in "abc"] == [200, 200, 200]
    finally:
        s.stop()


def test_a_second_server_on_the_same_port_fails_clearly(server: AdminServer) -> None:
    with pytest.raises(OSError):
        AdminServer(f"127.0.0.1:{server.port}")


def test_prefix_routes_answer_every_path_under_them() -> None:
    s = AdminServer("127.0.0.1:0", auth=AdminAuth(None, ("*",), ("/api/open/*",)))
    s.route("/api/*", lambda req: Response.json(200, {"route": "api", "path": req.path}), methods=("GET", "POST"))
    s.route("/api/open/*", lambda req: Response(204, b"", content_type=""), methods=("POST",))
    s.route("/api/exact", lambda req: Response.json(200, {"route": "exact"}))
    s.start()
    try:
        status, _, body = _call(s.url + "/api/a//b/c")
        assert status == 200 and json.loads(body) == {"route": "api", "path": "/api/a//b/c"}
        assert json.loads(_call(s.url + "/api/exact")[2]) == {"route": "exact"}
        status, headers, body = _call(s.url + "/api/open/x", "POST", b"")
        assert (status, body) == (204, b"") and "Content-Type" not in headers  # the longest prefix; writes opened there
        assert _call(s.url + "/api/x", "POST", b"")[0] == 403  # elsewhere writes still need the token
        assert _call(s.url + "/apix")[0] == 404
    finally:
        s.stop()

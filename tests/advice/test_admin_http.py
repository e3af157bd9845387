from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Iterator

import pytest

from harvester.advice.admin_http import AdminServer, Response


def _call(url: str, method: str = "GET", data: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            return r.status, dict(r.headers.items()), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()


@pytest.fixture()
def server() -> Iterator[AdminServer]:
    s = AdminServer("127.0.0.1:0")
    s.route("/hello", lambda req: Response.json(200, {"q": req.query.get("x", [])}, headers={"ETag": '"3"'}))
    s.route("/boom", lambda req: 1 / 0)
    s.route("/act", lambda req: Response.json(200, {"method": req.method, "body": req.body.decode()}), methods=("POST",))
    s.start()
    yield s
    s.stop()


def test_routes_query_and_headers(server: AdminServer) -> None:
    status, headers, body = _call(f"http://{server.address}/hello?x=1&x=2")
    assert status == 200 and json.loads(body) == {"q": ["1", "2"]} and headers["ETag"] == '"3"'


def test_unknown_path_lists_routes(server: AdminServer) -> None:
    status, _, body = _call(f"http://{server.address}/nope")
    assert status == 404 and "/hello" in json.loads(body)["routes"]


def test_wrong_method_is_405(server: AdminServer) -> None:
    assert _call(f"http://{server.address}/hello", "POST")[0] == 405


def test_a_failing_route_answers_500_and_the_server_lives(server: AdminServer) -> None:
    status, _, body = _call(f"http://{server.address}/boom")
    assert status == 500 and "ZeroDivisionError" in json.loads(body)["error"]
    assert _call(f"http://{server.address}/hello")[0] == 200


def test_duplicate_route_is_refused(server: AdminServer) -> None:
    with pytest.raises(ValueError):
        server.route("/hello", lambda req: Response.text(200, ""))


def test_a_route_names_its_methods_and_gets_the_body(server: AdminServer) -> None:
    status, _, body = _call(f"http://{server.address}/act", "POST", b'{"x": 1}')
    assert status == 200 and json.loads(body) == {"method": "POST", "body": '{"x": 1}'}
    status, headers, _ = _call(f"http://{server.address}/act")
    assert status == 405 and headers["Allow"] == "POST"
    # the GET route still refuses POST (the default stays GET only)
    assert _call(f"http://{server.address}/hello", "POST", b"{}")[0] == 405


def test_methods_must_be_upper_case(server: AdminServer) -> None:
    with pytest.raises(ValueError):
        server.route("/lower", lambda req: Response.text(200, ""), methods=("post",))

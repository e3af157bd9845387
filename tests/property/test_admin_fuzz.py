"""Fuzz the running sidecar's admin routes (issue 15 finding 2 and item 7): any method, path,
query, header and body gets a JSON answer below 500 (errors as `{"error": ...}`), and the
server keeps serving."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
import requests
from hypothesis import HealthCheck, given, settings, strategies as st
from nn_fakes import DN, FakeNameNode, info_doc
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings

T0 = 1_795_430_000.0
TOKEN = "fuzz-admin-token-0123456789abcdef"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harvester]:
    nn = FakeNameNode(info_doc([DN(f"web-{i}", f"10.0.0.{i}") for i in range(3)]))
    token = tmp_path_factory.mktemp("auth") / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)  # a token file open to others is refused (docs/security.md)
    settings = parse_settings({
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2,
                   "auth": {"token_file": str(token)}, "admin_http": {"max_body_bytes": 4096}},
        "embedded": {"listen": "127.0.0.1:0"}, "store": {"backend": "memory"},
        "harvesting": {"refit_min_interval_s": 3600, "node_ordering": {"long_poll_max_s": 0.2}},
        "hdfs": {"enabled": True, "namenode_urls": [nn.url], "long_poll_max_s": 0.2}}, environ={})
    h = Harvester(settings, clock=SimClock(T0), registry=CollectorRegistry())
    h.start(run_loops=False)
    for loop in h.loops:  # every loop once, in data-flow order, so /readyz answers 200 (ready)
        loop.run_once()
    ready = requests.get(f"{h.admin.url}/readyz", timeout=30)
    assert ready.status_code == 200, ready.text  # a 503 from /readyz would be a fair answer, not a fuzz finding
    try:
        yield h
    finally:
        h.stop()
        nn.close()


ROUTES = ["/healthz", "/readyz", "/metrics", "/status", "/v1/harvesting/classes", "/v1/harvesting/nodes",
          "/v1/harvesting/refit", "/v1/hdfs/placement-table", "/v1/hdfs/grid", "/v1/hdfs/status", "/v1/yarn/node-ordering"]
printable = st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]),
       path=st.one_of(st.sampled_from(ROUTES), printable.map(lambda s: "/" + s.replace("?", "").replace("#", ""))),
       query=st.dictionaries(st.sampled_from(["wait", "actions", "x", "node"]),
                             st.one_of(printable, st.sampled_from(["-1", "nan", "inf", "1e309", "0", "0.05"])), max_size=3),
       inm=st.one_of(st.none(), printable, st.sampled_from(['"1"', "*", 'W/"1"', ","])),
       auth=st.sampled_from([None, f"Bearer {TOKEN}", "Bearer wrong", "Basic x", ""]),
       body=st.one_of(st.just(b""), st.binary(max_size=64), st.just(b"x" * 5000)))
def test_every_request_gets_a_json_answer_below_500(app: Harvester, method: str, path: str, query: dict[str, str],
                                                     inm: str | None, auth: str | None, body: bytes) -> None:
    headers = {k: v for k, v in (("If-None-Match", inm), ("Authorization", auth)) if v is not None}
    r = requests.request(method, f"{app.admin.url}{path}", params=query, headers=headers, data=body or None, timeout=30)
    assert r.status_code < 500, (method, path, query, r.status_code, r.text[:300])
    if r.status_code >= 400:
        assert r.headers["Content-Type"].startswith("application/json") and "error" in json.loads(r.content)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(min_size=1, max_size=300))
def test_raw_bytes_get_an_answer_or_a_close_and_the_server_lives(app: Harvester, raw: bytes) -> None:
    with socket.create_connection(("127.0.0.1", app.admin.port), timeout=10) as s:
        s.sendall(raw + b"\r\n\r\n")
        s.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    assert answer == b"" or answer.startswith(b"HTTP/1.")
    assert requests.get(f"{app.admin.url}/healthz", timeout=10).text == "ok\n"

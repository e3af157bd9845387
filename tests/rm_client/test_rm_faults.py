"""The fault suite: a fake RM over real HTTP that is slow, answers 500s, garbage or huge bodies,
and an RM URL with credentials (issue 15 findings 1, 4 and 6). Every failure is one typed
RMError with a redacted message; nothing is read without bound; writes are sent once."""

from __future__ import annotations

import logging
import random
import socket
import threading
from collections.abc import Iterator

import pytest
from rm_fakes import Reply, ScriptedRM

from rm_client import (
    Resource,
    RMClient,
    RMClientConfig,
    RMDecodeError,
    RMResponseTooLargeError,
    RMServerError,
    RMTimeoutError,
)
from rm_client.redact import redact_text, redact_url

ROOT = "/ws/v1/cluster"
NODE = "nm1:45454"


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture()
def rm() -> Iterator[ScriptedRM]:
    server = ScriptedRM()
    yield server
    server.close()


class EndlessRM:
    """Answers every request with 200 and a body that never ends (no Content-Length), or with a
    declared Content-Length of `declared` bytes; counts the bytes it managed to send."""

    def __init__(self, declared: int | None = None) -> None:
        self.sent = 0
        self.closed_early = threading.Event()
        self._declared = declared
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            head += f"Content-Length: {self._declared}\r\n" if self._declared else "Connection: close\r\n"
            try:
                conn.sendall((head + "\r\n").encode() + b'{"nodes":{"node":[')
                chunk = b'{"id":"x"},' * 10_000
                for _ in range(20_000):  # bounded: at most ~2 GB, the client stops long before
                    conn.sendall(chunk)
                    self.sent += len(chunk)
            except OSError:
                self.closed_early.set()

    def close(self) -> None:
        self._sock.close()


def test_a_huge_answer_is_refused_while_it_is_read() -> None:
    rm = EndlessRM()
    try:
        client = RMClient(RMClientConfig(urls=(rm.url,), max_response_bytes=2 * 1024 * 1024, max_retries=0))
        with pytest.raises(RMResponseTooLargeError) as raised:
            client.list_nodes()
        assert "max_response_bytes=2097152" in str(raised.value) and raised.value.path == ROOT + "/nodes"
        assert rm.closed_early.wait(10), "the client closed the connection instead of reading on"
        assert rm.sent < 64 * 1024 * 1024
    finally:
        rm.close()


def test_a_declared_huge_answer_is_not_read_at_all() -> None:
    rm = EndlessRM(declared=10 * 1024**3)
    try:
        client = RMClient(RMClientConfig(urls=(rm.url,), max_response_bytes=1024 * 1024, max_retries=0))
        with pytest.raises(RMResponseTooLargeError, match="10737418240 bytes"):
            client.list_nodes()
    finally:
        rm.close()


def test_garbage_is_a_decode_error_with_context(rm: ScriptedRM) -> None:
    rm.script("GET", ROOT + "/nodes", Reply(200, b"\x00\xffnot json at all"))
    with pytest.raises(RMDecodeError) as raised:
        RMClient(RMClientConfig(urls=(rm.url,))).list_nodes()
    assert raised.value.status == 200 and raised.value.path == ROOT + "/nodes"


def test_a_500_from_the_rm_itself_is_its_answer_not_retried(rm: ScriptedRM) -> None:
    rm.script("GET", ROOT + "/nodes", Reply(500, b'{"RemoteException":{"exception":"X","message":"boom"}}'))
    sleeps = Sleeps()
    with pytest.raises(RMServerError, match="boom"):
        RMClient(RMClientConfig(urls=(rm.url,), max_retries=2), sleep=sleeps).list_nodes()
    assert len(rm.seen) == 1, "a 500 from the RM itself is its answer: not repeated"


def test_a_capacity_update_is_sent_once_even_after_a_read_timeout(rm: ScriptedRM) -> None:
    """Finding 1: the capacity POST was marked idempotent and a slow RM got the same cut 4 times."""
    rm.script("POST", f"{ROOT}/nodes/{NODE}/resource", Reply(200, b"{}", delay_s=1.0))
    sleeps = Sleeps()
    client = RMClient(RMClientConfig(urls=(rm.url,), read_timeout_s=0.2, max_retries=3), sleep=sleeps)
    with pytest.raises(RMTimeoutError) as raised:
        client.update_node_resource(NODE, Resource(8192, 1), 0)
    assert raised.value.maybe_sent is True
    assert len([s for s in rm.seen if s.method == "POST"]) == 1 and sleeps == []


def test_a_deadline_bounds_retries_and_backoff(rm: ScriptedRM) -> None:
    rm.script("GET", ROOT + "/nodes", Reply(503, b"busy"))
    sleeps = Sleeps()
    now = [0.0]

    def monotonic() -> float:
        return now[0]

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    client = RMClient(RMClientConfig(urls=(rm.url,), max_retries=10, backoff_base_s=1.0, backoff_max_s=4.0),
                      sleep=sleep, rng=random.Random(7))
    client.transport._monotonic = monotonic  # the test seam: a clock that moves only when it sleeps
    with client.deadline(3.0), pytest.raises(RMServerError):
        client.list_nodes()
    # full jitter: how many rounds fit varies; none starts once its back-off would end past the deadline
    assert sum(sleeps) < 3.0 and len(rm.seen) == len(sleeps) + 1 < 11, (sleeps, len(rm.seen))


def test_a_spent_deadline_sends_nothing(rm: ScriptedRM) -> None:
    client = RMClient(RMClientConfig(urls=(rm.url,)))
    with client.deadline(0.0), pytest.raises(RMTimeoutError) as raised:
        client.update_node_resource(NODE, Resource(8192, 1), 0)
    assert raised.value.maybe_sent is False and rm.seen == []


def test_credentials_in_the_rm_url_never_reach_errors_or_logs(rm: ScriptedRM, caplog: pytest.LogCaptureFixture) -> None:
    """Finding 4: rm.urls http://user:password@... showed the password in every failed-poll line."""
    rm.script("GET", ROOT + "/nodes", Reply(500, b"boom"))
    host = rm.url.removeprefix("http://")
    client = RMClient(RMClientConfig(urls=(f"http://admin:s3cret-pw@{host}",), max_retries=1), sleep=Sleeps())
    caplog.set_level(logging.DEBUG)
    with pytest.raises(RMServerError) as raised:
        client.list_nodes()
    assert rm.seen[0].headers.get("Authorization", "").startswith("Basic "), "the credentials are still used"
    text = str(raised.value) + repr(raised.value.__dict__) + caplog.text
    assert "s3cret-pw" not in text and "admin:" not in text
    assert f"[rm=http://***@{host}]" in str(raised.value)


def test_a_refused_connection_error_does_not_quote_credentials() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    client = RMClient(RMClientConfig(urls=(f"http://u:topsecret@127.0.0.1:{port}",), max_retries=0))
    with pytest.raises(Exception) as raised:
        client.list_nodes()
    assert "topsecret" not in str(raised.value)


@pytest.mark.parametrize("url, shown", [
    ("http://u:p@rm:8088/ws", "http://***@rm:8088/ws"),
    ("https://rm:8090/x?delegation=abc&user.name=yarn", "https://rm:8090/x?delegation=***&user.name=yarn"),
    ("http://rm:8088", "http://rm:8088"),
    (None, None),
])
def test_redact_url(url: str | None, shown: str | None) -> None:
    assert redact_url(url) == shown


def test_redact_text_masks_every_url_in_a_message() -> None:
    text = "GET http://a:b@h1/x failed; then https://c@h2:1/y?token=zz&x=1"
    assert redact_text(text) == "GET http://***@h1/x failed; then https://***@h2:1/y?token=***&x=1"

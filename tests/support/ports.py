"""Tests never listen on the default ports (18088, 9464, 50051): `make run` may hold them while
`make test` runs (tests/test_default_ports.py checks that the suite passes then)."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request

from harvester.config import Settings


def free_port() -> int:
    """A loopback port free now (for a `harvester serve` child given fixed ports)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout_s: float = 2.0) -> tuple[int, bytes]:
    """(status, body) of a GET; an HTTP error status is an answer, not an exception."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def on_free_ports(settings: Settings) -> Settings:
    """`settings` with every listen address (admin, gRPC, embedded emulator) on port 0 of its host."""
    def zero(listen: str) -> str:
        return f"{listen.rpartition(':')[0]}:0"

    s = settings.server
    return settings.model_copy(update={
        "server": s.model_copy(update={"grpc_listen": zero(s.grpc_listen), "admin_listen": zero(s.admin_listen)}),
        "embedded": settings.embedded.model_copy(update={"listen": zero(settings.embedded.listen)}),
    })


def wait_ready(admin_base: str, proc: subprocess.Popen, timeout_s: float = 20.0) -> None:
    """Until a `harvester serve` child answers /readyz 200; AssertionError with its stderr if it
    exits first or is not ready in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if http_get(admin_base + "/readyz")[0] == 200:
                return
        except OSError:
            pass
        if proc.poll() is not None:
            raise AssertionError(f"serve exited ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.1)
    raise AssertionError(f"serve not ready within {timeout_s:.0f} s")

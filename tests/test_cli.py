from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from harvester import __version__
from harvester.cli import main
from ports import free_port, http_get, wait_ready


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == f"harvester {__version__}"


@pytest.mark.parametrize("argv", [["--version"], ["version"]])
def test_version_flag_and_command(argv: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", "harvester", *argv], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"harvester {__version__}"


def test_python_dash_m_works() -> None:
    out = subprocess.run([sys.executable, "-m", "harvester", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("harvester ")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_answers_health_and_metrics_and_stops_within_5s(tmp_path: Path, sig: signal.Signals) -> None:
    grpc_port, admin_port = free_port(), free_port()
    cfg = tmp_path / "h.yaml"
    cfg.write_text(
        f"server:\n  grpc_listen: 127.0.0.1:{grpc_port}\n  admin_listen: 127.0.0.1:{admin_port}\n"
        f"store:\n  path: {tmp_path / 'h.db'}\ntelemetry:\n  poll_interval_s: 0.2\n"
        f"embedded:\n  listen: 127.0.0.1:{free_port()}\n"
    )
    proc = subprocess.Popen([sys.executable, "-m", "harvester", "serve", "--config", str(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{admin_port}"
        wait_ready(base, proc)

        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as ch:
            resp = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
            assert resp.status == health_pb2.HealthCheckResponse.SERVING

        time.sleep(0.5)  # a few telemetry ticks
        status, body = http_get(base + "/metrics")
        assert status == 200
        text = body.decode()
        ticks = [l for l in text.splitlines() if l.startswith('harvester_loop_ticks_total{loop="telemetry",outcome="ok"}')]
        assert ticks and float(ticks[0].split()[-1]) >= 2, text[:500]
        doc = json.loads(http_get(base + "/status")[1])
        assert {l["name"] for l in doc["loops"]} >= {"telemetry", "retention"}
        telemetry = next(l for l in doc["loops"] if l["name"] == "telemetry")
        assert telemetry["last_summary"]["nodes"] == 12, "the embedded demo cluster is polled over HTTP"
        assert doc["cluster"]["source"] == "embedded"
        assert doc["store"]["schema_version"] >= 1

        started = time.monotonic()
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 5.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_with_bad_config_exits_2(tmp_path: Path) -> None:
    cfg = tmp_path / "h.yaml"
    cfg.write_text("server:\n  admin_listen: 99999\n")
    out = subprocess.run([sys.executable, "-m", "harvester", "serve", "--config", str(cfg)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "server.admin_listen" in out.stderr


@pytest.mark.parametrize("key", ["server.admin_listen", "server.grpc_listen", "embedded.listen"])
def test_serve_with_busy_port_names_the_address_and_the_setting(tmp_path: Path, key: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        ports = {"server.admin_listen": free_port(), "server.grpc_listen": free_port(), "embedded.listen": free_port()}
        ports[key] = busy
        cfg = tmp_path / "h.yaml"
        cfg.write_text(f"server:\n  grpc_listen: 127.0.0.1:{ports['server.grpc_listen']}\n"
                       f"  admin_listen: 127.0.0.1:{ports['server.admin_listen']}\nstore:\n  backend: memory\n"
                       f"embedded:\n  listen: 127.0.0.1:{ports['embedded.listen']}\n")
        out = subprocess.run([sys.executable, "-m", "harvester", "serve", "--config", str(cfg)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert "cannot start" in out.stderr and f"127.0.0.1:{busy}" in out.stderr and key in out.stderr
    assert "already in use" in out.stderr


def test_a_second_grpc_server_cannot_share_the_port() -> None:
    """gRPC's default SO_REUSEPORT would let two sidecars serve one port, each a random half."""
    from prometheus_client import CollectorRegistry

    from harvester.advice.grpc_server import GrpcServer
    from harvester.observability.metrics import Metrics

    first = GrpcServer("127.0.0.1:0", Metrics(CollectorRegistry()))
    try:
        with pytest.raises(OSError, match=f"127.0.0.1:{first.port}"):
            GrpcServer(f"127.0.0.1:{first.port}", Metrics(CollectorRegistry()))
    finally:
        first.stop(0)


def test_a_closed_pipe_is_not_a_traceback() -> None:
    proc = subprocess.Popen([sys.executable, "-c",
                             "import sys, harvester.cli as c\n"
                             "c.cmd_version = lambda a: [print('x' * 100) for _ in range(20000)] and 0\n"
                             "sys.exit(c.main(['version']))"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err

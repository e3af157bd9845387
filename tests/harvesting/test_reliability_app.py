"""The composition root under the findings of issue 15: credentials in rm.urls never shown
(/status, /readyz, logs), /readyz names the failing dependency, a read-only store gives a clear
not-ready reason without a traceback per tick, refits are rate-limited and old model versions
pruned, TLS on both faces, a second sidecar on the same gRPC port fails."""

from __future__ import annotations

import json
import logging
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import requests
from prometheus_client import CollectorRegistry
from tls_certs import Certs, make_certs

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.history.sqlite import SqliteHistoryStore
from harvester.v1 import yarn_advisor_pb2, yarn_advisor_pb2_grpc

T0 = 1_795_430_000.0
TOKEN = "reliability-test-token-0123456789"
PORTS = {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2}


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _get(url: str, **kw: Any) -> tuple[int, Any]:
    r = requests.get(url, timeout=10, **kw)
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, r.text


@pytest.fixture(autouse=True)
def _no_env_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARVESTER_ADMIN_TOKEN", raising=False)


def _app(tmp_path: Path, extra: dict[str, Any] | None = None, **kw: Any) -> Harvester:
    doc: dict[str, Any] = {"server": dict(PORTS), "store": {"backend": "memory"},
                           "cluster": {"source": "rm"}, "rm": {"urls": [f"http://127.0.0.1:{_closed_port()}"]}}
    for k, v in (extra or {}).items():
        doc[k] = {**doc.get(k, {}), **v} if isinstance(v, dict) else v
    return Harvester(parse_settings(doc, environ={}), clock=SimClock(T0), registry=CollectorRegistry(), **kw)


@pytest.fixture()
def secret_rm(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Harvester]:
    app = _app(tmp_path, {"rm": {"urls": [f"http://yarn:hunter2-pw@127.0.0.1:{_closed_port()}"], "max_retries": 0}})
    app.start(run_loops=False)
    try:
        yield app
    finally:
        app.stop()


def test_credentials_in_rm_urls_never_reach_status_readyz_or_logs(secret_rm: Harvester,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for _ in range(3):
        assert secret_rm.loop("telemetry").run_once() is None
    base = secret_rm.admin.url
    status, doc = _get(f"{base}/status")
    assert status == 200 and doc["cluster"]["rm_url"][0].startswith("http://***@127.0.0.1:")
    code, ready = _get(f"{base}/readyz")
    assert code == 503 and ready["failing"] == ["rm"]
    assert ready["dependencies"]["rm"]["loop"] == "telemetry" and "Connection refused" in ready["dependencies"]["rm"]["last_error"]
    assert ready["dependencies"]["store"] == {"ok": True}
    metrics = requests.get(f"{base}/metrics", timeout=10).text
    everything = json.dumps(doc) + json.dumps(ready) + caplog.text + metrics
    assert "hunter2" not in everything and "yarn:" not in everything


@pytest.fixture()
def immutable_store(tmp_path: Path) -> Iterator[Path]:
    if shutil.which("chattr") is None:
        pytest.skip("chattr not available")
    path = tmp_path / "h.db"
    SqliteHistoryStore(path).close()
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("cannot make a file immutable here (chattr +i refused)")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def test_a_read_only_store_is_refused_by_check_and_serve(immutable_store: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:0\nembedded:\n  listen: 127.0.0.1:0\n"
                   f"store:\n  path: {immutable_store}\n")
    for cmd in (["config", "check", str(cfg)], ["serve", "--config", str(cfg)]):
        proc = subprocess.run([sys.executable, "-m", "harvester", *cmd], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "cannot be opened for writing" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1


def test_a_read_only_store_at_run_time_is_one_line_and_a_clear_not_ready(immutable_store: Path, tmp_path: Path) -> None:
    from emu_cluster import EmuCluster
    from shown_log import shown_log

    with EmuCluster() as cluster, shown_log() as shown:
        store = SqliteHistoryStore(immutable_store)  # opens read-only: the file cannot be written
        app = _app(tmp_path, {"rm": {"urls": [cluster.url]}}, store=store)
        app.start(run_loops=False)
        try:
            for _ in range(5):
                assert app.loop("telemetry").run_once() is None
            code, ready = _get(f"{app.admin.url}/readyz")
            assert code == 503 and ready["failing"] == ["store"]
            assert "attempt to write a readonly database" in ready["dependencies"]["store"]["last_error"]
            lines = [line for line in shown.getvalue().splitlines() if "harvester.loop.runner" in line]
            assert len(lines) == 1 and "(store)" in lines[0] and "Traceback" not in shown.getvalue(), lines
        finally:
            app.stop()


def test_refits_are_rate_limited(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)  # a token file open to others is refused (docs/security.md)
    from emu_cluster import EmuCluster

    with EmuCluster() as cluster:
        app = _app(tmp_path, {"rm": {"urls": [cluster.url]}, "server": {"auth": {"token_file": str(token)}},
                              "harvesting": {"refit_min_interval_s": 3600}, "store": {"model_versions_kept": 2}})
        app.start(run_loops=False)
        try:
            auth = {"Authorization": f"Bearer {TOKEN}"}
            url = f"{app.admin.url}/v1/harvesting/refit"
            first = requests.post(url, headers=auth, timeout=60)
            assert first.status_code in (200, 500)  # no tenant history yet may fail the fit: it still counts
            second = requests.post(url, headers=auth, timeout=60)
            assert second.status_code == 429 and int(second.headers["Retry-After"]) > 3000
            assert "refit_min_interval_s" in second.json()["error"]
        finally:
            app.stop()


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.mark.parametrize("advice_process", [False, True], ids=["one-process", "advice-process"])
def test_tls_and_mutual_tls_on_both_faces(tmp_path: Path, certs: Certs, advice_process: bool) -> None:
    app = _app(tmp_path, {"server": {"tls": {"cert_file": str(certs.server_cert), "key_file": str(certs.server_key),
                                             "client_ca_file": str(certs.ca)},
                                     "grpc_advice_process": advice_process}})
    app.start(run_loops=False)
    try:
        assert app.admin.url.startswith("https://")
        client = (str(certs.client_cert), str(certs.client_key))
        assert requests.get(f"{app.admin.url}/healthz", verify=str(certs.ca), cert=client, timeout=10).text == "ok\n"
        with pytest.raises(requests.exceptions.RequestException):  # no client certificate: refused
            requests.get(f"{app.admin.url}/healthz", verify=str(certs.ca), timeout=10)
        with pytest.raises(requests.exceptions.RequestException):  # plaintext: refused
            requests.get(f"http://{app.admin.address}/healthz", timeout=10)
        creds = grpc.ssl_channel_credentials(certs.ca.read_bytes(), certs.client_key.read_bytes(),
                                             certs.client_cert.read_bytes())
        with grpc.secure_channel(app.grpc.address, creds, options=[("grpc.ssl_target_name_override", "localhost")]) as ch:
            stub = yarn_advisor_pb2_grpc.YarnAdvisorStub(ch)
            with pytest.raises(grpc.RpcError) as raised:
                stub.ListTenantClasses(yarn_advisor_pb2.ListTenantClassesRequest(), timeout=10)
            assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION, "served over mutual TLS"
            with pytest.raises(grpc.RpcError) as raised:  # forwarded to the main process with the advice process
                stub.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest(), timeout=10)
            assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        with grpc.insecure_channel(app.grpc.address) as ch:
            with pytest.raises(grpc.RpcError) as raised:
                yarn_advisor_pb2_grpc.YarnAdvisorStub(ch).ListTenantClasses(
                    yarn_advisor_pb2.ListTenantClassesRequest(), timeout=5)
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        app.stop()


def test_a_second_sidecar_on_the_same_grpc_port_fails_clearly(tmp_path: Path) -> None:
    first = _app(tmp_path)
    try:
        with pytest.raises(OSError, match="cannot listen on .* for gRPC"):
            _app(tmp_path, {"server": {"grpc_listen": first.grpc.address}})
    finally:
        first.stop()


def test_admin_writes_refused_without_a_token(tmp_path: Path) -> None:
    app = _app(tmp_path)
    app.start(run_loops=False)
    try:
        req = urllib.request.Request(f"{app.admin.url}/v1/harvesting/refit", method="POST", data=b"")
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(req, timeout=10)
        assert raised.value.code == 403
    finally:
        app.stop()

"""Issue 25, the CLI and the admin face on a fresh clone: `tenants --refit` works in the embedded
default (its local token), a 401/403 is told as what it is wherever the CLI talks to the admin
face, a token file open to others is refused, a closed face's 404 does not list its routes,
`serve` says https when TLS is on, a malformed `--rm-url` is one line without its password."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from embedded_sidecar import embedded_sidecar, loopback_settings, run_control_periods
from emu_cluster import EmuCluster
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminAuth, AdminServer, Response
from harvester.app import Harvester
from harvester.cli import main

TOKEN = "sharp-edges-admin-token-0123456789"


@pytest.fixture(autouse=True)
def _no_token_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARVESTER_ADMIN_TOKEN", raising=False)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def local_token_path() -> Path:
    from harvester.admin_token import local_token_path as path  # imported late: absent before issue 25

    return path()


def _token_file(tmp_path: Path, mode: int = 0o600) -> Path:
    f = tmp_path / "admin.token"
    f.write_text(TOKEN + "\n")
    f.chmod(mode)
    return f


# --- the embedded default's local token --------------------------------------------------------

def test_tenants_refit_works_in_the_embedded_default_without_a_token_setting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`make run`, then `harvester tenants --refit` (README "Then try"): no token configured
    anywhere; the sidecar made a 0600 token file in the state folder and the CLI read it."""
    with embedded_sidecar(tmp_path / "h.db") as app:
        assert app.admin.auth.has_token, "the embedded default has a token for its admin writes"
        path = local_token_path()
        assert path.is_file() and path.stat().st_mode & 0o777 == 0o600
        code, out, err = _run(capsys, "tenants", "--refit", "--json", "--admin", f"http://{app.admin.address}")
        assert (code, err) == (0, ""), err
        assert json.loads(out)["model_version"] is not None


def test_the_local_token_is_kept_across_restarts_and_replaced_when_open_to_others(tmp_path: Path) -> None:
    with embedded_sidecar(tmp_path / "h.db"):
        first = local_token_path().read_text()
    with embedded_sidecar(tmp_path / "h.db"):
        assert local_token_path().read_text() == first, "a restart keeps it (a CLI holding it still works)"
    local_token_path().chmod(0o644)
    with embedded_sidecar(tmp_path / "h.db") as app:
        assert local_token_path().read_text() != first, "one others could read is replaced"
        assert local_token_path().stat().st_mode & 0o777 == 0o600 and app.admin.auth.has_token


def test_a_real_rm_gets_no_local_token(tmp_path: Path) -> None:
    with EmuCluster() as cluster:
        app = Harvester(loopback_settings({"backend": "memory"}, {"cluster": {"source": "rm"}, "rm": {"urls": [cluster.url]}}),
                        clock=cluster.clock, registry=CollectorRegistry())
        try:
            assert not app.admin.auth.has_token, "a real deployment configures its token"
        finally:
            app.stop()


# --- 401 / 403 told as what they are ----------------------------------------------------------

@pytest.fixture()
def guarded(tmp_path: Path) -> Iterator[Harvester]:
    """An embedded sidecar with a configured token and closed reads."""
    token = _token_file(tmp_path)
    with embedded_sidecar(tmp_path / "h.db", {"server": {"auth": {"token_file": str(token),
                                                                  "public_reads": ["/healthz"]}}}) as app:
        run_control_periods(app, periods=1)
        yield app


@pytest.mark.parametrize("argv", [
    ["tenants", "--refit"], ["tenants"], ["slo", "list"], ["slo", "accept", "demo-hourly-etl"],
    ["slo", "override", "demo-hourly-etl", "--deadline-s", "100"], ["explain", "node", "web-01.demo.harvester:45454"],
])
def test_a_401_says_authentication_refused_and_which_token_setting(
        guarded: Harvester, capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]) -> None:
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-right-token-0123456789\n")
    wrong.chmod(0o600)
    code, _, err = _run(capsys, *argv, "--admin", f"http://{guarded.admin.address}", "--token-file", str(wrong))
    assert code == 1 and err.count("\n") == 1, err
    assert "HTTP 401" in err and "authentication refused" in err and "--token-file" in err, err
    assert "HARVESTER_ADMIN_TOKEN" in err and "server.auth.token_file" in err and "cannot reach" not in err, err


def test_a_403_says_authorization_refused_and_what_to_configure(capsys: pytest.CaptureFixture[str]) -> None:
    with EmuCluster() as cluster:
        app = Harvester(loopback_settings({"backend": "memory"}, {"cluster": {"source": "rm"}, "rm": {"urls": [cluster.url]}}),
                        clock=cluster.clock, registry=CollectorRegistry())
        app.start(run_loops=False)
        try:
            code, _, err = _run(capsys, "tenants", "--refit", "--admin", f"http://{app.admin.address}")
        finally:
            app.stop()
    assert code == 1 and err.count("\n") == 1, err
    assert "HTTP 403" in err and "authorization refused" in err and "server.auth.token_file" in err, err
    assert "cannot reach" not in err


def test_the_right_token_file_is_read_and_a_closed_read_answers(guarded: Harvester, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    token = guarded.settings.server.auth.token_file
    code, out, err = _run(capsys, "explain", "tenant", "web", "--admin", f"http://{guarded.admin.address}",
                          "--token-file", str(token))
    assert code == 0 and out.startswith("tenant web"), err


# --- token files open to others ---------------------------------------------------------------

def test_a_token_file_open_to_others_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = _token_file(tmp_path, 0o644)
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:0\n  auth:\n    token_file: {token}\n"
                   f"embedded:\n  listen: 127.0.0.1:0\nstore:\n  path: {tmp_path / 'h.db'}\n")
    code, _, err = _run(capsys, "config", "check", str(cfg))
    assert code == 2 and err.count("\n") == 1 and "mode 0644" in err and f"chmod 600 {token}" in err, err
    assert TOKEN not in err
    code, _, err = _run(capsys, "tenants", "--refit", "--token-file", str(token), "--admin", "http://127.0.0.1:9")
    assert code == 2 and "--token-file" in err and "mode 0644" in err, err
    token.chmod(0o600)
    assert _run(capsys, "config", "check", str(cfg))[0] == 0


# --- the admin face ---------------------------------------------------------------------------

def _get(url: str, token: str | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_404_lists_only_the_routes_the_caller_may_call() -> None:
    closed = AdminServer("127.0.0.1:0", auth=AdminAuth(TOKEN, ("/healthz",)))
    opened = AdminServer("127.0.0.1:0", auth=AdminAuth(TOKEN, ("*",)))
    for server in (closed, opened):
        for path in ("/healthz", "/status", "/v1/secret-admin-thing"):
            server.route(path, lambda req: Response.json(200, {}))
        server.start()
    try:
        status, doc = _get(f"{closed.url}/nope")
        assert status == 404 and doc["routes"] == ["/healthz"], doc
        assert _get(f"{closed.url}/nope", TOKEN)[1]["routes"] == ["/healthz", "/status", "/v1/secret-admin-thing"]
        assert _get(f"{opened.url}/nope")[1]["routes"] == ["/healthz", "/status", "/v1/secret-admin-thing"]
        status, doc = _get(f"{closed.url}/{'x' * 5000}")
        assert status == 404 and len(doc["error"]) < 300, "the path is echoed cut"
    finally:
        closed.stop()
        opened.stop()


def test_serve_says_https_when_tls_is_on_and_notes_an_empty_file(tmp_path: Path) -> None:
    from tls_certs import make_certs

    certs = make_certs(tmp_path)
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:0\n  shutdown_grace_s: 0.2\n"
                   f"  tls:\n    cert_file: {certs.server_cert}\n    key_file: {certs.server_key}\n"
                   f"store:\n  backend: memory\nembedded:\n  listen: 127.0.0.1:0\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    env = {**os.environ, "HARVESTER_SERVER__GRPC_LISTEN": "127.0.0.1:0", "HARVESTER_SERVER__ADMIN_LISTEN": "127.0.0.1:0",
           "HARVESTER_EMBEDDED__LISTEN": "127.0.0.1:0", "HARVESTER_STORE__BACKEND": "memory"}
    for path, expect in ((cfg, "admin https://127.0.0.1:"), (empty, "sets nothing (empty or only comments): only the environment's overrides apply")):
        proc = subprocess.Popen([sys.executable, "-m", "harvester", "serve", "--config", str(path)],
                                stderr=subprocess.PIPE, text=True, env=env if path is empty else None)
        try:
            lines = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = proc.stderr.readline()
                if not line:
                    break
                lines.append(line)
                if "serving:" in line:
                    break
            assert any(expect in line for line in lines), lines
            if path is cfg:
                banner = next(line for line in lines if "serving:" in line)
                assert "http://" not in banner and "(TLS)" in banner, banner
        finally:
            proc.terminate()
            proc.wait(timeout=10)


# --- a malformed --rm-url ----------------------------------------------------------------------

@pytest.mark.parametrize("url", ["http://u:s3cret@[::1:28388", "http://u:s3cret@rm:abc", "ftp://u:s3cret@rm:8088"])
def test_a_malformed_rm_url_is_one_line_exit_2_without_its_password(capsys: pytest.CaptureFixture[str], url: str) -> None:
    code, _, err = _run(capsys, "rm", "nodes", "--rm-url", url)
    assert code == 2 and err.count("\n") == 1 and "--rm-url" in err, err
    assert "s3cret" not in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["tenants", "--admin"], ["slo", "list", "--admin"], ["explain", "node", "n", "--admin"],
                                  ["hdfs", "table", "--url"]])
def test_a_password_in_the_admin_url_is_not_echoed(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = _run(capsys, *argv, "http://u:s3cret@[::1:9464")
    assert code == 1 and err.count("\n") == 1 and "s3cret" not in err and "***@" in err, err

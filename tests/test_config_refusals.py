"""Broken settings are refused by `config check` in ONE line with exit 2 — and `check` makes every
check `serve` makes (issue 15 finding 5: 14 of 46 broken settings got through, among them
periods of .inf, `window_days: 1e6`, `backoff_base_s` > `backoff_max_s`, kerberos without its
extra, an unbindable gRPC host, `store.path` a directory, duplicate keys, 1,000-deep YAML)."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import annotated_types
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from harvester.cli import main
from harvester.config import Settings

OK_PORTS = "server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:0\nembedded:\n  listen: 127.0.0.1:0\n"
GOOD_TOKEN = "a-good-admin-token-0123456789"


def _check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["config", "check", str(path)])
    err = capsys.readouterr().err
    return code, err


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARVESTER_ADMIN_TOKEN", raising=False)


@pytest.fixture()
def store(tmp_path: Path) -> str:
    return f"store:\n  path: {tmp_path / 'h.db'}\n"


def _deep(n: int) -> str:
    return "x: " + "[" * n + "]" * n + "\n"


def _bomb() -> str:
    lines, prev = ["a: &a [x,x,x,x,x,x,x,x,x]"], "a"
    for n in "bcdefghi":
        lines.append(f"{n}: &{n} [" + ",".join(["*" + prev] * 9) + "]")
        prev = n
    return "\n".join(lines) + "\nrm:\n  urls: *i\n"


#: (YAML after the loopback ports and a store, the text the one line must contain)
CASES = [
    ("telemetry:\n  poll_interval_s: .inf\n", "telemetry.poll_interval_s"),
    ("harvesting:\n  control_period_s: 1e308\n", "harvesting.control_period_s"),
    ("harvesting:\n  refit_interval_s: .inf\n", "harvesting.refit_interval_s"),
    ("harvesting:\n  window_days: 1e6\n", "harvesting.window_days"),
    ("harvesting:\n  sample_step_s: 0.001\n", "harvesting.sample_step_s"),
    ("harvesting:\n  window_days: 90\n  sample_step_s: 10\n", "samples per tenant"),
    ("telemetry:\n  stale_after_s: .inf\n", "telemetry.stale_after_s"),
    ("telemetry:\n  stale_after_s: .nan\n", "telemetry.stale_after_s"),
    ("store:\n  retention_days: .inf\n", "store.retention_days"),
    ("hdfs:\n  poll_interval_s: .nan\n", "hdfs.poll_interval_s"),
    ("hdfs:\n  window_days: 365\n  sample_step_s: 10\n", "200,000 samples"),
    ("rm:\n  backoff_base_s: 10\n  backoff_max_s: 1\n", "rm.backoff_base_s (10) is above rm.backoff_max_s (1)"),
    ("rm:\n  read_timeout_s: 1e9\n", "rm.read_timeout_s"),
    ("rm:\n  max_response_mb: 0\n", "rm.max_response_mb"),
    ("harvesting:\n  reserve:\n    quantile: .nan\n", "harvesting.reserve.quantile"),
    ("harvesting:\n  guard:\n    overcommit_timeout_ms: 1000000000000\n", "harvesting.guard.overcommit_timeout_ms"),
    ("harvesting:\n  patterns:\n    min_samples: 1000000000\n", "harvesting.patterns.min_samples"),
    ("placement:\n  max_tasks_per_request: 1000000000\n", "placement.max_tasks_per_request"),
    ("embedded:\n  seed: -1\n", "embedded.seed"),
    ("telemetry:\n  failure_backoff_max_s: -1\n", "telemetry.failure_backoff_max_s"),
    ("server:\n  admin_http:\n    max_connections: 1\n", "server.admin_http.max_connections"),
    ("server:\n  auth:\n    public_reads: [healthz]\n", "server.auth.public_reads"),
    ("server:\n  auth:\n    token_file: /nonexistent/token\n", "server.auth.token_file"),
    ("server:\n  tls:\n    cert_file: {cert}\n", "give both cert_file and key_file"),
    ("server:\n  tls:\n    cert_file: {garbage}\n    key_file: {garbage}\n", "server.tls: the certificate"),
    ("kerberos:\n  keytab: /nonexistent/krb5.keytab\n", "kerberos.keytab"),
    ("hdfs:\n  enabled: true\n", "namenode_urls: missing value"),
    ("server:\n  grpc_listen: 0.0.0.0:0\n", "server.grpc_listen: 0.0.0.0 is not loopback"),
    ("server:\n  admin_listen: 0.0.0.0:0\n", "server.admin_listen: 0.0.0.0 is not loopback and there is no TLS"),
    ("embedded:\n  listen: 0.0.0.0:0\n", "embedded.listen: 0.0.0.0 is not loopback"),
    ("estimator:\n  enabled: true\n  listen: 0.0.0.0:0\n", "estimator.listen: 0.0.0.0 is not loopback and there is no TLS"),
    ("estimator:\n  enabled: true\n  listen: 0.0.0.0:0\n  open_writes: true\n", "estimator.open_writes lets anyone"),
    ("estimator:\n  data_dir: {tmp}/no-such-dir\n", "estimator.data_dir"),
    ("estimator:\n  time_interval: 0\n", "estimator.time_interval"),
    ("server:\n  grpc_listen: 192.0.2.7:50051\n  allow_insecure_remote: true\n",
     "cannot listen on 192.0.2.7:50051 (server.grpc_listen)"),
    ("store:\n  path: {tmp}\n", "is a directory"),
    ("store:\n  path: {garbage}\n", "is not a SQLite database"),
    ("server:\n  grpc_listen: 127.0.0.1:1\n  grpc_listen: 127.0.0.1:2\n", "duplicate key 'grpc_listen' (first at line"),
    ("mystery: 1\n", "mystery: unknown key"),
    ("- just\n- a list\n", "the top level must be a mapping of sections, got list"),
]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    cert = tmp_path / "only-cert.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    return {"garbage": str(garbage), "cert": str(cert), "tmp": str(tmp_path)}


@pytest.mark.parametrize("text, expected", CASES, ids=[c[1][:40] for c in CASES])
def test_a_broken_setting_is_one_line_and_exit_2(text: str, expected: str, tmp_path: Path, store: str,
                                                files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    body = text.format(**files)
    if body.startswith("server:"):  # the case's own server section, with loopback ports unless it names them
        ports = "".join(f"  {k}: 127.0.0.1:0\n" for k in ("grpc_listen", "admin_listen") if f"{k}:" not in body)
        body = "server:\n" + ports + body.removeprefix("server:\n") + OK_PORTS.split("server:\n", 1)[1].split("\n", 2)[2]
        body += "" if body.count("store:") else store
    elif not body.startswith(("store:", "embedded:", "- ")):
        body = OK_PORTS + store + body
    elif body.startswith("store:"):
        body = OK_PORTS + body
    elif body.startswith("embedded:"):
        body = OK_PORTS.split("embedded:")[0] + store + body
    path = tmp_path / "h.yaml"
    path.write_text(body)
    code, err = _check(path, capsys)
    assert code == 2, err
    assert expected in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("text, expected", [
    (_deep(1000), "nested deeper than 32 levels"),
    ("a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 60)) + "  " * 60 + "v: 1\n", "nested deeper"),
    (_bomb(), "more than 100,000 values once aliases are expanded"),
])
def test_hostile_yaml_fails_in_one_line(text: str, expected: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(text)
    code, err = _check(path, capsys)
    assert code == 2 and expected in err and err.count("\n") == 1, err


def test_a_huge_file_a_directory_and_bad_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * (2 * 1024 * 1024) + "\n")
    assert _check(big, capsys) == (2, f"harvester: config error: {big}: larger than 1024 KB: not a settings file\n")
    code, err = _check(tmp_path, capsys)
    assert code == 2 and "is a directory" in err
    raw = tmp_path / "raw.yaml"
    raw.write_bytes(b"\xff\xfe\x00garbage")
    code, err = _check(raw, capsys)
    assert code == 2 and "not UTF-8" in err


def test_kerberos_without_its_extra(tmp_path: Path, store: str, capsys: pytest.CaptureFixture[str]) -> None:
    if importlib.util.find_spec("requests_gssapi") is not None:
        pytest.skip("requests-gssapi is installed here: the missing-extra refusal cannot be shown")
    path = tmp_path / "h.yaml"
    for section in ("rm", "hdfs"):
        extra = "  namenode_urls: [http://nn:9870]\n" if section == "hdfs" else ""
        path.write_text(OK_PORTS + store + f"{section}:\n  auth: kerberos\n{extra}")
        code, err = _check(path, capsys)
        assert code == 2 and f"{section}.auth: kerberos needs the optional 'kerberos' extra" in err, err


def test_a_port_in_use_is_found_by_check_ports(tmp_path: Path, store: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Only with --ports (issue 25: a running sidecar holds its file's ports; checking the file
    alone must still pass, tests/test_config_sharp_edges.py)."""
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        path = tmp_path / "h.yaml"
        path.write_text(OK_PORTS.replace("admin_listen: 127.0.0.1:0", f"admin_listen: 127.0.0.1:{port}") + store)
        code = main(["config", "check", "--ports", str(path)])
        err = capsys.readouterr().err
    assert code == 2 and f"127.0.0.1:{port} is already in use (server.admin_listen)" in err


@pytest.fixture()
def token_file(tmp_path: Path) -> Iterator[Path]:
    f = tmp_path / "token"
    f.write_text(GOOD_TOKEN + "\n")
    f.chmod(0o600)
    yield f


def test_tokens_are_checked_and_never_echoed(tmp_path: Path, store: str, token_file: Path,
                                             monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(OK_PORTS + store)
    monkeypatch.setenv("HARVESTER_ADMIN_TOKEN", "short")
    code, err = _check(path, capsys)
    assert code == 2 and "$HARVESTER_ADMIN_TOKEN: the admin token must be at least 16 characters" in err
    assert "short" not in err.replace("shorter", "")
    monkeypatch.delenv("HARVESTER_ADMIN_TOKEN")
    path.write_text(OK_PORTS.replace("server:\n", f"server:\n  auth:\n    token_file: {token_file}\n") + store)
    assert _check(path, capsys)[0] == 0


def test_a_good_file_passes_and_then_serve_starts(tmp_path: Path, store: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`check` passing means `serve` starts (the serve side: tests/test_cli.py starts it)."""
    path = tmp_path / "h.yaml"
    path.write_text(OK_PORTS + store)
    assert main(["config", "check", str(path)]) == 0
    assert "is valid" in capsys.readouterr().out


def test_serve_refuses_what_check_refuses(tmp_path: Path, store: str) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(OK_PORTS.replace("admin_listen: 127.0.0.1:0", "admin_listen: 0.0.0.0:0") + store)
    proc = subprocess.run([sys.executable, "-m", "harvester", "serve", "--config", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "server.admin_listen: 0.0.0.0 is not loopback" in proc.stderr
    assert proc.stderr.count("\n") == 1


def _numeric(annotation: object) -> bool:
    args = typing.get_args(annotation)
    if annotation in (int, float):
        return True
    return bool(args) and any(a in (int, float) for a in args) and all(a in (int, float, type(None)) for a in args)


def _numbers(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    for name, info in model.model_fields.items():
        if _numeric(info.annotation):
            yield prefix + name, info
        for arg in (info.annotation, *typing.get_args(info.annotation)):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                yield from _numbers(arg, f"{prefix}{name}.")


def test_every_number_of_the_schema_has_both_bounds() -> None:
    """Issue 15 build 5: finite, bounded ranges for every number (a typo like `window_days: 1e6`
    must be refused, not allocated)."""
    unbounded = [path for path, info in _numbers(Settings)
                 if not (any(isinstance(m, annotated_types.Ge | annotated_types.Gt) for m in info.metadata)
                         and any(isinstance(m, annotated_types.Le | annotated_types.Lt) for m in info.metadata))]
    assert len(list(_numbers(Settings))) > 50  # the walk reaches every section
    assert unbounded == []

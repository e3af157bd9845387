"""A throw-away CA, a server certificate for localhost/127.0.0.1 and a client certificate,
made with the openssl command line (tests of TLS and mutual TLS on loopback)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(folder: Path) -> Certs:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
         "-subj", "/CN=harvester-test-ca", cwd=folder)
    (folder / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name in ("server", "client"):
        _run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", f"/CN={'localhost' if name == 'server' else 'harvester-client'}", cwd=folder)
        _run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", f"{name}.pem", "-days", "2", "-extfile", "san.ext", cwd=folder)
    return Certs(folder / "ca.pem", folder / "server.pem", folder / "server.key", folder / "client.pem",
                 folder / "client.key")

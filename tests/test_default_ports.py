"""The suite runs with the default ports taken (tests/conftest.py), as while `make run` runs."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from harvester.config import load_settings


def test_the_default_ports_are_taken_while_the_suite_runs(default_ports) -> None:  # type: ignore[no-untyped-def]
    default_ports.ensure()  # another suite on this machine may have released one since we started
    s = load_settings(None, environ={})
    for listen in (s.embedded.listen, s.server.admin_listen, s.server.grpc_listen, s.estimator.listen):
        host, _, port = listen.rpartition(":")
        with socket.socket() as probe:
            probe.settimeout(2)
            assert probe.connect_ex((host, int(port))) == 0, f"{listen} is free: the suite must run with it taken"


def test_a_second_make_run_says_which_address_and_setting(tmp_path: Path, default_ports) -> None:  # type: ignore[no-untyped-def]
    """What `make run` prints when another one (here: the suite's held ports) holds the defaults."""
    default_ports.ensure()
    out = subprocess.run([sys.executable, "-m", "harvester", "serve"], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1, out.stderr
    assert "cannot start: 127.0.0.1:18088 is already in use (embedded.listen)" in out.stderr
    assert "set embedded.listen to a free port" in out.stderr

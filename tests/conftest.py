"""Fixtures shared by every test package."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# CI (.ci/run) runs property tests derandomized: the same examples on every run, so a submission
# is judged on its code, not on a draw. Exploring draws locally is the default profile.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("HARVESTER_HYPOTHESIS_PROFILE"):
    hypothesis_settings.load_profile(os.environ["HARVESTER_HYPOTHESIS_PROFILE"])

REPO_ROOT = Path(__file__).resolve().parents[1]
# Shared test doubles (fakes, builders) importable from every test folder.
sys.path.insert(0, str(REPO_ROOT / "tests" / "support"))


from shared_paths import FIXTURES_DIR, TRACES_DIR  # noqa: E402 (needs the path above)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The recorded Hadoop 3.3.6 behaviour (vendored copy of ../shared/fixtures, or $HARVESTER_FIXTURES_DIR)."""
    path = FIXTURES_DIR
    if not (path / "README.md").is_file():
        pytest.fail(f"recorded Hadoop fixtures not found at {path}; set HARVESTER_FIXTURES_DIR")
    return path


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The staged public cluster traces (vendored samples of ../shared/traces, or $HARVESTER_TRACES_DIR)."""
    path = TRACES_DIR
    if not (path / "README.md").is_file():
        pytest.fail(f"cluster traces not found at {path}; set HARVESTER_TRACES_DIR")
    return path


@pytest.fixture(autouse=True, scope="session")
def _private_state_home(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The default history store lives under $XDG_STATE_HOME (harvester/config.py): no test, and
    no `harvester` process a test starts, reads or writes the developer's own."""
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    yield
    mp.undo()


class DefaultPorts:
    """Listening sockets that never answer, on every default port not already taken."""

    def __init__(self) -> None:
        from harvester.config import load_settings

        s = load_settings(None, environ={})
        self.listens = (s.embedded.listen, s.server.admin_listen, s.server.grpc_listen, s.estimator.listen)
        self.held: dict[str, object] = {}

    def ensure(self) -> None:
        """Take every default port that is free now. Another suite on this machine may have held
        one when this suite started and released it since; `make run` keeps its own."""
        import socket

        for listen in self.listens:
            if listen in self.held:
                continue
            host, _, port = listen.rpartition(":")
            sock = socket.socket()
            try:
                sock.bind((host, int(port)))
                sock.listen()
                self.held[listen] = sock
            except OSError:  # taken already, e.g. by `make run`: the same condition
                sock.close()

    def release(self) -> None:
        for sock in self.held.values():
            sock.close()  # type: ignore[attr-defined]
        self.held.clear()


@pytest.fixture(autouse=True, scope="session")
def default_ports():  # type: ignore[no-untyped-def]
    """`make test` must pass while `make run` runs in another terminal (issue 19): the whole
    suite runs with the default ports — emulator 18088, admin 9464, gRPC 50051, Resource
    Estimator 9998 — taken. Each is
    held by a listening socket that never answers (or already by a running `harvester serve`),
    so a test that binds one fails, and one that talks to one hangs to its timeout and fails,
    instead of passing or failing by what happens to run on this machine. Tests use port 0 or a
    port they hold (tests/support/ports.py, rm_fakes.closed_port_url)."""
    ports = DefaultPorts()
    ports.ensure()
    yield ports
    ports.release()

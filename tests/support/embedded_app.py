"""The embedded default (`make run`) started in-process on loopback ports, for the tests of what
it shows (tests/harvesting/test_embedded_default.py, tests/morpheus/test_embedded_morpheus.py)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings

T0 = 1_795_430_000.0
PORTS = {"server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
         "embedded": {"listen": "127.0.0.1:0"}}


@contextmanager
def embedded_harvester(db: Path) -> Iterator[Harvester]:
    """The embedded default with a SQLite store at `db`, on a SimClock at T0, loops not running
    (tests tick them)."""
    settings = parse_settings({**PORTS, "store": {"backend": "sqlite", "path": str(db)}}, environ={})
    app = Harvester(settings, clock=SimClock(T0), registry=CollectorRegistry())
    app.start(run_loops=False)
    try:
        yield app
    finally:
        app.stop()

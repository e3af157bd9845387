"""Parsing of the deployment files for tests/deploy (imported by its conftest and tests).

docker-compose.yml volumes and ports (short and long syntax) and Hadoop configuration XML.
Everything here reads files of the repository only; nothing needs Docker or Hadoop. Also a
running sidecar on free loopback ports, and the lookup of Debian's Prometheus binaries.
"""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from embedded_sidecar import loopback_settings

from harvester.app import Harvester

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
HADOOP_DIR = ROOT / "deploy" / "hadoop"
COMPOSE_SETTINGS = ROOT / "deploy" / "compose" / "harvester.yaml"


@dataclass(frozen=True)
class Mount:
    service: str
    source: str  # a host path (bind) or a volume name
    target: str
    read_only: bool

    @property
    def is_bind(self) -> bool:
        return self.source.startswith((".", "/", "~"))


@dataclass(frozen=True)
class Port:
    service: str
    host_ip: str | None
    host_port: int
    container_port: int


def _mounts(name: str, service: dict[str, Any]) -> list[Mount]:
    out = []
    for v in service.get("volumes", []):
        if isinstance(v, str):  # short syntax SRC:TARGET[:MODE]
            parts = v.split(":")
            assert len(parts) in (2, 3), f"{name}: volume {v!r} is not SRC:TARGET[:MODE]"
            out.append(Mount(name, parts[0], parts[1], len(parts) == 3 and "ro" in parts[2].split(",")))
        else:  # long syntax
            out.append(Mount(name, str(v["source"]), str(v["target"]), bool(v.get("read_only", False))))
    return out


def _ports(name: str, service: dict[str, Any]) -> list[Port]:
    out = []
    for p in service.get("ports", []):
        if isinstance(p, str):  # short syntax [IP:]HOST:CONTAINER
            parts = p.split(":")
            assert len(parts) in (2, 3), f"{name}: port {p!r} must name the host port (and the host IP)"
            ip = parts[0] if len(parts) == 3 else None
            out.append(Port(name, ip, int(parts[-2]), int(parts[-1].split("/")[0])))
        else:
            out.append(Port(name, p.get("host_ip"), int(p["published"]), int(p["target"])))
    return out


def parse_hadoop_xml(path: Path) -> dict[str, str]:
    """name -> value of a Hadoop configuration file; fails on duplicates or malformed entries."""
    root = ET.parse(path).getroot()
    assert root.tag == "configuration", f"{path.name}: root element is {root.tag!r}, not configuration"
    props: dict[str, str] = {}
    for prop in root.findall("property"):
        name, value = prop.findtext("name"), prop.find("value")
        assert name and name.strip() == name, f"{path.name}: a property without a clean <name>"
        assert value is not None, f"{path.name}: {name} has no <value>"
        assert name not in props, f"{path.name}: {name} is set twice"
        props[name] = (value.text or "").strip()
    return props


def compose_mounts(services: dict[str, dict[str, Any]]) -> list[Mount]:
    return [m for name, svc in services.items() for m in _mounts(name, svc)]


def compose_ports(services: dict[str, dict[str, Any]]) -> list[Port]:
    return [p for name, svc in services.items() for p in _ports(name, svc)]


@contextmanager
def running_sidecar(overrides: dict[str, Any] | None = None) -> Iterator[Harvester]:
    """A real sidecar (composition root, embedded cluster, memory store, its loops on threads) on
    free loopback ports; `overrides` are settings merged over that (e.g. shorter loop intervals)."""
    app = Harvester(loopback_settings({"backend": "memory"}, overrides))
    app.start()
    try:
        yield app
    finally:
        app.stop()


def prometheus_binary(name: str) -> str:
    """Path of `promtool` or `prometheus` (Debian's package `prometheus`, installed by .ci/run).

    Skips where it is absent; fails instead under CI (CI=true), where .ci/run must have installed it."""
    path = shutil.which(name)
    if path is None:
        why = f"{name} not found: install Debian's package `prometheus` (.ci/run does)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{why}; CI must run this test")
        pytest.skip(why)
    return path

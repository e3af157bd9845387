"""Session fixtures for tests/deploy: the parsed compose file, Hadoop XML and sidecar settings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from harvester.config import Settings, load_settings

# A sibling module (pytest puts this folder on sys.path for its conftest and tests).
from deploy_files import COMPOSE_FILE, COMPOSE_SETTINGS, HADOOP_DIR, Mount, Port, compose_mounts, compose_ports, parse_hadoop_xml


@pytest.fixture(scope="session")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(data, dict) and isinstance(data.get("services"), dict), "docker-compose.yml has no services"
    return data


@pytest.fixture(scope="session")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


@pytest.fixture(scope="session")
def mounts(services: dict[str, dict[str, Any]]) -> list[Mount]:
    return compose_mounts(services)


@pytest.fixture(scope="session")
def ports(services: dict[str, dict[str, Any]]) -> list[Port]:
    return compose_ports(services)


@pytest.fixture(scope="session")
def hadoop_conf() -> Callable[[str], dict[str, str]]:
    """hadoop_conf("yarn-site.xml") -> its properties."""
    cache: dict[str, dict[str, str]] = {}

    def get(name: str) -> dict[str, str]:
        if name not in cache:
            cache[name] = parse_hadoop_xml(HADOOP_DIR / name)
        return cache[name]

    return get


@pytest.fixture(scope="session")
def compose_settings() -> Settings:
    # environ={}: HARVESTER_* variables of whoever runs the tests must not change the answer.
    return load_settings(COMPOSE_SETTINGS, environ={})


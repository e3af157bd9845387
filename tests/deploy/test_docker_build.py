"""Really validate docker-compose.yml and really build and run the image, where Docker runs.

Marked `integration` (and `slow`): skipped unless a Docker engine answers `docker info`, with
the reason. Here they prove what tests/deploy/test_compose.py and test_dockerfile.py can only
read: that Compose accepts the file, that the image builds from a clean context, that its
entrypoint works and that its HEALTHCHECK turns healthy with the bundled default settings.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

from deploy_files import COMPOSE_FILE, ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _docker(*args: str, timeout: float = 60.0, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=check)


@pytest.fixture(scope="module")
def docker_engine(request: pytest.FixtureRequest) -> None:
    # A build takes minutes: only on request, even when tests/deploy is run on its own.
    markexpr = request.config.getoption("markexpr") or ""
    if not re.search(r"\bintegration\b", markexpr) or re.search(r"\bnot\s+integration\b", markexpr):
        pytest.skip("integration test not selected: run `pytest -m integration` to build the image")
    if shutil.which("docker") is None:
        pytest.skip("no Docker engine: the docker CLI is not installed")
    try:
        info = _docker("info", "--format", "{{.ServerVersion}}", timeout=20, check=False)
    except subprocess.TimeoutExpired:
        pytest.skip("no Docker engine: `docker info` timed out")
    if info.returncode != 0 or not info.stdout.strip():
        reason = (info.stderr.strip().splitlines() or ["no server version"])[-1]
        pytest.skip(f"no Docker engine reachable (`docker info` failed: {reason})")


@pytest.fixture(scope="module")
def image(docker_engine: None) -> Iterator[str]:
    tag = f"harvester:test-{uuid.uuid4().hex[:8]}"
    build = _docker("build", "--tag", tag, ".", timeout=1800, check=False)
    assert build.returncode == 0, f"docker build failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}"
    try:
        yield tag
    finally:
        _docker("image", "rm", "--force", tag, check=False)


def test_compose_file_is_valid(docker_engine: None) -> None:
    version = _docker("compose", "version", check=False)
    if version.returncode != 0:
        pytest.skip("the Docker Compose v2 plugin (`docker compose`) is not installed")
    result = _docker("compose", "--file", str(COMPOSE_FILE), "config", "--quiet", check=False)
    assert result.returncode == 0, result.stderr


def test_image_runs_as_non_root_with_the_cli_entrypoint(image: str) -> None:
    config = json.loads(_docker("image", "inspect", image).stdout)[0]["Config"]
    assert config["User"] not in ("", "root", "0")
    assert config["Entrypoint"] == ["harvester"]
    assert set(config["ExposedPorts"]) == {"50051/tcp", "9464/tcp"}
    version = _docker("run", "--rm", image, "version")
    assert version.stdout.startswith("harvester "), version.stdout


def test_container_becomes_healthy_with_the_default_settings(image: str) -> None:
    name = f"harvester-health-{uuid.uuid4().hex[:8]}"
    _docker("run", "--detach", "--name", name, image)
    try:
        deadline = time.monotonic() + 120
        status = "starting"
        while time.monotonic() < deadline:
            state = json.loads(_docker("inspect", name).stdout)[0]["State"]
            status = (state.get("Health") or {}).get("Status", "none")
            if status == "healthy" or not state["Running"]:
                break
            time.sleep(2)
        logs = _docker("logs", name, check=False)
        assert status == "healthy", f"health {status}; logs:\n{logs.stdout[-2000:]}{logs.stderr[-2000:]}"
    finally:
        _docker("rm", "--force", name, check=False)

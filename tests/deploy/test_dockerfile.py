"""The Dockerfile agrees with the settings schema, the Makefile, pyproject.toml, .dockerignore
and docker-compose.yml (read as text; test_docker_build.py really builds it where Docker runs)."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import tomllib
import urllib.request
from pathlib import PurePosixPath
from typing import Any

from harvester.config import ServerSettings, Settings, load_settings

from deploy_files import ROOT, Mount, running_sidecar

DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for ins in _instructions():
        if ins[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(ins)
    return stages


def _final(name: str) -> list[str]:
    return [args for ins, args in _stages()[-1] if ins == name]


def _port(listen: str) -> int:
    return int(listen.rpartition(":")[2])


def _default_port(field: str) -> int:
    return _port(str(ServerSettings.model_fields[field].default))


def test_multi_stage_from_a_slim_python_3_11() -> None:
    args = {a.split("=", 1)[0]: a.split("=", 1)[1] for ins, a in _instructions() if ins == "ARG" and "=" in a}
    stages = _stages()
    assert len(stages) >= 2, "builder + final stages expected"
    for stage in stages:
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], stage[0][1].split()[0])
        assert re.fullmatch(r"python:3\.11-slim(-\w+)?", image), image


def test_final_stage_runs_as_a_non_root_user() -> None:
    users = _final("USER")
    assert users and users[-1] not in {"root", "0"}, f"final USER is {users}"


def test_exposed_ports_are_the_settings_defaults() -> None:
    exposed = {int(p.split("/")[0]) for args in _final("EXPOSE") for p in args.split()}
    assert exposed == {_default_port("grpc_listen"), _default_port("admin_listen")}


def test_healthcheck_gets_healthz_on_the_default_admin_port_with_urllib() -> None:
    [check] = _final("HEALTHCHECK")
    assert "curl" not in check and "urllib.request" in check
    m = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", check)
    assert m, f"no http://127.0.0.1:<port>/<path> in {check}"
    assert int(m.group(1)) == _default_port("admin_listen")
    # The path must be one the real admin server answers 200 on.
    with running_sidecar() as app, urllib.request.urlopen(f"http://{app.admin.address}{m.group(2)}", timeout=5) as resp:
        assert resp.status == 200


def _default_config_path() -> str:
    [entrypoint] = _final("ENTRYPOINT")
    [cmd] = _final("CMD")
    assert json.loads(entrypoint) == ["harvester"]
    argv = json.loads(cmd)
    assert argv[0] == "serve" and "--config" in argv, argv
    return argv[argv.index("--config") + 1]


def test_default_command_serves_the_bundled_settings_file() -> None:
    path = _default_config_path()
    assert path.startswith("/etc/harvester/")
    copies = [shlex.split(a) for a in _final("COPY") if not a.startswith("--from")]
    sources = [c[0] for c in copies if c[-1] == path]
    assert sources == ["deploy/docker/harvester.yaml"], f"nothing copies a settings file to {path}"
    settings = load_settings(ROOT / sources[0], environ={})
    assert settings.server.admin_listen.startswith("0.0.0.0:"), "the image's default must be reachable from outside"
    assert _port(settings.server.admin_listen) == _default_port("admin_listen")
    assert _port(settings.server.grpc_listen) == _default_port("grpc_listen")


def test_compose_overrides_the_same_path_and_keeps_the_store_on_its_volume(
    services: dict[str, dict[str, Any]], mounts: list[Mount], compose_settings: Settings
) -> None:
    assert services["harvester"]["command"][-1] == _default_config_path()
    store = compose_settings.store.path
    assert store.is_absolute(), "a relative store.path would be relative to /etc/harvester (the settings file's folder)"
    store_dir = str(PurePosixPath(store.as_posix()).parent)
    volumes = [m.target for m in mounts if m.service == "harvester" and not m.is_bind]
    assert store_dir in volumes, f"the history store lives in {store_dir}, the volumes are {volumes}"
    assert any(store_dir in v for v in _final("VOLUME")), "the image should declare the store folder a VOLUME"


def test_grpc_code_is_generated_exactly_as_the_makefile_does() -> None:
    make = next(line.strip() for line in (ROOT / "Makefile").read_text().splitlines() if "grpc_tools.protoc" in line)
    expected = make.replace("$(BIN)/python", "python").replace("$(PROTOS)", "proto/harvester/v1/*.proto")
    runs = [a for ins, a in _stages()[0] if ins == "RUN" and "grpc_tools.protoc" in a]
    assert len(runs) == 1 and expected in runs[0], f"Makefile runs `{expected}`; the Dockerfile: {runs}"


def test_grpcio_tools_range_is_pyprojects() -> None:
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    [spec] = [d for d in test_extra if d.startswith("grpcio-tools")]
    assert f"'{spec}'" in DOCKERFILE.read_text(), f"the Dockerfile must install {spec!r} (pyproject's test extra)"


def test_dockerignore_lets_in_every_copied_source_and_keeps_generated_code_out() -> None:
    lines = [ln.strip() for ln in DOCKERIGNORE.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    assert lines[0] == "*", ".dockerignore is an allow-list: it starts by ignoring everything"
    allowed = [ln[1:].rstrip("/") for ln in lines if ln.startswith("!")]
    for stage in _stages():
        for ins, args in stage:
            if ins != "COPY" or args.startswith("--from"):
                continue
            for src in shlex.split(args)[:-1]:
                ok = any(fnmatch.fnmatch(a, src) or src == a or src.startswith(a + "/") for a in allowed)
                assert ok, f"COPY {src}: excluded by .dockerignore (allowed: {allowed})"
    for generated in ("harvester/v1/*_pb2.py", "harvester/v1/*_pb2_grpc.py", "harvester/v1/*_pb2.pyi"):
        assert generated in lines, f".dockerignore must keep {generated} out: the build generates it"
    assert all((ROOT / a).exists() for a in allowed if a != "README.md"), "an allowed path does not exist"


"""The generated gRPC modules must match proto/ (they are generated, never edited)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_matches_the_protos(tmp_path: Path) -> None:
    protos = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "proto" / "harvester" / "v1").glob("*.proto"))
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-Iproto", f"--python_out={tmp_path}", f"--pyi_out={tmp_path}",
         f"--grpc_python_out={tmp_path}", *protos],
        cwd=ROOT, check=True,
    )
    fresh = sorted((tmp_path / "harvester" / "v1").glob("*_pb2*.py*"))
    assert fresh, "protoc produced nothing"
    for f in fresh:
        current = ROOT / "harvester" / "v1" / f.name
        assert current.exists(), f"{current.name} missing: run `make proto`"
        assert current.read_bytes() == f.read_bytes(), f"{current.name} is stale: run `make proto`"

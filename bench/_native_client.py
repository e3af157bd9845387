"""A native gRPC client for latency figures (helper of bench/harvesting.py; issue 29).

Timed from a Python client, one unary call to a Python gRPC server costs ~0.9 ms on this
machine whatever the method does: the client's own share is a third of it. The RM-side callers
of the advice are JVMs, so the figure that says what the sidecar's server costs them comes from
a compiled client: bench/native/unary_latency.cc (C++ grpc::GenericStub, no generated code:
the request arrives serialized on stdin). It is built once into bench/native/build/ with
Debian's gRPC (`apt-get install g++ pkg-config libgrpc++-dev libprotobuf-dev`); without those `build()` says
why and the bench reports the Python client's figures only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parent / "native" / "unary_latency.cc"
BINARY = SOURCE.parent / "build" / "unary_latency"


def build() -> tuple[Path | None, str]:
    """The client's path (built when missing or older than its source), or None and why not."""
    if BINARY.exists() and BINARY.stat().st_mtime >= SOURCE.stat().st_mtime:
        return BINARY, "built"
    missing = [tool for tool in ("g++", "pkg-config") if shutil.which(tool) is None]
    if missing:
        return None, f"no {' or '.join(missing)} (apt-get install g++ pkg-config libgrpc++-dev libprotobuf-dev)"
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"], capture_output=True, text=True)
    if flags.returncode != 0:
        return None, f"pkg-config has no grpc++ or protobuf (apt-get install libgrpc++-dev libprotobuf-dev): {flags.stderr.strip()[:200]}"
    BINARY.parent.mkdir(exist_ok=True)
    done = subprocess.run(["g++", "-O2", "-std=c++17", str(SOURCE), "-o", str(BINARY), *flags.stdout.split()],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None, f"g++ failed: {done.stderr.strip()[-300:]}"
    return BINARY, "built"


def latencies_ms(binary: Path, target: str, method: str, request: bytes, calls: int, warmup: int = 200,
                 cpus: frozenset[int] = frozenset()) -> np.ndarray:
    """`calls` sequential calls of `method` with the serialized `request`, each one's round trip in
    ms; run on `cpus` when given."""
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    done = subprocess.run([str(binary), target, method, str(calls), str(warmup)], input=request,
                          capture_output=True, check=False, preexec_fn=pin)
    if done.returncode != 0:
        raise RuntimeError(f"native client: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return np.array(done.stdout.split(), dtype=np.float64) / 1000.0

"""The Java plug-ins' advice client against the sidecar's real Python routes, across processes:
a sidecar process (tests/integration/shim_sidecar.py: hdfs_http + node_ordering_http over the
admin server) and the shim's own AdviceClient (deploy/shim AdviceProbe): 200 with the document,
then 304 on its ETag; both documents parse in Java as the Python code wrote them."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import requests

from test_shim_java import SHIM, _missing

pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")
SIDECAR = Path(__file__).resolve().parents[1] / "integration" / "shim_sidecar.py"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory, make_vectors: ModuleType):
    base = tmp_path_factory.mktemp("probe")
    ix = make_vectors.grid9()
    (base / "table.json").write_text(json.dumps(ix.table.to_json()))
    (base / "ordering.json").write_text(json.dumps({"queues": {"root.etl": "long"},
                                                    "orders": {"long": ["nm2:45454", "nm0:45454"]}}))
    port = _port()
    proc = subprocess.Popen([sys.executable, str(SIDECAR), "--port", str(port), "--table", str(base / "table.json"),
                             "--ordering", str(base / "ordering.json")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        yield f"http://127.0.0.1:{port}", ix
    finally:
        proc.kill()
        proc.wait(10)


def _probe(kind: str, url: str) -> str:
    r = subprocess.run(["make", "-s", "-C", str(SHIM), "probe", f"KIND={kind}", f"URL={url}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


def test_placement_table_reaches_the_java_client(sidecar) -> None:
    url, ix = sidecar
    out = _probe("table", f"{url}/v1/hdfs/placement-table")
    assert out == f"ok=true,true version={ix.version} datanodes={len(ix.ids)} notModified=1"


def test_node_ordering_reaches_the_java_client(sidecar) -> None:
    url, _ = sidecar
    version = requests.get(f"{url}/v1/yarn/node-ordering", timeout=5).json()["version"]
    out = _probe("ordering", f"{url}/v1/yarn/node-ordering")
    assert out == f"ok=true,true version={version} long=[nm2:45454, nm0:45454] notModified=1"

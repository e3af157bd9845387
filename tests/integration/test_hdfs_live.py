"""HDFS-H against a live Hadoop 3.3.6 NameNode (marked `integration`).

Needs, besides the `live_hadoop` cluster of tests/integration/conftest.py, the NameNode's HTTP
base in HARVESTER_TEST_NN_URL (e.g. http://127.0.0.1:9870 for docker-compose.yml; the
testcontainers cluster does not publish it); skips naming the variable otherwise.

- the typed JMX client reads the real NameNodeInfo, whose bean and LiveNodes entries carry
  every field of the recorded one (../shared/fixtures/hdfs-3.3.6/nn-jmx-NameNodeInfo.json);
- one HDFS-H poll tick against it publishes a table holding every in-service DataNode;
- with HARVESTER_TEST_HADOOP_HOME: a file written with `hdfs dfs -put` has its replicas, as
  `hdfs fsck <file> -files -blocks -locations -racks` reports them (parsed like the recorded
  fsck output), on DataNodes and racks the table knows — the ids HDFS and the table share.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from hadoop_cli import HADOOP_BIN_VAR, launcher

from harvester.board.hdfs import PlacementBoard
from harvester.config import parse_settings
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.hdfs_placement import HdfsPlacementLoop
from harvester.observability.metrics import Metrics
from harvester.telemetry.fsck import parse_fsck_blocks
from harvester.telemetry.namenode_jmx import NameNodeJmxClient
from hdfs_placement import PlacementIndex, verify_placement
from shared_paths import FIXTURES_DIR

pytestmark = pytest.mark.integration

NN_URL_VAR = "HARVESTER_TEST_NN_URL"


@pytest.fixture(scope="module")
def nn_url(live_hadoop) -> str:  # noqa: ANN001 (conftest type)
    url = os.environ.get(NN_URL_VAR)
    if not url:
        pytest.skip(f"needs the NameNode's HTTP base: set {NN_URL_VAR} (e.g. http://127.0.0.1:9870 with docker-compose.yml)")
    return url.rstrip("/")


def _recorded_bean() -> dict:
    return json.loads((FIXTURES_DIR / "hdfs-3.3.6" / "nn-jmx-NameNodeInfo.json").read_text())["beans"][0]


def test_the_jmx_client_reads_the_live_namenode(nn_url: str) -> None:
    info = NameNodeJmxClient([nn_url]).namenode_info()
    assert info.version.startswith("3.3"), info.version
    assert info.started_ms > 0 and info.total_blocks >= 0 and info.block_pool_id.startswith("BP-")
    assert info.live, "the NameNode lists no live DataNode"
    for dn in info.live:
        host, _, port = dn.xfer_addr.rpartition(":")
        assert host and port.isdigit(), dn.xfer_addr
        assert dn.rack.startswith("/") and dn.hostname and dn.name.endswith(f":{port}")
        assert 0 <= dn.remaining_bytes <= dn.capacity_bytes and dn.num_blocks >= 0


def test_the_live_bean_has_every_recorded_field(nn_url: str) -> None:
    import requests

    live = requests.get(f"{nn_url}/jmx", params={"qry": "Hadoop:service=NameNode,name=NameNodeInfo"}, timeout=10).json()
    bean = live["beans"][0]
    recorded = _recorded_bean()
    assert set(recorded) - set(bean) == set(), "NameNodeInfo lost fields the client relies on"
    node_keys = set(next(iter(json.loads(recorded["LiveNodes"]).values())))
    for name, entry in json.loads(bean["LiveNodes"]).items():
        assert node_keys - set(entry) == set(), f"LiveNodes[{name}] lacks recorded fields"


def test_one_poll_tick_publishes_every_in_service_datanode(nn_url: str) -> None:
    settings = parse_settings({"hdfs": {"enabled": True, "namenode_urls": [nn_url]}, "store": {"backend": "memory"}},
                              environ={})
    board = PlacementBoard()
    client = NameNodeJmxClient([nn_url])
    loop = HdfsPlacementLoop(hdfs=settings.hdfs, harvesting=settings.harvesting, namenode=client,
                             store=SqliteHistoryStore(":memory:"), board=board, metrics=Metrics(CollectorRegistry()))
    loop.poll(1_800_000_000.0)
    pub = board.current()
    info = client.namenode_info()
    expected = {dn.xfer_addr for dn in info.live if dn.admin_state == "In Service"}
    assert pub is not None and {e.datanode_id for e in pub.table.datanodes} == expected
    assert all(e.row >= 0 for e in pub.table.datanodes), "own-tenant DataNodes are in the grid"


def _hdfs(home: Path, live, *args: str, timeout: float = 120) -> str:  # noqa: ANN001
    env = dict(os.environ, HADOOP_USER_NAME=live.user, HADOOP_HOME=str(home))
    if live.conf_dir is not None:
        env["HADOOP_CONF_DIR"] = str(live.conf_dir)
    hdfs = launcher(home, "hdfs")
    if hdfs is None:
        pytest.skip(f"no `hdfs` launcher in {home}/bin: set {HADOOP_BIN_VAR} to the directory holding it")
    proc = subprocess.run([str(hdfs), *args], capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, f"hdfs {' '.join(args)}: exit {proc.returncode}: {proc.stderr[-2000:]}"
    return proc.stdout


def test_a_written_file_lands_on_datanodes_the_table_knows(nn_url: str, live_hadoop, requires_hadoop_home: Path,  # noqa: ANN001
                                                          tmp_path: Path) -> None:
    info = NameNodeJmxClient([nn_url]).namenode_info()
    in_service = [dn for dn in info.live if dn.admin_state == "In Service"]
    replication = min(3, len(in_service))
    local = tmp_path / "blob.bin"
    local.write_bytes(os.urandom(3 * 1024 * 1024))
    remote = f"/tmp/harvester-it-{uuid.uuid4().hex[:8]}/blob.bin"
    _hdfs(requires_hadoop_home, live_hadoop, "dfs", "-mkdir", "-p", remote.rsplit("/", 1)[0])
    try:
        _hdfs(requires_hadoop_home, live_hadoop, "dfs", "-D", f"dfs.replication={replication}", "-put", str(local), remote)
        text = _hdfs(requires_hadoop_home, live_hadoop, "fsck", remote, "-files", "-blocks", "-locations", "-racks")
        blocks = parse_fsck_blocks(text)
        assert blocks and all(b.path == remote and b.replication == replication for b in blocks), text[:2000]
        settings = parse_settings({"hdfs": {"enabled": True, "namenode_urls": [nn_url]}, "store": {"backend": "memory"}},
                                  environ={})
        board = PlacementBoard()
        HdfsPlacementLoop(hdfs=settings.hdfs, harvesting=settings.harvesting, namenode=NameNodeJmxClient([nn_url]),
                          store=SqliteHistoryStore(":memory:"), board=board, metrics=Metrics(CollectorRegistry())).poll(1.0)
        index = PlacementIndex(board.current().table)
        racks = {dn.xfer_addr: dn.rack for dn in in_service}
        for b in blocks:
            assert len(b.replicas) == replication, f"{b.block}: {b.replicas}"
            for r in b.replicas:
                assert racks.get(r.datanode_id) == r.rack, f"{b.block}: {r} vs JMX {racks}"
            status = verify_placement(index, [r.datanode_id for r in b.replicas], replication)
            assert status.unknown == (), f"{b.block}: replicas on DataNodes the table does not list: {status.unknown}"
    finally:
        _hdfs(requires_hadoop_home, live_hadoop, "dfs", "-rm", "-r", "-skipTrash", remote.rsplit("/", 1)[0])

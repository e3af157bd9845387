"""The NameNode plug-in inside a real Hadoop 3.3.6 NameNode (marked `integration`).

Needs HARVESTER_TEST_HADOOP_HOME (a Hadoop 3.3.6 install) and a JDK; skips otherwise. From that
install, in a temp dir on free loopback ports: the shim jar is built against `hadoop classpath`,
a NameNode starts with it on HADOOP_CLASSPATH and `dfs.block.replicator.classname` set, six
DataNodes (distinct xfer/http/ipc ports and data dirs, as MiniDFSCluster gives each DataNode)
are mapped to six primary tenants, and a sidecar process serves a placement table over the real
HTTP long-poll (tests/integration/shim_sidecar.py). Then:
1. files written with `hdfs dfs -put` (replication 3) have, per `hdfs fsck -files -blocks
   -locations`, every block's replicas on grid-diverse DataNodes (hdfs_placement's
   verify_placement over the served table) and the plug-in counts advised decisions (JMX);
2. the sidecar is killed (SIGKILL by pid) in the middle of a stream of writes: every write still
   succeeds, the plug-in's JMX bean turns Stale and its fallbacks grow, and every block written
   during the fallback still has its 3 replicas (BlockPlacementPolicyDefault placed them);
3. every `hdfs fsck` builds a new policy instance (NamenodeFsck: new BlockPlacementPolicies):
   after several, the NameNode still runs ONE refresher thread (its /stacks thread dump) and the
   one JMX bean keeps the counts of the writes made before them.
Expectations come from Hadoop's sources: NameNode JMX beans (NameNodeStatus, NameNodeInfo
LiveNodes), fsck's block line format (../shared/fixtures/hdfs-3.3.6), the fixtures' Java 17 flags.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from itertools import combinations
from pathlib import Path

import pytest
import requests

from harvester.telemetry.fsck import parse_fsck_blocks
from hdfs_placement import DataNode, PlacementIndex, TenantStats, build_placement_table, fit_grid, verify_placement
from shim_daemons import Daemons, build_shim_jar, free_port, hadoop_home_or_skip, jmx_bean, wait_for, write_json

pytestmark = pytest.mark.integration

POLICY = "org.harvester.shim.namenode.HarvesterBlockPlacementPolicy"
BEAN = "Hadoop:service=NameNode,name=HarvesterPlacementPolicy"
STALE_MS = 4000
# (tenant, environment, reimages/server/month, peak CPU): spread over the grid's rows and columns
TENANTS = [("search", "web", 0.02, 0.20), ("ads", "ads", 0.40, 0.50), ("mail", "mail", 2.0, 0.85),
           ("maps", "geo", 0.03, 0.80), ("video", "media", 0.45, 0.15), ("chat", "im", 2.5, 0.45)]


@pytest.fixture(scope="module")
def hadoop_home() -> Path:
    return hadoop_home_or_skip("hdfs")


@pytest.fixture(scope="module")
def cluster(hadoop_home: Path, tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("shim-nn")
    jar = build_shim_jar(hadoop_home)
    d = Daemons(hadoop_home, base)
    nn_rpc, nn_http, side = free_port(), free_port(), free_port()
    fs = f"hdfs://127.0.0.1:{nn_rpc}"
    common = {"fs.defaultFS": fs, "hadoop.tmp.dir": str(base / "tmp")}
    hdfs = {
        "dfs.namenode.rpc-address": f"127.0.0.1:{nn_rpc}", "dfs.namenode.http-address": f"127.0.0.1:{nn_http}",
        "dfs.namenode.name.dir": str(base / "name"), "dfs.replication": 3, "dfs.permissions.enabled": "false",
        "dfs.namenode.datanode.registration.ip-hostname-check": "false", "dfs.blocksize": 1048576,
        "dfs.namenode.fs-limits.min-block-size": 1024,
        "dfs.block.replicator.classname": POLICY,
        "harvester.shim.namenode.advice.url": f"http://127.0.0.1:{side}/v1/hdfs/placement-table",
        "harvester.shim.namenode.stale.after.ms": STALE_MS,
        "harvester.shim.namenode.long.poll.seconds": 1,
        "harvester.shim.namenode.backoff.min.ms": 200,
        "harvester.shim.namenode.backoff.max.ms": 1000,
    }
    nn_conf = d.conf("namenode", {"core-site.xml": common, "hdfs-site.xml": hdfs})
    try:
        d.run(["hdfs", "namenode", "-format", "-force", "-nonInteractive"], nn_conf)
        d.start("namenode", ["hdfs", "namenode"], nn_conf, classpath=str(jar))
        http = f"http://127.0.0.1:{nn_http}"
        wait_for(lambda: (jmx_bean(http, "Hadoop:service=NameNode,name=NameNodeStatus") or {}).get("State") == "active",
                 timeout_s=120, what=f"the NameNode to be active\n{d.tail('namenode')}")
        xfer = []
        for k, (tenant, *_rest) in enumerate(TENANTS):
            ports = [free_port() for _ in range(3)]
            xfer.append(f"127.0.0.1:{ports[0]}")
            conf = d.conf(f"dn{k}", {"core-site.xml": common, "hdfs-site.xml": {
                **hdfs, "dfs.datanode.address": xfer[-1], "dfs.datanode.http.address": f"127.0.0.1:{ports[1]}",
                "dfs.datanode.ipc.address": f"127.0.0.1:{ports[2]}", "dfs.datanode.data.dir": str(base / f"data{k}")}})
            d.start(f"datanode-{tenant}", ["hdfs", "datanode"], conf)

        def live() -> dict:
            info = jmx_bean(http, "Hadoop:service=NameNode,name=NameNodeInfo") or {}
            nodes = json.loads(info.get("LiveNodes") or "{}")
            return nodes if len(nodes) == len(TENANTS) else {}

        live_nodes = wait_for(live, timeout_s=180, what="six live DataNodes")
        by_xfer = {v["xferaddr"]: v for v in live_nodes.values()}
        assert set(by_xfer) == set(xfer), f"DataNodes registered as {sorted(by_xfer)}, started {xfer}"
        stats = [TenantStats(t, e, r, p, 10**12) for t, e, r, p in TENANTS]
        datanodes = [DataNode(x, "localhost", by_xfer[x].get("location") or "/default-rack", t, e,
                              int(by_xfer[x]["capacity"]), int(by_xfer[x]["remaining"]))
                     for x, (t, e, _r, _p) in zip(xfer, TENANTS)]
        table = build_placement_table(datanodes, fit_grid(stats), version=41, generated_at_ms=0, busy_cpu_threshold=0.9)
        table_file = write_json(base / "table.json", table.to_json())
        sidecar = d.start_python("sidecar", [str(Path(__file__).with_name("shim_sidecar.py")), "--port", str(side),
                                             "--table", str(table_file)])
        wait_for(lambda: (jmx_bean(http, BEAN) or {}).get("AdviceVersion") == 41, timeout_s=60,
                 what=f"the plug-in to load table version 41\n{d.tail('namenode')}\n{d.tail('sidecar')}")
        yield {"d": d, "conf": nn_conf, "http": http, "index": PlacementIndex(table), "sidecar": sidecar, "base": base}
    finally:
        d.stop()


def _put(c: dict, name: str, size: int) -> int:
    local = c["base"] / f"{name}.bin"
    local.write_bytes(os.urandom(size))
    r = c["d"].run(["hdfs", "dfs", "-D", "dfs.replication=3", "-put", "-f", str(local), f"/shim/{name}"],
                   c["conf"], check=False)
    return r.returncode


def _blocks(c: dict) -> list:
    out = c["d"].run(["hdfs", "fsck", "/shim", "-files", "-blocks", "-locations"], c["conf"]).stdout
    return parse_fsck_blocks(out)


def test_blocks_follow_the_grid(cluster: dict) -> None:
    run = uuid.uuid4().hex[:8]
    c = cluster
    before = jmx_bean(c["http"], BEAN)["AdvisedDecisions"]
    assert c["d"].run(["hdfs", "dfs", "-mkdir", "-p", "/shim"], c["conf"]).returncode == 0
    for k in range(6):
        assert _put(c, f"grid-{run}-{k}", 3 * 1048576 if k % 2 else 200_000) == 0
    blocks = [b for b in _blocks(c) if f"grid-{run}-" in b.path]
    assert len(blocks) == 12, [b.path for b in blocks]  # 3 files x 3 blocks + 3 files x 1 block
    ix = c["index"]
    diverse = {frozenset(s) for s in combinations(ix.ids, 3) if verify_placement(ix, list(s), 3).satisfied}
    assert diverse, "the fitted grid offers no grid-diverse replica set at all: pick other tenants"
    for b in blocks:
        ids = [r.datanode_id for r in b.replicas]
        assert len(ids) == 3 and set(ids) <= set(ix.ids), f"{b.path} {b.block}: {ids}"
        status = verify_placement(ix, ids, 3)
        # Algorithm 2 relaxes only when nothing satisfies the rules: the writer's DataNode (one of
        # the replicas, the client runs on 127.0.0.1) must then be in no grid-diverse set.
        assert status.satisfied or not any(r in s for s in diverse for r in ids), \
            f"{b.path} {b.block} on {ids}: {status.violations}"
    bean = jmx_bean(c["http"], BEAN)
    assert bean["AdvisedDecisions"] - before >= len(blocks) and not bean["Stale"]


def _refresher_threads(c: dict) -> int:
    """Refresher threads in the NameNode's thread dump (HttpServer2's /stacks)."""
    dump = requests.get(f"{c['http']}/stacks", timeout=10).text
    return sum(1 for line in dump.splitlines()
               if line.startswith("Thread ") and "(harvester-advice-placement-table " in line)


def test_fsck_shares_the_refresher_and_the_bean(cluster: dict) -> None:
    c = cluster
    c["d"].run(["hdfs", "dfs", "-mkdir", "-p", "/shim"], c["conf"])
    assert _put(c, f"fsck-{uuid.uuid4().hex[:8]}", 200_000) == 0
    before = jmx_bean(c["http"], BEAN)
    assert before["AdvisedDecisions"] >= 1
    assert _refresher_threads(c) == 1
    for _ in range(3):
        _blocks(c)
    after = jmx_bean(c["http"], BEAN)
    assert _refresher_threads(c) == 1, "an fsck started a refresher of its own"
    assert after["AdvisedDecisions"] >= before["AdvisedDecisions"], "an fsck replaced the bean"
    assert after["AdviceVersion"] == 41 and not after["Stale"], after


def test_killing_the_sidecar_mid_stream_fails_no_write(cluster: dict) -> None:
    run = uuid.uuid4().hex[:8]
    c = cluster
    c["d"].run(["hdfs", "dfs", "-mkdir", "-p", "/shim"], c["conf"])
    results: list[int] = []
    stop = threading.Event()

    def writer() -> None:
        k = 0
        while not stop.is_set() and k < 200:
            results.append(_put(c, f"stream-{run}-{k}", 300_000))
            k += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        wait_for(lambda: len(results) >= 3, timeout_s=120, what="three writes before the kill")
        c["d"].kill(c["sidecar"])
        written_at_kill = len(results)

        def fell_back() -> bool:
            bean = jmx_bean(c["http"], BEAN)
            reasons = dict(kv.split("=") for kv in bean["FallbackReasons"].split(",") if kv)
            return bean["Stale"] and int(reasons.get("stale", 0)) >= 3 and len(results) >= written_at_kill + 5

        wait_for(fell_back, timeout_s=240, what="the plug-in to report stale and fall back on later writes")
    finally:
        stop.set()
        t.join(300)
    assert results and all(rc == 0 for rc in results), f"failed writes: {results}"
    blocks = [b for b in _blocks(c) if f"stream-{run}-" in b.path]
    assert len(blocks) == len(results)
    assert all(len(b.replicas) == 3 for b in blocks), [(b.path, b.replicas) for b in blocks if len(b.replicas) != 3]

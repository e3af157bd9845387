"""The node-ordering plug-in inside a real Hadoop 3.3.6 ResourceManager (marked `integration`).

Needs HARVESTER_TEST_HADOOP_HOME (a Hadoop 3.3.6 install) and a JDK; skips otherwise. From that
install, in a temp dir on free loopback ports: the shim jar built against `hadoop classpath`; a
ResourceManager with it on HADOOP_CLASSPATH and capacity-scheduler.xml's multi-node placement
keys naming HarvesterLongJobsNodeLookupPolicy for root.default (CapacitySchedulerConfiguration:
multi-node-placement-enabled, multi-node-sorting.policy.names, policy.<name>.class,
policy.<name>.sorting-interval.ms, <queue>.multi-node-sorting.policy); three NodeManagers of
4 vcores / 4096 MB each (MR shuffle off, as the fixtures README advises); a sidecar process
serving a node ordering that advises [nm2, nm0] for long jobs (nm1 not advised).

A distributed-shell app (AM 512 MB/1 vcore + 4 containers of 512 MB/1 vcore, DominantResource
Calculator) must land on the advised nodes in the advised order: nm2 fills first (AM + 3), the
fourth container goes to nm0, nm1 gets none — whereas Hadoop's default multi-node order (least
allocated first) would spread them over all three. Counted from the RM's REST /nodes
(`numContainers`), while the containers sleep, and from the plug-in's JMX bean (where each of
the scheduler's walks of the order stopped).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import requests

from shim_daemons import JAVA17_FLAGS, Daemons, build_shim_jar, free_port, hadoop_home_or_skip, jmx_bean, wait_for, write_json

pytestmark = pytest.mark.integration

POLICY = "org.harvester.shim.resourcemanager.HarvesterLongJobsNodeLookupPolicy"
BEAN = "Hadoop:service=ResourceManager,name=HarvesterNodeOrdering-long"


@pytest.fixture(scope="module")
def hadoop_home() -> Path:
    return hadoop_home_or_skip("yarn")


def _nodes(rm: str) -> dict[str, dict]:
    r = requests.get(f"{rm}/ws/v1/cluster/nodes", headers={"Accept": "application/json"}, timeout=5)
    r.raise_for_status()
    return {n["id"]: n for n in (r.json().get("nodes") or {}).get("node", [])}


def test_containers_land_on_the_advised_nodes(hadoop_home: Path, tmp_path: Path) -> None:
    jar = build_shim_jar(hadoop_home)
    d = Daemons(hadoop_home, tmp_path)
    rm_ports = {k: free_port() for k in ("address", "scheduler.address", "resource-tracker.address",
                                         "admin.address", "webapp.address")}
    side = free_port()
    core = {"fs.defaultFS": "file:///", "hadoop.tmp.dir": str(tmp_path / "tmp")}
    yarn = {
        **{f"yarn.resourcemanager.{k}": f"127.0.0.1:{p}" for k, p in rm_ports.items()},
        "yarn.nodemanager.aux-services": "",
        "yarn.nodemanager.resource.memory-mb": 4096, "yarn.nodemanager.resource.cpu-vcores": 4,
        "yarn.scheduler.minimum-allocation-mb": 256, "yarn.scheduler.maximum-allocation-mb": 4096,
        "yarn.nodemanager.vmem-check-enabled": "false",
        "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "100",
        # containers' JVMs (the distributed-shell AM) get the Java 17 flags too
        "yarn.nodemanager.admin-env": f"JAVA_TOOL_OPTIONS={JAVA17_FLAGS}",
        "harvester.shim.resourcemanager.advice.url": f"http://127.0.0.1:{side}/v1/yarn/node-ordering",
        "harvester.shim.resourcemanager.stale.after.ms": 30000,
        "harvester.shim.resourcemanager.long.poll.seconds": 5,
    }
    cs = {
        "yarn.scheduler.capacity.root.queues": "default",
        "yarn.scheduler.capacity.root.default.capacity": 100,
        "yarn.scheduler.capacity.root.default.maximum-capacity": 100,
        "yarn.scheduler.capacity.maximum-am-resource-percent": 1.0,
        "yarn.scheduler.capacity.resource-calculator": "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        "yarn.scheduler.capacity.multi-node-placement-enabled": "true",
        "yarn.scheduler.capacity.multi-node-sorting.policy.names": "harvester-long",
        "yarn.scheduler.capacity.multi-node-sorting.policy.harvester-long.class": POLICY,
        "yarn.scheduler.capacity.multi-node-sorting.policy.harvester-long.sorting-interval.ms": 200,
        "yarn.scheduler.capacity.root.default.multi-node-sorting.policy": "harvester-long",
    }
    rm_conf = d.conf("rm", {"core-site.xml": core, "yarn-site.xml": yarn, "capacity-scheduler.xml": cs})
    rm = f"http://127.0.0.1:{rm_ports['webapp.address']}"
    app_id = None
    try:
        nm_ids = []
        for k in range(3):
            p = [free_port() for _ in range(3)]
            nm_ids.append(f"localhost:{p[0]}")
            conf = d.conf(f"nm{k}", {"core-site.xml": core, "capacity-scheduler.xml": cs, "yarn-site.xml": {
                **yarn, "yarn.nodemanager.hostname": "localhost", "yarn.nodemanager.address": nm_ids[-1],
                "yarn.nodemanager.localizer.address": f"127.0.0.1:{p[1]}",
                "yarn.nodemanager.webapp.address": f"127.0.0.1:{p[2]}",
                "yarn.nodemanager.local-dirs": str(tmp_path / f"nm{k}" / "local"),
                "yarn.nodemanager.log-dirs": str(tmp_path / f"nm{k}" / "logs")}})
            d.start(f"nm{k}", ["yarn", "nodemanager"], conf)
        ordering = write_json(tmp_path / "ordering.json",
                              {"queues": {"root.default": "long"}, "orders": {"long": [nm_ids[2], nm_ids[0]]}})
        d.start_python("sidecar", [str(Path(__file__).with_name("shim_sidecar.py")), "--port", str(side),
                                   "--ordering", str(ordering)])
        d.start("rm", ["yarn", "resourcemanager"], rm_conf, classpath=str(jar))
        wait_for(lambda: len([n for n in _nodes(rm).values() if n["state"] == "RUNNING"]) == 3, timeout_s=180,
                 what=f"three RUNNING NodeManagers\n{d.tail('rm')}")
        assert set(_nodes(rm)) == set(nm_ids)
        wait_for(lambda: not (jmx_bean(rm, BEAN) or {"Stale": True})["Stale"], timeout_s=60,
                 what=f"the plug-in to load the node ordering\n{d.tail('rm')}\n{d.tail('sidecar')}")
        dshell = next((hadoop_home / "share" / "hadoop" / "yarn").glob("hadoop-yarn-applications-distributedshell-*.jar"))
        client = d.start("dshell", ["yarn", "jar", str(dshell), "-jar", str(dshell), "-shell_command", "sleep 90",
                                    "-num_containers", "4", "-container_memory", "512", "-container_vcores", "1",
                                    "-master_memory", "512", "-master_vcores", "1", "-queue", "default"], rm_conf)
        nodes = wait_for(lambda: (lambda ns: ns if sum(n["numContainers"] for n in ns.values()) == 5 else None)(_nodes(rm)),
                         timeout_s=240, what=f"the AM and 4 containers running\n{d.tail('dshell')}\n{d.tail('rm')}")
        apps = requests.get(f"{rm}/ws/v1/cluster/apps", params={"states": "RUNNING"}, timeout=5).json()["apps"]["app"]
        app_id = apps[0]["id"]
        counts = {nid: nodes[nid]["numContainers"] for nid in nm_ids}
        assert counts == {nm_ids[2]: 4, nm_ids[0]: 1, nm_ids[1]: 0}, counts
        bean = jmx_bean(rm, BEAN)
        assert bean["AdvisedDecisions"] > 0 and not bean["Stale"], bean
        # Each container is one walk of the plug-in's order that stopped on its node
        # (RegularContainerAllocator#allocate): AM + 3 on nm2 (first), the fourth on nm0 (second).
        assert bean["AdvisedNodeTaken"] >= 5 and bean["FirstAdvisedNodeTaken"] >= 4, bean
        assert bean["NonAdvisedNodeTaken"] == 0, bean
        assert bean["NodesWalked"] >= bean["AdvisedNodeTaken"] + bean["NoNodeTaken"], bean
        d.kill(client)
    finally:
        if app_id:
            requests.put(f"{rm}/ws/v1/cluster/apps/{app_id}/state", json={"state": "KILLED"}, timeout=10)
        d.stop()

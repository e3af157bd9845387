"""Cluster-level answers: info, user info, metrics, nodes (captures/info, metrics*, nodes*).

`/nodes` is the big one (a 10,000-node answer is ~19 MB): each node's JSON text is cached and
re-rendered only when that node changed (allocation, capacity, a new utilization sample), so a
poll of a large, mostly steady cluster costs a string join.

Units as the RM prints them: `nodeCPUUsage` physical cores of the whole host,
`containersCPUUsage` vcores, `cpuUtilization` = nodeCPUUsage / cores x 100 and
`memUtilization` = host memory in use / host RAM x 100 (Java floats), memory in MB.
`/cluster/metrics` clamps available at 0 and reports totalMB = allocated + available.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from harvester.emulator.jsonfmt import jfloat
from harvester.emulator.lifecycle import AppState
from harvester.emulator.render_common import res, resource, resource_text

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

BUILD = "3.3.6 from 1be78238728da9266a4f88195058f08fd012bf9c by ubuntu source checksum"
CLUSTER_INFO_STATIC = {
    "state": "STARTED",
    "haState": "ACTIVE",
    "rmStateStoreName": "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore",
    "resourceManagerVersion": "3.3.6",
    "resourceManagerBuildVersion": f"{BUILD} d42eb795a5eadb0febf5e44a7f87a9",
    "resourceManagerVersionBuiltOn": "2023-06-18T08:31Z",
    "hadoopVersion": "3.3.6",
    "hadoopBuildVersion": f"{BUILD} rebuilt-from-sources-jar",
    "hadoopVersionBuiltOn": "2023-06-18T08:21Z",
    "haZooKeeperConnectionState": "Could not find leader elector. Verify both HA and automatic failover are enabled.",
}


def cluster_info(emu: Emulator) -> dict[str, Any]:
    return {"clusterInfo": {"id": emu.cluster_ts_ms, "startedOn": emu.cluster_ts_ms, **CLUSTER_INFO_STATIC}}


def cluster_info_xml(emu: Emulator) -> str:
    from xml.sax.saxutils import escape

    body = "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in cluster_info(emu)["clusterInfo"].items())
    return f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><clusterInfo>{body}</clusterInfo>'


def user_info(emu: Emulator, user: str) -> dict[str, Any]:
    return {"rmLoginUser": emu.config.rm_login_user, "requestedUser": user}


def metrics(emu: Emulator) -> dict[str, Any]:
    apps = list(emu.apps.values())
    count = {s: sum(1 for a in apps if a.state is s) for s in AppState}
    cluster = emu.cluster_resource()
    used = emu.cluster_allocated()
    avail_mb = max(0, cluster.memory_mb - used.memory_mb)
    avail_vc = max(0, cluster.vcores - used.vcores)
    pending_mb = sum(k.resources.memory_mb * k.count for a in apps for k in a.asks)
    pending_vc = sum(k.resources.vcores * k.count for a in apps for k in a.asks)
    pending_n = sum(k.count for a in apps for k in a.asks)
    live = sum(1 for c in emu.containers.values() if c.live)
    rep = emu.sampler.reported
    run = emu.model.running
    mem_pct = int(100 * rep[run, 2].sum() / max(emu.host_mem_mb[run].sum(), 1)) if run.any() else 0
    cpu_pct = int(100 * rep[run, 0].sum() / max(emu.model.physical_cores[run].sum(), 1)) if run.any() else 0
    n_total = int(run.sum())
    return {"clusterMetrics": {
        "appsSubmitted": len(apps), "appsCompleted": count[AppState.FINISHED],
        "appsPending": count[AppState.ACCEPTED] + count[AppState.SUBMITTED],
        "appsRunning": count[AppState.RUNNING], "appsFailed": count[AppState.FAILED],
        "appsKilled": count[AppState.KILLED],
        "reservedMB": 0, "availableMB": avail_mb, "allocatedMB": used.memory_mb, "pendingMB": pending_mb,
        "reservedVirtualCores": 0, "availableVirtualCores": avail_vc, "allocatedVirtualCores": used.vcores,
        "pendingVirtualCores": pending_vc, "containersAllocated": live, "containersReserved": 0,
        "containersPending": pending_n, "totalMB": used.memory_mb + avail_mb,
        "totalVirtualCores": used.vcores + avail_vc, "utilizedMBPercent": mem_pct,
        "utilizedVirtualCoresPercent": cpu_pct, "rmSchedulerBusyPercent": 0, "totalNodes": n_total,
        "lostNodes": int((~run).sum()), "unhealthyNodes": 0, "decommissioningNodes": 0, "decommissionedNodes": 0,
        "rebootedNodes": 0, "activeNodes": n_total, "shutdownNodes": 0,
        "totalUsedResourcesAcrossPartition": res(used),
        "totalClusterResourcesAcrossPartition": res(cluster),
        "totalReservedResourcesAcrossPartition": resource(0, 0),
        "totalAllocatedContainersAcrossPartition": live,
        "crossPartitionMetricsAvailable": True,
    }}


class NodeRenderer:
    """Per-node JSON text, cached by the node's change counter."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._version = np.zeros(0, dtype=np.int64)

    def node_text(self, emu: Emulator, i: int) -> str:
        m = emu.model
        used_mem = int(m.alloc_mem[i] + emu.lag_mem[i])
        used_vc = int(m.alloc_vcores[i] + emu.lag_vc[i])
        total = emu.total_resource(i)
        tot_mem, tot_vc = total.memory_mb, total.vcores
        av_mem, av_vc = tot_mem - used_mem, tot_vc - used_vc
        node_cpu, cont_vc, node_mem, cont_mem, cont_vmem = emu.sampler.reported[i]
        cores = float(m.physical_cores[i])
        nid = m.node_ids[i]
        n_cont = len(m.containers_on(i)) + int(emu.lag_n[i])
        util = json.dumps({
            "nodePhysicalMemoryMB": int(node_mem), "nodeVirtualMemoryMB": int(node_mem),
            "nodeCPUUsage": float(node_cpu), "aggregatedContainersPhysicalMemoryMB": int(cont_mem),
            "aggregatedContainersVirtualMemoryMB": int(cont_vmem), "containersCPUUsage": float(cont_vc),
        }, separators=(",", ":"))
        head = json.dumps({
            "rack": m.racks[i], "state": "RUNNING" if m.running[i] else "LOST", "id": nid,
            "nodeHostName": m.hostnames[i], "nodeHTTPAddress": emu.http_addresses[i],
            "lastHealthUpdate": int(emu.registered_ms[i]), "version": "3.3.6", "healthReport": "",
            "numContainers": n_cont, "usedMemoryMB": used_mem, "availMemoryMB": av_mem,
            "usedVirtualCores": used_vc, "availableVirtualCores": av_vc,
            "memUtilization": jfloat(100.0 * node_mem / float(emu.host_mem_mb[i])),
            "cpuUtilization": jfloat(100.0 * node_cpu / cores), "numRunningOpportContainers": 0,
            "usedMemoryOpportGB": 0, "usedVirtualCoresOpport": 0, "numQueuedContainers": 0,
        }, separators=(",", ":"))
        return (head[:-1] + ',"allocationTags":{},"resourceUtilization":' + util
                + ',"usedResource":' + resource_text(used_mem, used_vc)
                + ',"availableResource":' + resource_text(av_mem, av_vc)
                + ',"nodeAttributesInfo":{},"totalResource":' + resource_text(tot_mem, tot_vc) + "}")

    def texts(self, emu: Emulator, indexes: np.ndarray) -> list[str]:
        n = len(emu.model)
        if len(self._version) < n:
            self._text.extend([""] * (n - len(self._text)))
            self._version = np.concatenate([self._version, np.full(n - len(self._version), -1, dtype=np.int64)])
        stale = indexes[self._version[indexes] != emu.node_version[indexes]]
        for i in stale.tolist():
            self._text[i] = self.node_text(emu, i)
            self._version[i] = emu.node_version[i]
        return [self._text[i] for i in indexes.tolist()]

    def nodes(self, emu: Emulator, states: set[str] | None) -> str:
        idx = np.arange(len(emu.model))
        if states:
            state = np.where(emu.model.running, "RUNNING", "LOST")
            idx = idx[np.isin(state, list(states))]
        if len(idx) == 0:
            return '{"nodes":{}}'
        return '{"nodes":{"node":[' + ",".join(self.texts(emu, idx)) + "]}}"

    def node(self, emu: Emulator, i: int) -> str:
        return '{"node":' + self.texts(emu, np.array([i]))[0] + "}"


def app_statistics(emu: Emulator, states: set[str] | None, types: set[str] | None) -> dict[str, Any]:
    order = ["ACCEPTED", "KILLED", "NEW_SAVING", "NEW", "SUBMITTED", "FAILED", "RUNNING", "FINISHED"]
    wanted = [s for s in order if not states or s in states]
    items = []
    for s in wanted:
        n = sum(1 for a in emu.apps.values() if a.state.value == s and (not types or a.spec.app_type in types))
        items.append({"state": s, "type": "*" if not types else ",".join(sorted(types)), "count": n})
    return {"appStatInfo": {"statItem": items}}

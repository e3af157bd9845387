"""Cluster-level answers: info, user info, metrics, nodes (captures/info, metrics*, nodes*).

Written from rm_client.wire's field tables (render_common.py). `/nodes` is the big one (a
10,000-node answer is ~19 MB): each node's JSON text is cached and re-rendered only when that
node changed (allocation, capacity, a new utilization sample), so a poll of a large, mostly
steady cluster costs a string join.

Units as the RM prints them: `nodeCPUUsage` physical cores of the whole host,
`containersCPUUsage` vcores, `cpuUtilization` = nodeCPUUsage / cores x 100 and
`memUtilization` = host memory in use / host RAM x 100 (Java floats), memory in MB.
`/cluster/metrics` clamps available at 0 and reports totalMB = allocated + available; an app
counts as running from the allocation of its AM (QueueMetrics.runAppAttempt), as pending before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

import numpy as np

from harvester.emulator.lifecycle import AppState
from harvester.emulator.render_common import ZERO, dumps, java_float, res
from rm_client.wire.app_ops import AppStatItem, encode_app_statistics
from rm_client.wire.cluster import (
    CLUSTER_INFO,
    ClusterInfo,
    ClusterMetrics,
    ClusterUserInfo,
    encode_cluster_info,
    encode_cluster_metrics,
    encode_cluster_user_info,
)
from rm_client.wire.nodes import NODE, Node, ResourceUtilization
from rm_client.wire.resources import Resource

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

BUILD = "3.3.6 from 1be78238728da9266a4f88195058f08fd012bf9c by ubuntu source checksum"
RM_BUILD_VERSION = f"{BUILD} d42eb795a5eadb0febf5e44a7f87a9"
HADOOP_BUILD_VERSION = f"{BUILD} rebuilt-from-sources-jar"


def _info(emu: Emulator) -> ClusterInfo:
    return ClusterInfo(
        cluster_id=emu.cluster_ts_ms, started_on_ms=emu.cluster_ts_ms, state="STARTED", ha_state="ACTIVE",
        rm_state_store_name="org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore",
        rm_version="3.3.6", rm_build_version=RM_BUILD_VERSION, rm_version_built_on="2023-06-18T08:31Z",
        hadoop_version="3.3.6", hadoop_build_version=HADOOP_BUILD_VERSION, hadoop_version_built_on="2023-06-18T08:21Z",
        ha_zookeeper_connection_state="Could not find leader elector. Verify both HA and automatic failover are "
                                      "enabled.")


def cluster_info(emu: Emulator) -> dict[str, Any]:
    return encode_cluster_info(_info(emu))


def cluster_info_xml(emu: Emulator) -> str:
    body = "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in CLUSTER_INFO.encode(_info(emu)).items())
    return f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><clusterInfo>{body}</clusterInfo>'


def user_info(emu: Emulator, user: str) -> dict[str, Any]:
    return encode_cluster_user_info(ClusterUserInfo(emu.config.rm_login_user, user))


def metrics(emu: Emulator) -> dict[str, Any]:
    apps = list(emu.apps.values())
    count = {s: sum(1 for a in apps if a.state is s) for s in AppState}
    live = [a for a in apps if a.state in (AppState.SUBMITTED, AppState.ACCEPTED, AppState.RUNNING)]
    running = sum(1 for a in live if a.attempt is not None and a.attempt.am_container_id is not None)
    cluster = emu.cluster_resource()
    used = emu.cluster_allocated()
    avail_mb = max(0, cluster.memory_mb - used.memory_mb)
    avail_vc = max(0, cluster.vcores - used.vcores)
    pending_mb = sum(k.resources.memory_mb * k.count for a in apps for k in a.asks)
    pending_vc = sum(k.resources.vcores * k.count for a in apps for k in a.asks)
    pending_n = sum(k.count for a in apps for k in a.asks)
    n_live = sum(1 for c in emu.containers.values() if c.live)
    rep = emu.sampler.reported
    run = emu.model.running
    mem_pct = int(100 * rep[run, 2].sum() / max(emu.host_mem_mb[run].sum(), 1)) if run.any() else 0
    cpu_pct = int(100 * rep[run, 0].sum() / max(emu.model.physical_cores[run].sum(), 1)) if run.any() else 0
    n_total = int(run.sum())
    return encode_cluster_metrics(ClusterMetrics(
        apps_submitted=len(apps), apps_completed=count[AppState.FINISHED], apps_pending=len(live) - running,
        apps_running=running, apps_failed=count[AppState.FAILED], apps_killed=count[AppState.KILLED],
        reserved_mb=0, available_mb=avail_mb, allocated_mb=used.memory_mb, pending_mb=pending_mb,
        reserved_vcores=0, available_vcores=avail_vc, allocated_vcores=used.vcores, pending_vcores=pending_vc,
        containers_allocated=n_live, containers_reserved=0, containers_pending=pending_n,
        total_mb=used.memory_mb + avail_mb, total_vcores=used.vcores + avail_vc, utilized_mb_percent=mem_pct,
        utilized_vcores_percent=cpu_pct, rm_scheduler_busy_percent=0, total_nodes=n_total,
        lost_nodes=int((~run).sum()), unhealthy_nodes=0, decommissioning_nodes=0, decommissioned_nodes=0,
        rebooted_nodes=0, active_nodes=n_total, shutdown_nodes=0,
        total_used_resources_across_partition=res(used), total_cluster_resources_across_partition=res(cluster),
        total_reserved_resources_across_partition=ZERO, total_allocated_containers_across_partition=n_live,
        cross_partition_metrics_available=True))


def node_model(emu: Emulator, i: int) -> Node:
    """Node `i` as the RM reports it (used includes RM-killed containers the NM has not reported)."""
    m = emu.model
    used_mem = int(m.alloc_mem[i] + emu.lag_mem[i])
    used_vc = int(m.alloc_vcores[i] + emu.lag_vc[i])
    total = emu.total_resource(i)
    av_mem, av_vc = total.memory_mb - used_mem, total.vcores - used_vc
    node_cpu, cont_vc, node_mem, cont_mem, cont_vmem = emu.sampler.reported[i]
    return Node(
        id=m.node_ids[i], rack=m.racks[i], state="RUNNING" if m.running[i] else "LOST",
        host_name=m.hostnames[i], http_address=emu.http_addresses[i],
        last_health_update_ms=int(emu.registered_ms[i]), version="3.3.6", health_report="",
        num_containers=len(m.containers_on(i)) + int(emu.lag_n[i]), used_memory_mb=used_mem,
        avail_memory_mb=av_mem, used_vcores=used_vc, avail_vcores=av_vc,
        mem_utilization_percent=java_float(100.0 * node_mem / float(emu.host_mem_mb[i])),
        cpu_utilization_percent=java_float(100.0 * node_cpu / float(m.physical_cores[i])),
        num_running_opport_containers=0, used_memory_opport_gb=0, used_vcores_opport=0, num_queued_containers=0,
        resource_utilization=ResourceUtilization(int(node_mem), int(node_mem), float(node_cpu), int(cont_mem),
                                                 int(cont_vmem), float(cont_vc)),
        used_resource=Resource(used_mem, used_vc), available_resource=Resource(av_mem, av_vc),
        total_resource=Resource(total.memory_mb, total.vcores))


class NodeRenderer:
    """Per-node JSON text, cached by the node's change counter."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._version = np.zeros(0, dtype=np.int64)

    def texts(self, emu: Emulator, indexes: np.ndarray) -> list[str]:
        n = len(emu.model)
        if len(self._version) < n:
            self._text.extend([""] * (n - len(self._text)))
            self._version = np.concatenate([self._version, np.full(n - len(self._version), -1, dtype=np.int64)])
        stale = indexes[self._version[indexes] != emu.node_version[indexes]]
        for i in stale.tolist():
            self._text[i] = dumps(NODE.encode(node_model(emu, i)))
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
        items.append(AppStatItem(s, "*" if not types else ",".join(sorted(types)), n))
    return encode_app_statistics(items)

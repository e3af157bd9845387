"""``/ws/v1/cluster``, ``/info``, ``/userinfo``, ``/metrics`` (captures ``info``,
``cluster-root``, ``userinfo``, ``metrics*``).

``haState`` is how HA is seen over REST: a standby RM still answers ``/info`` itself (the
RMWebAppFilter does not redirect it) with ``"haState":"STANDBY"``; every other path of a
standby answers a 307 redirect to the active RM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rm_client.wire._json import Struct, fbool, fint, fstr, obj
from rm_client.wire.resources import Resource, field_resource

__all__ = [
    "CLUSTER_INFO",
    "CLUSTER_METRICS",
    "CLUSTER_USER_INFO",
    "ClusterInfo",
    "ClusterMetrics",
    "ClusterUserInfo",
    "decode_cluster_info",
    "decode_cluster_metrics",
    "decode_cluster_user_info",
    "encode_cluster_info",
    "encode_cluster_metrics",
    "encode_cluster_user_info",
]


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """``clusterInfo``. ``cluster_id`` and ``started_on_ms`` are the RM start time (epoch ms);
    it is also the timestamp inside every application/reservation id of this RM run."""

    cluster_id: int
    started_on_ms: int
    state: str
    ha_state: str
    rm_version: str
    hadoop_version: str
    rm_state_store_name: str | None = None
    rm_build_version: str | None = None
    rm_version_built_on: str | None = None
    hadoop_build_version: str | None = None
    hadoop_version_built_on: str | None = None
    ha_zookeeper_connection_state: str | None = None

    @property
    def is_active(self) -> bool:
        return self.ha_state == "ACTIVE"


CLUSTER_INFO: Struct[ClusterInfo] = Struct(ClusterInfo, [
    fint("cluster_id", "id"),
    fint("started_on_ms", "startedOn"),
    fstr("state", "state"),
    fstr("ha_state", "haState"),
    fstr("rm_state_store_name", "rmStateStoreName", True),
    fstr("rm_version", "resourceManagerVersion"),
    fstr("rm_build_version", "resourceManagerBuildVersion", True),
    fstr("rm_version_built_on", "resourceManagerVersionBuiltOn", True),
    fstr("hadoop_version", "hadoopVersion"),
    fstr("hadoop_build_version", "hadoopBuildVersion", True),
    fstr("hadoop_version_built_on", "hadoopVersionBuiltOn", True),
    fstr("ha_zookeeper_connection_state", "haZooKeeperConnectionState", True),
])


@dataclass(frozen=True, slots=True)
class ClusterUserInfo:
    """``/userinfo``: who the RM runs as and who the caller is (``dr.who`` without user.name)."""

    rm_login_user: str
    requested_user: str


CLUSTER_USER_INFO: Struct[ClusterUserInfo] = Struct(ClusterUserInfo, [
    fstr("rm_login_user", "rmLoginUser"),
    fstr("requested_user", "requestedUser"),
])


@dataclass(frozen=True, slots=True)
class ClusterMetrics:
    """``clusterMetrics``. Memory in MB, cores in vcores; ``available_*`` is clamped at 0 by the
    RM even when a node runs over-committed (fixtures README, "Behaviour over time")."""

    apps_submitted: int
    apps_completed: int
    apps_pending: int
    apps_running: int
    apps_failed: int
    apps_killed: int
    reserved_mb: int
    available_mb: int
    allocated_mb: int
    pending_mb: int
    reserved_vcores: int
    available_vcores: int
    allocated_vcores: int
    pending_vcores: int
    containers_allocated: int
    containers_reserved: int
    containers_pending: int
    total_mb: int
    total_vcores: int
    total_nodes: int
    lost_nodes: int
    unhealthy_nodes: int
    decommissioning_nodes: int
    decommissioned_nodes: int
    rebooted_nodes: int
    active_nodes: int
    shutdown_nodes: int
    utilized_mb_percent: int | None = None
    utilized_vcores_percent: int | None = None
    rm_scheduler_busy_percent: int | None = None
    total_used_resources_across_partition: Resource | None = None
    total_cluster_resources_across_partition: Resource | None = None
    total_reserved_resources_across_partition: Resource | None = None
    total_allocated_containers_across_partition: int | None = None
    cross_partition_metrics_available: bool | None = None


CLUSTER_METRICS: Struct[ClusterMetrics] = Struct(ClusterMetrics, [
    fint("apps_submitted", "appsSubmitted"),
    fint("apps_completed", "appsCompleted"),
    fint("apps_pending", "appsPending"),
    fint("apps_running", "appsRunning"),
    fint("apps_failed", "appsFailed"),
    fint("apps_killed", "appsKilled"),
    fint("reserved_mb", "reservedMB"),
    fint("available_mb", "availableMB"),
    fint("allocated_mb", "allocatedMB"),
    fint("pending_mb", "pendingMB"),
    fint("reserved_vcores", "reservedVirtualCores"),
    fint("available_vcores", "availableVirtualCores"),
    fint("allocated_vcores", "allocatedVirtualCores"),
    fint("pending_vcores", "pendingVirtualCores"),
    fint("containers_allocated", "containersAllocated"),
    fint("containers_reserved", "containersReserved"),
    fint("containers_pending", "containersPending"),
    fint("total_mb", "totalMB"),
    fint("total_vcores", "totalVirtualCores"),
    fint("utilized_mb_percent", "utilizedMBPercent", True),
    fint("utilized_vcores_percent", "utilizedVirtualCoresPercent", True),
    fint("rm_scheduler_busy_percent", "rmSchedulerBusyPercent", True),
    fint("total_nodes", "totalNodes"),
    fint("lost_nodes", "lostNodes"),
    fint("unhealthy_nodes", "unhealthyNodes"),
    fint("decommissioning_nodes", "decommissioningNodes"),
    fint("decommissioned_nodes", "decommissionedNodes"),
    fint("rebooted_nodes", "rebootedNodes"),
    fint("active_nodes", "activeNodes"),
    fint("shutdown_nodes", "shutdownNodes"),
    field_resource("total_used_resources_across_partition", "totalUsedResourcesAcrossPartition"),
    field_resource("total_cluster_resources_across_partition", "totalClusterResourcesAcrossPartition"),
    field_resource("total_reserved_resources_across_partition", "totalReservedResourcesAcrossPartition"),
    fint("total_allocated_containers_across_partition", "totalAllocatedContainersAcrossPartition", True),
    fbool("cross_partition_metrics_available", "crossPartitionMetricsAvailable", True),
])


def decode_cluster_info(doc: Any) -> ClusterInfo:
    return CLUSTER_INFO.decode(obj(doc, "").get("clusterInfo"), "clusterInfo")


def encode_cluster_info(info: ClusterInfo) -> dict[str, Any]:
    return {"clusterInfo": CLUSTER_INFO.encode(info)}


def decode_cluster_user_info(doc: Any) -> ClusterUserInfo:
    return CLUSTER_USER_INFO.decode(doc, "")


def encode_cluster_user_info(info: ClusterUserInfo) -> dict[str, Any]:
    return CLUSTER_USER_INFO.encode(info)


def decode_cluster_metrics(doc: Any) -> ClusterMetrics:
    return CLUSTER_METRICS.decode(obj(doc, "").get("clusterMetrics"), "clusterMetrics")


def encode_cluster_metrics(metrics: ClusterMetrics) -> dict[str, Any]:
    return {"clusterMetrics": CLUSTER_METRICS.encode(metrics)}

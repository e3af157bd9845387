"""``/nodes`` and ``/nodes/{id}`` (captures ``nodes*``; scenarios ``cpu-burn``,
``overcommit-timeout``), and the node-resource-update answer ``{"resourceInfo":{..}}``.

UNITS (recorded on a 2-core host with two NMs of 8 vcores each, scenarios/cpu-burn):

* ``resourceUtilization.nodeCPUUsage`` -> :attr:`ResourceUtilization.node_cpu_cores`:
  PHYSICAL cores busy on the WHOLE host (every NM on one host reports the same value;
  saturates at the host's core count).
* ``resourceUtilization.containersCPUUsage`` -> :attr:`ResourceUtilization.containers_cpu_vcores`:
  VCORES, i.e. physical core usage scaled by the NM's ``vcores / (cores * cpu-limit%)``; one busy
  core reads ~3.8 with 8 vcores on 2 cores, so it can exceed ``node_cpu_cores``. Convert with
  :func:`rm_client.units.containers_vcores_to_physical_cores`.
* ``cpuUtilization`` = ``nodeCPUUsage / host cores * 100`` and ``memUtilization`` =
  ``nodePhysicalMemoryMB / host RAM * 100`` (percent of the host).
* Memory fields are MB. ``usedResource``/``availableResource``/``totalResource`` are YARN
  ALLOCATIONS (what the scheduler handed out), independent of utilization;
  ``availableResource`` goes negative on an over-committed node (overCommitTimeout -1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rm_client.wire._json import Struct, decode_list, encode_list, ffloat, fint, flist, fobj, fstr, fstrs, obj
from rm_client.wire.resources import Resource, decode_resource, encode_resource, field_resource

__all__ = [
    "NODE",
    "AllocationTag",
    "Node",
    "NodeAttribute",
    "ResourceUtilization",
    "decode_node",
    "decode_node_resource_info",
    "decode_nodes",
    "encode_node",
    "encode_node_resource_info",
    "encode_nodes",
]


@dataclass(frozen=True, slots=True)
class ResourceUtilization:
    """Measured usage (not allocation). ``node_cpu_cores``: physical cores of the whole host;
    ``containers_cpu_vcores``: vcores; memory in MB."""

    node_physical_memory_mb: int
    node_virtual_memory_mb: int
    node_cpu_cores: float
    aggregated_containers_physical_memory_mb: int
    aggregated_containers_virtual_memory_mb: int
    containers_cpu_vcores: float


RESOURCE_UTILIZATION: Struct[ResourceUtilization] = Struct(ResourceUtilization, [
    fint("node_physical_memory_mb", "nodePhysicalMemoryMB"),
    fint("node_virtual_memory_mb", "nodeVirtualMemoryMB"),
    ffloat("node_cpu_cores", "nodeCPUUsage"),
    fint("aggregated_containers_physical_memory_mb", "aggregatedContainersPhysicalMemoryMB"),
    fint("aggregated_containers_virtual_memory_mb", "aggregatedContainersVirtualMemoryMB"),
    ffloat("containers_cpu_vcores", "containersCPUUsage"),
])


@dataclass(frozen=True, slots=True)
class AllocationTag:
    tag: str
    count: int


ALLOCATION_TAG: Struct[AllocationTag] = Struct(AllocationTag, [
    fstr("tag", "allocationTag"),
    fint("count", "allocationsCount"),
])


@dataclass(frozen=True, slots=True)
class NodeAttribute:
    prefix: str
    name: str
    type: str
    value: str


NODE_ATTRIBUTE: Struct[NodeAttribute] = Struct(NodeAttribute, [
    fstr("prefix", "prefix"),
    fstr("name", "name"),
    fstr("type", "type"),
    fstr("value", "value"),
])


@dataclass(frozen=True, slots=True)
class Node:
    """One NodeManager as the RM sees it. ``id`` is ``host:port`` (the NM RPC address).

    ``*_memory_mb``/``*_vcores`` scalars repeat the ``used_resource``/``available_resource``
    vectors; ``total_resource`` is the node's CURRENT YARN capacity (it changes when the node
    resource is updated over REST, unlike the NM's configured vcores that scale
    ``containers_cpu_vcores``)."""

    id: str
    rack: str
    state: str
    host_name: str
    http_address: str
    last_health_update_ms: int
    version: str
    health_report: str
    num_containers: int
    used_memory_mb: int
    avail_memory_mb: int
    used_vcores: int
    avail_vcores: int
    mem_utilization_percent: float | None = None
    cpu_utilization_percent: float | None = None
    num_running_opport_containers: int | None = None
    used_memory_opport_gb: int | None = None
    used_vcores_opport: int | None = None
    num_queued_containers: int | None = None
    node_labels: tuple[str, ...] = ()
    allocation_tags: tuple[AllocationTag, ...] = ()
    resource_utilization: ResourceUtilization | None = None
    used_resource: Resource | None = None
    available_resource: Resource | None = None
    node_attributes: tuple[NodeAttribute, ...] = ()
    total_resource: Resource | None = None

    @property
    def host_physical_cores(self) -> float | None:
        """Host cores implied by ``cpuUtilization = nodeCPUUsage / cores * 100`` (None when the
        host is idle enough that the ratio is meaningless). Verified on captures: 0.0800 cores
        at 3.9987 % -> 2.0 cores."""
        ru = self.resource_utilization
        pct = self.cpu_utilization_percent
        if ru is None or pct is None or pct < 1.0 or ru.node_cpu_cores <= 0.0:
            return None
        return ru.node_cpu_cores * 100.0 / pct


NODE: Struct[Node] = Struct(Node, [
    fstr("rack", "rack"),
    fstr("state", "state"),
    fstr("id", "id"),
    fstr("host_name", "nodeHostName"),
    fstr("http_address", "nodeHTTPAddress"),
    fint("last_health_update_ms", "lastHealthUpdate"),
    fstr("version", "version"),
    fstr("health_report", "healthReport"),
    fint("num_containers", "numContainers"),
    fint("used_memory_mb", "usedMemoryMB"),
    fint("avail_memory_mb", "availMemoryMB"),
    fint("used_vcores", "usedVirtualCores"),
    fint("avail_vcores", "availableVirtualCores"),
    ffloat("mem_utilization_percent", "memUtilization", True),
    ffloat("cpu_utilization_percent", "cpuUtilization", True),
    fint("num_running_opport_containers", "numRunningOpportContainers", True),
    fint("used_memory_opport_gb", "usedMemoryOpportGB", True),
    fint("used_vcores_opport", "usedVirtualCoresOpport", True),
    fint("num_queued_containers", "numQueuedContainers", True),
    fstrs("node_labels", "nodeLabels"),
    flist("allocation_tags", "allocationTags", ALLOCATION_TAG, inner="allocationTagInfo", always=True),
    fobj("resource_utilization", "resourceUtilization", RESOURCE_UTILIZATION, True),
    field_resource("used_resource", "usedResource"),
    field_resource("available_resource", "availableResource"),
    flist("node_attributes", "nodeAttributesInfo", NODE_ATTRIBUTE, inner="nodeAttributeInfo", always=True),
    field_resource("total_resource", "totalResource"),
])

def decode_node(doc: Any) -> Node:
    """``{"node":{...}}`` (GET /nodes/{id})."""
    return NODE.decode(obj(doc, "").get("node"), "node")


def decode_nodes(doc: Any) -> tuple[Node, ...]:
    """``{"nodes":{"node":[...]}}``; ``{"nodes":null}``/``{"nodes":{}}`` = no nodes."""
    return decode_list(doc, "nodes", "node", NODE)


def encode_node(node: Node) -> dict[str, Any]:
    return {"node": NODE.encode(node)}


def encode_nodes(nodes: tuple[Node, ...] | list[Node]) -> dict[str, Any]:
    """``{"nodes":{"node":[..]}}`` (an array even for one node); ``{"nodes":{}}`` when empty,
    like the recorded ``{"apps":{}}``."""
    return encode_list("nodes", "node", nodes, NODE)


def decode_node_resource_info(doc: Any) -> Resource:
    """The answer of POST /nodes/{id}/resource: ``{"resourceInfo":{memory,vCores,..}}``.
    Beware: it often shows the node's OLD capacity; poll ``/nodes`` for the effect."""
    return decode_resource(obj(doc, "").get("resourceInfo"), "resourceInfo")


def encode_node_resource_info(resource: Resource) -> dict[str, Any]:
    return {"resourceInfo": encode_resource(resource)}


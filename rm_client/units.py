"""CPU units of ``resourceUtilization`` and the conversion to physical cores.

What the NodeManager reports (Hadoop 3.3.6 ``ContainersMonitorImpl`` and
``NodeResourceMonitorImpl``; confirmed on a live RM in fixtures ``scenarios/cpu-burn``):

* ``nodeCPUUsage`` (:attr:`ResourceUtilization.node_cpu_cores`) = PHYSICAL cores busy on the
  whole host (``SysInfoLinux`` CPU percent / 100). Every NM on one host reports the same
  number (it measures the host, not the NM).
* ``containersCPUUsage`` (:attr:`ResourceUtilization.containers_cpu_vcores`) = VCORES::

      vcores = (cores_used / num_processors * 100) * nm_vcores / cpu_limit_percent

  where ``nm_vcores`` is the NM's ``yarn.nodemanager.resource.cpu-vcores`` and
  ``cpu_limit_percent`` its ``yarn.nodemanager.resource.percentage-physical-cpu-limit``
  (default 100). So ``physical = vcores * num_processors * cpu_limit_percent / 100 / nm_vcores``.
  Recorded: one busy container (~0.95 core) on a 2-core host with 8 vcores reads 3.7-3.9,
  i.e. ~0.95 physical cores; it exceeds ``nodeCPUUsage`` (2.0 for the whole host).

CAUTION: ``nm_vcores`` is the NM's CONFIGURED vcores, not the node's current
``totalResource.vCores``: a node-resource update (which Harvester makes) changes the latter
but not the NM's scaling. Record it before the first update (or take it from yarn-site.xml).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rm_client.wire.nodes import Node

__all__ = [
    "HostCpu",
    "containers_vcores_to_physical_cores",
    "host_cpu_breakdown",
    "vcores_per_physical_core",
]


def vcores_per_physical_core(nm_vcores: float, host_physical_cores: float, cpu_limit_percent: float = 100.0) -> float:
    """The NM's scaling factor: ``nm_vcores / (cores * cpu_limit_percent / 100)`` (4.0 for 8
    vcores on 2 cores)."""
    if nm_vcores <= 0 or host_physical_cores <= 0 or not 0 < cpu_limit_percent <= 100:
        raise ValueError("nm_vcores and host_physical_cores must be > 0, cpu_limit_percent in (0, 100]")
    return nm_vcores / (host_physical_cores * cpu_limit_percent / 100.0)


def containers_vcores_to_physical_cores(containers_cpu_vcores: float, *, nm_vcores: float,
                                        host_physical_cores: float, cpu_limit_percent: float = 100.0) -> float:
    """Physical cores used by an NM's containers, from its ``containersCPUUsage`` (vcores)."""
    return containers_cpu_vcores / vcores_per_physical_core(nm_vcores, host_physical_cores, cpu_limit_percent)


@dataclass(frozen=True, slots=True)
class HostCpu:
    """CPU of one host, in PHYSICAL cores: ``total`` busy, of which ``containers`` by YARN
    containers (all NMs of the host), ``primary`` the rest (the non-YARN tenant, >= 0)."""

    host: str
    physical_cores: float
    total: float
    containers: float
    primary: float


def host_cpu_breakdown(nodes: Iterable[Node], *, nm_vcores: Mapping[str, float] | float,
                       host_physical_cores: Mapping[str, float] | float | None = None,
                       cpu_limit_percent: float = 100.0) -> dict[str, HostCpu]:
    """Split each host's busy cores into YARN containers and the rest.

    ``nm_vcores``: configured vcores per node id (or one value for all). ``host_physical_cores``
    per host name (or one value); None estimates it from ``cpuUtilization`` (see
    :attr:`Node.host_physical_cores`) and skips hosts where that is impossible (idle).
    Nodes without ``resource_utilization`` are skipped. Several NMs on one host (a
    pseudo-cluster) are summed for containers while the host total is counted once.
    """
    per_host: dict[str, list[Node]] = {}
    for n in nodes:
        if n.resource_utilization is not None:
            per_host.setdefault(n.host_name, []).append(n)
    out: dict[str, HostCpu] = {}
    for host, members in per_host.items():
        if host_physical_cores is None:
            estimates = [c for c in (m.host_physical_cores for m in members) if c is not None]
            if not estimates:
                continue
            cores = round(max(estimates))
        elif isinstance(host_physical_cores, Mapping):
            if host not in host_physical_cores:
                continue
            cores = host_physical_cores[host]
        else:
            cores = host_physical_cores
        total = max(m.resource_utilization.node_cpu_cores for m in members)  # type: ignore[union-attr]
        containers = 0.0
        for m in members:
            if isinstance(nm_vcores, Mapping) and m.id not in nm_vcores:
                raise ValueError(f"nm_vcores has no configured vcores for node {m.id}")
            vc = nm_vcores[m.id] if isinstance(nm_vcores, Mapping) else nm_vcores
            containers += containers_vcores_to_physical_cores(
                m.resource_utilization.containers_cpu_vcores,  # type: ignore[union-attr]
                nm_vcores=vc, host_physical_cores=cores, cpu_limit_percent=cpu_limit_percent)
        out[host] = HostCpu(host, float(cores), total, containers, max(0.0, total - containers))
    return out

"""`TelemetrySource` over the ResourceManager REST API (via rm_client).

One poll = `GET /nodes` (every node, every state) and, when containers are wanted, the
running apps with their current attempt's containers (`/apps?states=RUNNING`, then
`/appattempts` and `/containers` per app). Units follow the RM (fixtures README): node CPU in
physical cores of the whole host, containers' CPU in vcores; the NodeSample keeps both and
`NodeSample.containers_cpu_cores` converts.

Physical cores per node come from configuration when known; otherwise from what the RM
implies (`cpuUtilization` = nodeCPUUsage / cores × 100, `rm_client.Node.host_physical_cores`),
which is only defined while the host is busy enough — so it is remembered per node once seen.
Any RM failure fails the whole poll with `TelemetryError`: a snapshot is complete or absent.
With several RMs (`rm.clusters`) each one's source is given `node_prefix="<sub-cluster>/"`: its
node ids (samples, containers' nodes, the node-size rules' lookup) and container ids are
qualified as they are built (harvester/subclusters.py).
"""

from __future__ import annotations

from typing import Callable

from rm_client import App, Node, RMClient, RMError

from harvester.domain import ClusterSnapshot, ContainerInfo, ContainerState, NodeSample, Resources
from harvester.telemetry.source import TelemetryError

PhysicalCores = Callable[[str, str], "float | None"]


def node_sample(node: Node, now: float, physical_cores: float | None, prefix: str = "") -> NodeSample:
    total = node.total_resource
    used = node.used_resource
    ru = node.resource_utilization
    return NodeSample(
        node_id=prefix + node.id,
        time=now,
        state=node.state,
        rack=node.rack,
        hostname=node.host_name,
        total=Resources(total.memory_mb, total.vcores) if total else Resources(node.used_memory_mb + node.avail_memory_mb, node.used_vcores + node.avail_vcores),
        used=Resources(used.memory_mb, used.vcores) if used else Resources(node.used_memory_mb, node.used_vcores),
        num_containers=node.num_containers,
        node_cpu_cores=ru.node_cpu_cores if ru else None,
        containers_cpu_vcores=ru.containers_cpu_vcores if ru else None,
        node_memory_mb=float(ru.node_physical_memory_mb) if ru else None,
        containers_memory_mb=float(ru.aggregated_containers_physical_memory_mb) if ru else None,
        physical_cores=physical_cores,
        labels=node.node_labels,
    )


class RMTelemetrySource:
    """Polls one (HA set of) ResourceManager(s); see the module docstring."""

    def __init__(
        self,
        client: RMClient,
        *,
        name: str = "rm",
        list_containers: bool = False,
        physical_cores: PhysicalCores = lambda node_id, hostname: None,
        node_prefix: str = "",
    ) -> None:
        self.name = name
        self._prefix = node_prefix  # rm.clusters: "<sub-cluster>/" before every node id (harvester/subclusters.py)
        self._client = client
        self._list_containers = list_containers
        self._configured_cores = physical_cores
        self._seen_cores: dict[str, float] = {}

    def _cores(self, node: Node) -> float | None:
        configured = self._configured_cores(self._node_id(node.id), node.host_name)
        if configured:
            return configured
        implied = node.host_physical_cores
        if implied:
            # the ratio is a float division of rounded numbers: snap to the nearest whole core
            self._seen_cores[node.id] = float(max(1, round(implied)))
        return self._seen_cores.get(node.id)

    def _node_id(self, node_id: str) -> str:
        return self._prefix + node_id if self._prefix and node_id else node_id

    def _containers(self, apps: tuple[App, ...]) -> list[ContainerInfo]:
        out: list[ContainerInfo] = []
        for app in apps:
            attempts = self._client.list_app_attempts(app.id)
            if not attempts:
                continue
            attempt = max(attempts, key=lambda a: a.attempt_number)
            for c in self._client.list_containers(app.id, attempt.attempt_id):
                if c.state == "COMPLETE":
                    continue
                out.append(
                    ContainerInfo(
                        container_id=self._node_id(c.container_id),
                        app_id=app.id,
                        node_id=self._node_id(c.node_id or c.assigned_node_id),
                        resources=Resources(c.allocated_mb, c.allocated_vcores),
                        started_at=c.started_time_ms / 1000.0,
                        is_am=c.container_id == attempt.container_id,
                        priority=app.priority or 0,
                        state=ContainerState(c.state) if c.state in ContainerState.__members__ else ContainerState.RUNNING,
                    )
                )
        return out

    def poll(self, now: float) -> ClusterSnapshot:
        try:
            nodes = self._client.list_nodes()
            samples = tuple(node_sample(n, now, self._cores(n), self._prefix) for n in nodes)
            containers: tuple[ContainerInfo, ...] = ()
            if self._list_containers:
                containers = tuple(self._containers(self._client.list_apps(states=["RUNNING"])))
        except RMError as exc:
            raise TelemetryError(f"RM poll failed: {exc}") from exc
        return ClusterSnapshot(
            time=now, source=self.name, nodes=samples, containers=containers, containers_complete=self._list_containers
        )

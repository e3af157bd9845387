"""Builders of snapshots, nodes and guard contexts shared by the harvesting tests.

Importable from any test module (pytest puts tests/ on sys.path for tests/conftest.py).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from harvester.decisions.arbiter import PushRecord
from harvester.decisions.guard import GuardContext, NodeMemo
from harvester.decisions.kills import KillRecord
from harvester.decisions.reserve import ReserveTable
from harvester.decisions.strategy import GuardStrategy, KillMechanism, NodeStrategy
from harvester.domain import ClusterSnapshot, ContainerInfo, NodeSample, Resources

NOW = 1_000_000.0


def node_strategy(node_id: str = "n1:8041", *, tenant: str = "web", cores: float = 16.0, vcores: int = 16,
                  memory_mb: int = 65536, host_memory_mb: int | None = None) -> NodeStrategy:
    return NodeStrategy(node_id, node_id.split(":")[0], tenant, "prod", cores, Resources(memory_mb, vcores), host_memory_mb)


def sample(node_id: str = "n1:8041", *, t: float = NOW - 2, total: Resources = Resources(65536, 16),
           used: Resources = Resources(0, 0), node_cpu: float | None = 4.0, containers_vcores: float | None = 0.0,
           state: str = "RUNNING", num_containers: int = 0, node_mem: float | None = None,
           containers_mem: float | None = None) -> NodeSample:
    return NodeSample(
        node_id=node_id, time=t, state=state, rack="/r1", hostname=node_id.split(":")[0], total=total, used=used,
        num_containers=num_containers, node_cpu_cores=node_cpu, containers_cpu_vcores=containers_vcores,
        node_memory_mb=node_mem, containers_memory_mb=containers_mem,
    )


def container(cid: str, node_id: str = "n1:8041", *, vcores: int = 2, memory_mb: int = 4096, started_at: float = NOW - 100,
              is_am: bool = False, priority: int = 0, app: str = "application_1_0001") -> ContainerInfo:
    return ContainerInfo(cid, app, node_id, Resources(memory_mb, vcores), started_at, is_am, priority)


def snapshot(nodes: Iterable[NodeSample], containers: Iterable[ContainerInfo] = (), *, t: float = NOW - 1,
             complete: bool = True) -> ClusterSnapshot:
    return ClusterSnapshot(t, "test", tuple(nodes), tuple(containers), complete)


def context(snap: ClusterSnapshot | None, nodes: Iterable[NodeStrategy], *, now: float = NOW,
            mechanism: KillMechanism = KillMechanism.RM_OVERCOMMIT, reserve: float = 0.125,
            tenant_class: Mapping[str, str] | None = None, last_pushed: Mapping[str, PushRecord] | None = None,
            kills: Mapping[str, KillRecord] | None = None, previous: Mapping[str, NodeMemo] | None = None,
            **strategy: object) -> GuardContext:
    ns = {n.node_id: n for n in nodes}
    classes = dict(tenant_class) if tenant_class is not None else {n.tenant: "periodic-0" for n in ns.values()}
    reserves = ReserveTable({c: reserve for c in classes.values()}, {c: "test reserve" for c in classes.values()}, reserve)
    return GuardContext(
        now=now, snapshot=snap, nodes=ns, tenant_class=classes, reserves=reserves,
        strategy=GuardStrategy(kill_mechanism=mechanism, **strategy),  # type: ignore[arg-type]
        last_pushed=dict(last_pushed or {}), kills=dict(kills or {}), stimulus_id="tick-1",
        previous=dict(previous or {}),
    )


def agreed(*node_ids: str, primary: float = 0.0, allocated: Resources = Resources(0, 0)) -> dict[str, NodeMemo]:
    """A previous decision whose target allows any increase (the second fresh sample confirms it)."""
    return {n: NodeMemo(Resources(1 << 30, 1 << 20), primary, allocated) for n in (node_ids or ("n1:8041",))}

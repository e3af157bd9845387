"""Tenant utilization series: the input of the class model (OSDI'16 §3.2), pure.

§3.2: "we compute the average of their utilizations in each time slot, and use the
utilization of this 'average' server for one month to represent the primary tenant". Here a
tenant's series is a row of a tenants × slots matrix of PRIMARY CPU utilization (fraction of
the server's physical cores used by the non-YARN workload), slot width `step_s` (2 minutes,
AutoPilot's rate), NaN where no node of the tenant reported in that slot.

Primary usage = node CPU (physical cores, whole host) − containers' CPU converted from vcores
to cores (fixtures README: the NM reports containers in vcores scaled by its allotted vcores /
physical cores), clamped at 0. The same derivation feeds the guard (decisions/guard.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from harvester.domain import NodeSample


@dataclass(frozen=True, slots=True, eq=False)
class TenantSeries:
    """Tenants × slots utilization matrix; slot j covers [start + j·step_s, start + (j+1)·step_s)."""

    tenants: tuple[str, ...]
    matrix: np.ndarray
    step_s: float
    start: float

    def __post_init__(self) -> None:
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.tenants):
            raise ValueError(f"matrix shape {self.matrix.shape} does not match {len(self.tenants)} tenants")
        if len(set(self.tenants)) != len(self.tenants):
            raise ValueError("tenant names must be unique")
        if self.step_s <= 0:
            raise ValueError(f"step_s must be positive, got {self.step_s}")

    @property
    def end(self) -> float:
        return self.start + self.matrix.shape[1] * self.step_s


def stack_series(series: Mapping[str, np.ndarray], *, step_s: float = 120.0, end: float = 0.0) -> TenantSeries:
    """Stack per-tenant 1-D series of different lengths, aligned on their LAST sample.

    Every series is assumed to end at `end` (the most recent slot); shorter ones are padded
    with NaN at the front, so "the last 30 days" means the same slots for every tenant.
    """
    tenants = tuple(series)
    width = max((len(v) for v in series.values()), default=0)
    matrix = np.full((len(tenants), width), np.nan, dtype=np.float64)
    for i, name in enumerate(tenants):
        v = np.asarray(series[name], dtype=np.float64)
        if v.ndim != 1:
            raise ValueError(f"series of {name!r} must be 1-D, got shape {v.shape}")
        if v.size:
            matrix[i, width - v.size:] = v
    return TenantSeries(tenants, matrix, step_s, end - width * step_s)


def primary_cpu_cores(sample: NodeSample, physical_cores: float, configured_vcores: int | None = None) -> float | None:
    """Primary-tenant CPU in physical cores: node CPU − containers' CPU in cores, ≥ 0.

    None when the node reported no utilization. The NM reports containers' CPU in vcores:
    core usage × (vcores it scales by / physical cores) (fixtures README; scenarios/cpu-burn).
    WHICH vcores it scales by after a node resource update could not be pinned for 3.3.6 from
    the sources: a newer ContainersMonitorImpl.setAllocatedResourcesForContainers switches to
    the updated (current) vcores, an older one keeps the NM's CONFIGURED vcores. We therefore
    convert with V = max(configured vcores, current total vcores):

        containers cores = containers vcores × physical cores / V
        primary cores    = max(0, node CPU − containers cores)

    A larger V can only make the containers' share smaller and the primary's larger, so this
    never under-states the primary (the guard may under-offer capacity, never over-offer it);
    when the two agree (no update yet, or the NM follows updates and the update raised
    capacity) it is exact. `configured_vcores` None (unknown) uses the current total alone.

    A host CPU of exactly 0.0 while memory is in use is UNKNOWN (None), not idle: it is what a
    NodeManager reports before its first monitor sample (seen live: a web node's first heartbeat
    read nodeCPUUsage 0.0 with 6,000 MB in use, then 4 busy cores five seconds later). A real
    host with anything in memory never measures exactly zero CPU.
    With V = 0 (configured unknown and the node cut to 0 vcores) containers cannot be
    separated: all host CPU is attributed to the primary — again the safe side. Between an
    update and the NM's next container sample (≤ 1 heartbeat + one 3 s monitor interval) the
    sample may be scaled by the old vcores: the error is bounded and gone at the next sample.
    """
    if sample.node_cpu_cores is None or physical_cores <= 0:
        return None
    if sample.node_cpu_cores == 0.0 and (sample.node_memory_mb or 0.0) > 0.0:
        return None  # a first-heartbeat zero
    scale_vcores = max(configured_vcores or 0, sample.total.vcores)
    containers = 0.0
    if sample.containers_cpu_vcores is not None and scale_vcores > 0:
        containers = sample.containers_cpu_vcores * physical_cores / scale_vcores
    return max(0.0, sample.node_cpu_cores - containers)


def primary_cpu_cores_array(node_cpu: np.ndarray, containers_vcores: np.ndarray, node_memory: np.ndarray,
                            physical_cores: np.ndarray, configured_vcores: np.ndarray, total_vcores: np.ndarray
                            ) -> np.ndarray:
    """`primary_cpu_cores` for many nodes at once (NaN inputs = not reported, NaN out = unknown);
    the same formula, element by element (tests/property check the two agree)."""
    scale = np.maximum(configured_vcores, total_vcores).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        containers = np.where((scale > 0) & ~np.isnan(containers_vcores), containers_vcores * physical_cores / scale, 0.0)
    out = np.maximum(0.0, node_cpu - containers)
    unknown = np.isnan(node_cpu) | (physical_cores <= 0) | ((node_cpu == 0.0) & (np.nan_to_num(node_memory) > 0.0))
    out[unknown] = np.nan
    return out


def build_tenant_series(
    samples: Iterable[NodeSample],
    node_tenant: Mapping[str, str],
    physical_cores: Mapping[str, float],
    *,
    start: float,
    end: float,
    step_s: float = 120.0,
) -> TenantSeries:
    """Bin node samples into `step_s` slots and average primary utilization per tenant.

    A node's samples within one slot are averaged first, then the tenant's nodes are averaged
    (every node weighs the same: the "average server" of §3.2). Samples of nodes without a
    tenant or without a physical core count, and samples outside [start, end), are ignored.
    """
    if end <= start:
        raise ValueError(f"empty window [{start}, {end})")
    slots = int(np.ceil((end - start) / step_s))
    tenants = tuple(sorted(set(node_tenant.values())))
    tenant_index = {t: i for i, t in enumerate(tenants)}
    nodes: dict[str, int] = {}
    rows: list[tuple[int, int, float]] = []
    for s in samples:
        tenant = node_tenant.get(s.node_id)
        cores = physical_cores.get(s.node_id)
        if tenant is None or not cores or not start <= s.time < end:
            continue
        primary = primary_cpu_cores(s, cores)
        if primary is None:
            continue
        node = nodes.setdefault(s.node_id, len(nodes))
        rows.append((node, int((s.time - start) // step_s), min(1.0, primary / cores)))
    matrix = np.full((len(tenants), slots), np.nan)
    if rows:
        arr = np.array(rows, dtype=np.float64)
        node_ix, slot_ix, util = arr[:, 0].astype(np.intp), arr[:, 1].astype(np.intp), arr[:, 2]
        node_sum = np.zeros((len(nodes), slots))
        node_cnt = np.zeros((len(nodes), slots))
        np.add.at(node_sum, (node_ix, slot_ix), util)
        np.add.at(node_cnt, (node_ix, slot_ix), 1.0)
        node_tenant_ix = np.empty(len(nodes), dtype=np.intp)
        for node_id, ix in nodes.items():
            node_tenant_ix[ix] = tenant_index[node_tenant[node_id]]
        has = node_cnt > 0
        node_mean = np.divide(node_sum, node_cnt, out=np.zeros_like(node_sum), where=has)
        t_sum = np.zeros((len(tenants), slots))
        t_cnt = np.zeros((len(tenants), slots))
        np.add.at(t_sum, node_tenant_ix, node_mean)
        np.add.at(t_cnt, node_tenant_ix, has.astype(np.float64))
        np.divide(t_sum, t_cnt, out=matrix, where=t_cnt > 0)
    return TenantSeries(tenants, matrix, step_s, start)

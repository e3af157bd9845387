"""How a host's cores are shared when more CPU is wanted than it has (scenarios/cpu-contention).

Recorded on a 2-core host with 4 CPU-burning YARN containers and 1, then 2 burners outside
YARN: the host's CPU is split evenly per runnable process (Linux CFS, no cgroup CPU limits):
4, 5, 6 burners got 1/4, 1/5, 1/6 of 2 cores each, and YARN containers had no priority over
outside processes. `containersCPUUsage` is what the containers GOT (their real cores x vcores
/ cores), so it falls under contention (3.8 -> 3.1 -> 2.6 per NM) while each container still
holds its 1-vcore allocation; `nodeCPUUsage` stays at the host's core count.

The model: every process wants up to one core; the host gives each runnable process the
max-min fair share (water-filling): processes wanting less than the fair level get what they
want, the rest get the level. A container or the primary tenant wanting `d` cores is `ceil(d)`
processes (`floor(d)` busy ones and one wanting the rest).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np


def processes(demand: float) -> list[float]:
    """The per-process demands of something wanting `demand` cores."""
    if demand <= 0.0:
        return []
    whole = int(math.floor(demand))
    rest = demand - whole
    return [1.0] * whole + ([rest] if rest > 1e-9 else [])


def fair_level(demands: Iterable[float], cores: float) -> float:
    """The water level L with sum(min(d, L)) = cores; inf when everything fits."""
    d = sorted(demands)
    if sum(d) <= cores:
        return math.inf
    used = 0.0
    for i, x in enumerate(d):
        level = (cores - used) / (len(d) - i)
        if level <= x:
            return level
        used += x
    return math.inf  # unreachable: the sum exceeded `cores`


def granted(demand: float, level: float) -> float:
    """What one container (or tenant) wanting `demand` cores gets at water level `level`."""
    return sum(min(p, level) for p in processes(demand))


def host_usage(host_index: np.ndarray, cores: np.ndarray, primary: np.ndarray, container_cpu: np.ndarray,
               demands_of: Callable[[int], list[float]]) -> tuple[np.ndarray, np.ndarray]:
    """(host CPU in cores, containers' real cores) per node.

    `host_index` maps nodes to hosts (NMs on one host share its `cores`); `primary` and
    `container_cpu` are what each node's primary tenant and containers WANT. Hosts that fit are
    vectorized; for an oversubscribed host `demands_of(node)` lists its containers' demands.
    """
    n_hosts = int(host_index.max()) + 1 if len(host_index) else 0
    wanted = np.bincount(host_index, weights=primary + container_cpu, minlength=n_hosts)
    host_cores = np.zeros(n_hosts)
    np.maximum.at(host_cores, host_index, cores)
    got = container_cpu.astype(float).copy()
    over = np.flatnonzero(wanted > host_cores + 1e-9)
    for h in over.tolist():
        nodes = np.flatnonzero(host_index == h).tolist()
        per_node = {i: demands_of(i) for i in nodes}
        demands = [p for i in nodes for p in processes(float(primary[i]))]
        demands += [p for i in nodes for d in per_node[i] for p in processes(d)]
        level = fair_level(demands, float(host_cores[h]))
        for i in nodes:
            got[i] = sum(granted(d, level) for d in per_node[i])
    host_used = np.minimum(host_cores, wanted)[host_index]
    return host_used, got

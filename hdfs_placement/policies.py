"""The replica placement policies the durability model compares (OSDI'16 §4.2, §6) — pure.

All three share ``SimPolicy``: ``choose(n, writer, existing, state, block_size, rng)`` returns
up to ``n`` distinct servers (indices) that are not in ``existing`` and have ``block_size``
free bytes in ``state``; fewer only when no such server is left. ``refresh(state)`` is called
by the simulator at every placement-table refresh (the NameNode plug-in's cadence).

- ``GridPolicy``: HDFS-H, Algorithm 2 (``algorithm2``) over a grid fitted on the tenants'
  HISTORY (reimage rate and peak CPU of a past period, never the evaluated one).
- ``StockHdfsPolicy``: ``BlockPlacementPolicyDefault`` of Hadoop 3.3.6 as far as durability is
  concerned: 1st replica on the writer if it is a DataNode with space, else a random node;
  2nd on a random node of another rack; 3rd on the 2nd's rack (another node) when the first
  two are on different racks, else on another rack; further replicas random; at most
  ``(replicas - 1) // racks + 2`` per rack. Ignores tenants and busy flags, as stock HDFS
  does. Not modelled: xceiver-load avoidance, storage types, stale nodes.
- ``GreedyPolicy``: the paper's strawman best-first (§4.2: "find primary tenants that reimage
  their disks the least, and from these ... the ones that have lowest CPU utilizations"):
  tenants ranked by (reimage rate, peak CPU), each replica on a random server with space of
  the best-ranked tenant not holding a replica yet, until space runs out. Distinct tenants
  per block is our charitable reading; the paper's critique (good tenants fill up, then
  replicas land on bad ones) applies unchanged. The writer is ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hdfs_placement.algorithm2 import choose_target_indices
from hdfs_placement.grid import Grid, fit_grid
from hdfs_placement.index import LiveState, PlacementIndex
from hdfs_placement.table import build_placement_table
from hdfs_placement.types import DataNode, TenantStats

_RANDOM_TRIES = 32  # random draws before an exhaustive scan for an eligible server


@dataclass(frozen=True)
class SimCluster:
    """Servers of a simulated cluster: tenant, rack, free bytes when empty; tenants' environments."""

    server_tenant: np.ndarray
    server_rack: np.ndarray
    tenant_env: np.ndarray
    free_bytes: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.server_tenant)
        if len(self.server_rack) != n or len(self.free_bytes) != n:
            raise ValueError("SimCluster: per-server arrays differ in length")
        if n and int(np.max(self.server_tenant)) >= len(self.tenant_env):
            raise ValueError("SimCluster: a server's tenant has no environment")

    @property
    def n_servers(self) -> int:
        return len(self.server_tenant)

    @property
    def n_tenants(self) -> int:
        return len(self.tenant_env)

    def server_id(self, s: int) -> str:
        """Synthetic DataNode id; zero-padded so that the table's id order is server order."""
        return f"s{s:07d}:9866"


class SimPolicy(Protocol):
    name: str

    def choose(self, n: int, writer: int, existing: Sequence[int], state: LiveState,
               block_size: int, rng: np.random.Generator) -> list[int]: ...

    def refresh(self, state: LiveState) -> None: ...


class GridPolicy:
    """Algorithm 2 on a grid fitted to tenant history (``reimage_rate``, ``peak_cpu`` per tenant)."""

    name = "grid"

    def __init__(self, cluster: SimCluster, reimage_rate: np.ndarray, peak_cpu: np.ndarray) -> None:
        space = np.bincount(cluster.server_tenant, weights=cluster.free_bytes, minlength=cluster.n_tenants)
        stats = [
            TenantStats(f"t{t}", f"e{cluster.tenant_env[t]}", float(reimage_rate[t]),
                        float(np.clip(peak_cpu[t], 0.0, 1.0)), int(space[t]))
            for t in range(cluster.n_tenants)
        ]
        self.grid: Grid = fit_grid(stats)
        nodes = [
            DataNode(cluster.server_id(s), f"h{s}", f"/r{cluster.server_rack[s]}", f"t{cluster.server_tenant[s]}",
                     f"e{cluster.tenant_env[cluster.server_tenant[s]]}", int(cluster.free_bytes[s]),
                     int(cluster.free_bytes[s]))
            for s in range(cluster.n_servers)
        ]
        table = build_placement_table(nodes, self.grid, version=1, generated_at_ms=0, busy_cpu_threshold=1.0)
        self.index = PlacementIndex(table)

    def choose(self, n, writer, existing, state, block_size, rng):
        chosen, _ = choose_target_indices(self.index, n, block_size=block_size, rng=rng, writer=writer,
                                          existing=existing, state=state)
        return [i for i, _ in chosen]

    def refresh(self, state: LiveState) -> None:
        self.index = self.index.refreshed(state)


def _random_eligible(candidates: Sequence[int] | np.ndarray, ok, rng: np.random.Generator) -> int:
    """A uniformly random element satisfying ``ok``: rejection first, exhaustive scan after."""
    m = len(candidates)
    if m == 0:
        return -1
    for u in rng.random(_RANDOM_TRIES).tolist():
        c = int(candidates[int(u * m)])
        if ok(c):
            return c
    good = [int(c) for c in candidates if ok(int(c))]
    return good[int(rng.random() * len(good))] if good else -1


class StockHdfsPolicy:
    """``BlockPlacementPolicyDefault`` (rack-aware, tenant-blind); see module docstring."""

    name = "stock"

    def __init__(self, cluster: SimCluster) -> None:
        self.rack = cluster.server_rack.astype(np.int64).tolist()
        self.n_racks = len(set(self.rack))
        self.all = np.arange(cluster.n_servers)
        order = np.argsort(cluster.server_rack, kind="stable")
        racks, starts = np.unique(cluster.server_rack[order], return_index=True)
        self.rack_members = {int(r): order[s:e] for r, s, e in zip(racks, starts, [*starts[1:], len(order)])}

    def choose(self, n, writer, existing, state, block_size, rng):
        chosen = [e for e in existing if e >= 0]
        total = len(chosen) + n
        max_per_rack = (total - 1) // max(self.n_racks, 1) + 2
        out: list[int] = []
        for _ in range(n):
            per_rack: dict[int, int] = {}
            for c in chosen:
                per_rack[self.rack[c]] = per_rack.get(self.rack[c], 0) + 1

            def ok(s: int, avoid_rack: int = -1) -> bool:
                return (s not in chosen and state.remaining[s] >= block_size and self.rack[s] != avoid_rack
                        and per_rack.get(self.rack[s], 0) < max_per_rack)

            node = -1
            k = len(chosen)
            if k == 0 and writer >= 0 and ok(writer):
                node = writer
            elif k == 1:
                node = _random_eligible(self.all, lambda s: ok(s, self.rack[chosen[0]]), rng)
            elif k == 2:
                r0, r1 = self.rack[chosen[0]], self.rack[chosen[1]]
                if r0 == r1:
                    node = _random_eligible(self.all, lambda s: ok(s, r0), rng)
                else:
                    node = _random_eligible(self.rack_members[r1], ok, rng)
            if node < 0:  # k == 0 without a usable writer, k >= 3, or the preferred scope was full
                node = _random_eligible(self.all, ok, rng)
            if node < 0:
                break
            chosen.append(node)
            out.append(node)
        return out

    def refresh(self, state: LiveState) -> None:
        return None


class GreedyPolicy:
    """Best-first by (reimage rate, peak CPU) on distinct tenants; see module docstring."""

    name = "greedy"

    def __init__(self, cluster: SimCluster, reimage_rate: np.ndarray, peak_cpu: np.ndarray) -> None:
        self.tenant = cluster.server_tenant.astype(np.int64).tolist()
        self.ranked = np.lexsort((np.arange(cluster.n_tenants), peak_cpu, reimage_rate)).tolist()
        order = np.argsort(cluster.server_tenant, kind="stable")
        bounds = np.searchsorted(cluster.server_tenant[order], np.arange(cluster.n_tenants + 1))
        self.members = [order[bounds[t]:bounds[t + 1]].tolist() for t in range(cluster.n_tenants)]
        self.first = 0  # tenants ranked before it had no space at the last look
        self.full: set[int] = set()  # tenants seen without space since the last refresh

    def choose(self, n, writer, existing, state, block_size, rng):
        taken = {e for e in existing if e >= 0}
        used = {self.tenant[e] for e in taken}
        out: list[int] = []
        pos = self.first
        leading_full = True
        while len(out) < n and pos < len(self.ranked):
            t = self.ranked[pos]
            pos += 1
            if t in self.full:
                if leading_full:
                    self.first = pos
                continue
            if t in used:
                leading_full = False
                continue
            node = _random_eligible(self.members[t], lambda s: s not in taken and state.remaining[s] >= block_size, rng)
            if node < 0:
                if not any(state.remaining[s] >= block_size for s in self.members[t]):
                    self.full.add(t)  # skip it until the next refresh (as the plug-in's cached view would)
                    if leading_full:
                        self.first = pos
                continue
            leading_full = False
            out.append(node)
            taken.add(node)
            used.add(t)
        return out

    def refresh(self, state: LiveState) -> None:
        self.first = 0  # reimages free space: look at the best tenants again
        self.full.clear()

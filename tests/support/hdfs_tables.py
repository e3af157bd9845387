"""Placement tables for the advice tests: nine tenants, one per grid cell, two DataNodes each."""

from __future__ import annotations

from hdfs_placement import DataNode, PlacementTable, TenantStats, build_placement_table, fit_grid

TB = 10**12


def nine_cell_table(version: int, *, busy: frozenset[str] = frozenset(), grid_version: int = 1,
                    generated_at_ms: int = 1_795_431_979_089) -> PlacementTable:
    """Tenant `c<R><C>` sits in row R (reimage band) and column C (peak-CPU band); its DataNodes
    are `10.1.<3R+C>.<k>:9866` (hostname `dn<R><C><k>`, rack `/rack<k>`), k = 0, 1; `busy` names
    DataNode ids whose primary is busy."""
    stats, nodes = [], []
    for r, rate in enumerate((0.05, 0.5, 2.0)):
        for c, peak in enumerate((0.2, 0.5, 0.8)):
            tenant = f"c{r}{c}"
            stats.append(TenantStats(tenant, f"env{r}{c}", rate, peak, 4 * TB))
            for k in range(2):
                dn_id = f"10.1.{3 * r + c}.{k}:9866"
                nodes.append(DataNode(dn_id, f"dn{r}{c}{k}", f"/rack{k}", tenant, f"env{r}{c}", 4 * TB, 2 * TB,
                                      dn_id in busy))
    return build_placement_table(nodes, fit_grid(stats), version=version, generated_at_ms=generated_at_ms,
                                 busy_cpu_threshold=0.9, grid_version=grid_version)

"""Known placement tables for the hdfs_placement tests (no randomness in their shape)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hdfs_placement import DataNode, PlacementIndex, TenantStats, build_placement_table, fit_grid

TB = 10**12
ROW_RATES = (0.05, 0.5, 2.0)  # reimages per server per month of rows 0, 1, 2
COL_PEAKS = (0.2, 0.5, 0.8)  # peak CPU of columns 0, 1, 2


def tenant_name(row: int, col: int) -> str:
    return f"t{row}{col}"


def node_id(row: int, col: int, k: int) -> str:
    return f"10.0.{row * 3 + col}.{k}:9866"


def build_grid9(
    *,
    nodes_per_tenant: int = 3,
    same_environment: bool = False,
    busy: Callable[[int, int, int], bool] = lambda r, c, k: False,
    remaining: Callable[[int, int, int], int] = lambda r, c, k: TB,
    version: int = 7,
) -> PlacementIndex:
    """Nine tenants, one per cell (tenant tRC in row R, column C), equal storage per tenant.

    Node k of tenant tRC is ``10.0.{3R+C}.{k}:9866`` on rack ``/rack{k}``; environment ``eRC``
    (or one shared ``e`` when ``same_environment``).
    """
    nodes = []
    stats = []
    for r in range(3):
        for c in range(3):
            env = "e" if same_environment else f"e{r}{c}"
            stats.append(TenantStats(tenant_name(r, c), env, ROW_RATES[r], COL_PEAKS[c], nodes_per_tenant * TB))
            for k in range(nodes_per_tenant):
                nodes.append(DataNode(node_id(r, c, k), f"h{r}{c}{k}", f"/rack{k}", tenant_name(r, c), env,
                                      2 * TB, remaining(r, c, k), busy(r, c, k)))
    grid = fit_grid(stats)
    table = build_placement_table(nodes, grid, version=version, generated_at_ms=1_795_431_979_089,
                                  busy_cpu_threshold=0.9)
    return PlacementIndex(table)


@pytest.fixture
def grid9() -> PlacementIndex:
    return build_grid9()


@pytest.fixture
def make_grid9() -> Callable[..., PlacementIndex]:
    """``build_grid9`` itself, for tests that need a variant (busy, full, shared environment)."""
    return build_grid9

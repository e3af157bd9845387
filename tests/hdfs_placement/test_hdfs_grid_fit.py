"""Grid fitting (Algorithm 2 lines 4-5): equal storage per cell, degenerate inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hdfs_placement import Cell, DataNode, TenantStats, fit_grid, tenant_available_bytes


def _stats(rng: np.random.Generator, n: int) -> list[TenantStats]:
    return [
        TenantStats(f"t{i}", f"e{i // 3}", float(rng.lognormal(-1.5, 1.2)), float(rng.uniform(0, 1)),
                    int(rng.lognormal(28, 1.0)))
        for i in range(n)
    ]


def test_thousand_tenants_balance_storage_and_order_bands() -> None:
    stats = _stats(np.random.default_rng(3), 1000)
    grid = fit_grid(stats)
    total = sum(s.available_bytes for s in stats)
    assert sum(grid.cell_bytes) == pytest.approx(total)
    assert grid.imbalance < 0.05
    assert set(grid.tenant_cells) == {s.tenant for s in stats}
    by = {s.tenant: s for s in stats}
    # Rows are bands of reimage frequency, columns (within a row) bands of peak CPU.
    for r in range(2):
        upper = max(by[t].reimages_per_server_month for t, c in grid.tenant_cells.items() if c.row == r)
        lower = min(by[t].reimages_per_server_month for t, c in grid.tenant_cells.items() if c.row == r + 1)
        assert upper <= lower
    for r in range(3):
        for col in range(2):
            upper = max(by[t].peak_cpu for t, c in grid.tenant_cells.items() if c == Cell(r, col))
            lower = min(by[t].peak_cpu for t, c in grid.tenant_cells.items() if c == Cell(r, col + 1))
            assert upper <= lower


def test_weights_are_storage_not_tenant_counts() -> None:
    # One tenant holds a third of all storage: it alone forms the least-reimaging row.
    stats = [TenantStats("big", "e", 0.0, 0.5, 300)]
    stats += [TenantStats(f"s{i}", "e", 0.1 + i / 10, (i % 4) / 4, 75) for i in range(8)]
    grid = fit_grid(stats)
    assert [t for t, c in grid.tenant_cells.items() if c.row == 0] == ["big"]
    assert sum(1 for c in grid.tenant_cells.values() if c.row == 1) == 4
    # Cells of row 0: 300 in one cell, 0 in two; the target is 900/9 = 100 per cell.
    assert grid.imbalance == pytest.approx(2.0)


def test_nine_equal_tenants_fill_one_cell_each() -> None:
    stats = [TenantStats(f"t{r}{c}", f"e{r}{c}", [0.05, 0.5, 2.0][r], [0.2, 0.5, 0.8][c], 10)
             for r in range(3) for c in range(3)]
    grid = fit_grid(stats)
    assert grid.imbalance == 0.0
    assert all(grid.cell_of(f"t{r}{c}") == Cell(r, c) for r in range(3) for c in range(3))
    assert grid.cell_tenants == (1,) * 9


def _best_monotone_imbalance(stats: list[TenantStats]) -> float:
    """Brute force: min over all row cuts (reimage order) and per-row column cuts (CPU order)."""
    w = [s.available_bytes for s in stats]
    total = sum(w)
    by_reimage = sorted(range(len(stats)), key=lambda k: (stats[k].reimages_per_server_month, stats[k].peak_cpu, stats[k].tenant))
    n = len(stats)
    cuts = list(itertools.combinations_with_replacement(range(n + 1), 2))

    def row_dev(members: list[int]) -> float:
        order = sorted(members, key=lambda k: (stats[k].peak_cpu, stats[k].reimages_per_server_month, stats[k].tenant))
        m = len(order)
        return min(
            max(abs(sum(w[k] for k in part) - total / 9) for part in (order[:a], order[a:b], order[b:]))
            for a, b in itertools.combinations_with_replacement(range(m + 1), 2)
        )

    best = min(
        max(row_dev(by_reimage[:i]), row_dev(by_reimage[i:j]), row_dev(by_reimage[j:])) for i, j in cuts
    )
    return best / (total / 9)


def test_fit_is_the_exact_optimum_over_monotone_grids() -> None:
    rng = np.random.default_rng(11)
    for _ in range(25):
        n = int(rng.integers(1, 9))
        stats = [TenantStats(f"t{i}", "e", float(rng.integers(0, 4)), float(rng.integers(0, 4)) / 4,
                             int(rng.integers(1, 100))) for i in range(n)]
        assert fit_grid(stats).imbalance == pytest.approx(_best_monotone_imbalance(stats), abs=1e-6)


def test_degenerate_inputs() -> None:
    empty = fit_grid([])
    assert empty.cell_bytes == (0.0,) * 9 and empty.imbalance == 0.0 and not empty.tenant_cells
    one = fit_grid([TenantStats("a", "e", 0.3, 0.3, 5)])
    assert list(one.tenant_cells) == ["a"]
    # Three tenants with different reimage AND CPU bands end on distinct rows and columns.
    three = fit_grid([TenantStats("a", "e", 0.1, 0.9, 10), TenantStats("b", "e", 0.5, 0.1, 10),
                      TenantStats("c", "e", 1.0, 0.5, 10)])
    cells = list(three.tenant_cells.values())
    assert len({c.row for c in cells}) == 3 and len({c.col for c in cells}) == 3
    assert three.cell_of("a").col == 2 and three.cell_of("b").col == 0
    # No storage anywhere: tenants weigh 1 each, so 9 tenants still spread one per cell.
    zero = fit_grid([TenantStats(f"t{i}", "e", i / 10, (i * 7 % 9) / 9, 0) for i in range(9)])
    assert zero.equal_weights and zero.cell_tenants == (1,) * 9
    # A zero-storage tenant among others gets a cell and weighs nothing.
    mixed = fit_grid([TenantStats("z", "e", 0.2, 0.2, 0)] + [TenantStats(f"t{i}", "e", i / 9, i / 9, 10) for i in range(9)])
    assert mixed.cell_of("z") is not None and sum(mixed.cell_bytes) == 90


def test_ties_are_split_deterministically() -> None:
    # 30 tenants that never reimage: keeping ties together would put them all in one row.
    stats = [TenantStats(f"t{i:02d}", "e", 0.0, 0.5, 10) for i in range(30)]
    grid = fit_grid(stats)
    assert grid.imbalance < 0.35
    assert grid == fit_grid(list(reversed(stats)))


def test_classify_new_tenant_by_bounds() -> None:
    stats = [TenantStats(f"t{r}{c}", "e", [0.05, 0.5, 2.0][r], [0.2, 0.5, 0.8][c], 10) for r in range(3) for c in range(3)]
    grid = fit_grid(stats)
    assert grid.row_bounds == pytest.approx((0.275, 1.25))
    assert grid.classify(0.0, 0.0) == Cell(0, 0)
    assert grid.classify(1.0, 0.9) == Cell(1, 2)
    assert grid.classify(9.0, 0.6) == Cell(2, 1)
    assert grid.classify(9.0, 0.7) == Cell(2, 2)


def test_rejects_duplicates_and_bad_stats() -> None:
    with pytest.raises(ValueError):
        fit_grid([TenantStats("a", "e", 0.1, 0.1, 1), TenantStats("a", "e", 0.2, 0.2, 1)])
    with pytest.raises(ValueError):
        TenantStats("a", "e", 0.1, 1.5, 1)
    with pytest.raises(ValueError):
        TenantStats("a", "e", -1.0, 0.5, 1)


def test_tenant_available_bytes_sums_remaining() -> None:
    nodes = [DataNode("1.1.1.1:1", "a", "/r", "t1", "e", 10, 4), DataNode("1.1.1.2:1", "b", "/r", "t1", "e", 10, 5),
             DataNode("1.1.1.3:1", "c", "/r", "t2", "e", 10, 1)]
    assert tenant_available_bytes(nodes) == {"t1": 9, "t2": 1}

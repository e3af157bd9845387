"""A fitted, versioned 3x3 grid and the statistics it was fitted with (OSDI'16 §4.2) — pure.

`fit_grid_model(rows, version, fitted_at, window_s)` runs `hdfs_placement.fit_grid`
(Algorithm 2 lines 4-5: rows = reimage-frequency bands, columns = peak-CPU bands, equal
storage per cell) on the tenants' `TenantStatsRow`s and keeps, per tenant, its cell next to
the numbers that put it there. This is what the store persists (grid version, tenant -> cell,
stats used) and what `grid()` turns back into an `hdfs_placement.Grid` after a restart,
without refitting (so a restart never moves a tenant).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harvester.models.hdfs_tenant_stats import TenantStatsRow
from hdfs_placement import Cell, Grid, fit_grid
from hdfs_placement.types import GRID_COLS, GRID_ROWS


@dataclass(frozen=True, slots=True)
class GridTenant:
    """One tenant of a fitted grid: its cell and the statistics used."""

    row: int
    col: int
    stats: TenantStatsRow


@dataclass(frozen=True)
class GridModel:
    version: int
    fitted_at: float
    window_s: float
    tenants: tuple[GridTenant, ...]
    row_bounds: tuple[float, float]
    col_bounds: tuple[tuple[float, float], ...]
    imbalance: float

    def cells(self) -> dict[str, Cell]:
        return {t.stats.tenant: Cell(t.row, t.col) for t in self.tenants}

    def grid(self) -> Grid:
        """The `hdfs_placement.Grid` of this model (cell storage recomputed from the stats)."""
        cell_bytes = [0.0] * (GRID_ROWS * GRID_COLS)
        cell_tenants = [0] * (GRID_ROWS * GRID_COLS)
        for t in self.tenants:
            i = t.row * GRID_COLS + t.col
            cell_bytes[i] += t.stats.available_bytes
            cell_tenants[i] += 1
        total = float(sum(cell_bytes))
        return Grid(self.row_bounds, self.col_bounds, self.cells(), tuple(cell_bytes), tuple(cell_tenants), total,
                    self.imbalance, equal_weights=total <= 0)

    def summary(self) -> dict[str, object]:
        """Counts for /status and logs: tenants per cell and how many used defaults."""
        per_cell = [0] * (GRID_ROWS * GRID_COLS)
        for t in self.tenants:
            per_cell[t.row * GRID_COLS + t.col] += 1
        return {
            "version": self.version, "fitted_at": self.fitted_at, "tenants": len(self.tenants),
            "imbalance": round(self.imbalance, 4), "tenants_per_cell": per_cell,
            "default_reimage_rate": sum(t.stats.reimage_source != "history" for t in self.tenants),
            "default_peak_cpu": sum(t.stats.cpu_source != "history" for t in self.tenants),
        }


def fit_grid_model(rows: Sequence[TenantStatsRow], *, version: int, fitted_at: float, window_s: float) -> GridModel:
    """Fit the grid on these tenants (Algorithm 2 lines 4-5) and keep the stats beside the cells."""
    grid = fit_grid([r.to_stats() for r in rows])
    tenants = tuple(GridTenant(grid.tenant_cells[r.tenant].row, grid.tenant_cells[r.tenant].col, r) for r in rows)
    return GridModel(version, fitted_at, window_s, tenants, grid.row_bounds, grid.col_bounds, grid.imbalance)

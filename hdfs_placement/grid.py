"""Fit the 3x3 grid of Algorithm 2, lines 4-5 (OSDI'16 §4.2) — pure, numpy.

"Cluster primary tenants wrt reimaging and peak CPU util into 9 classes, each with the same
total space." Reading (the transcription stops before the paper details it):

- Rows are storage-weighted tertiles of the reimage frequency (reimages per server per month,
  §3.3): row 0 holds the tenants that reimage least, row 2 the most.
- Within each row, columns are storage-weighted tertiles of peak CPU utilization (§3.2):
  col 0 = lowest peaks. Doing the columns per row (not globally) is what lets all nine cells
  hold the same total storage; a global column split would only balance rows and columns.
- The weight of a tenant is its total available storage (``TenantStats.available_bytes``),
  not 1: cells must offer equal space, not equal tenant counts.

Tenants are indivisible, so exact equality is generally impossible; the fit minimises the
largest absolute deviation of a cell from total/9 over "monotone" grids (rows contiguous in
reimage order, columns contiguous in peak-CPU order within each row):
- a 3-way split of one sorted list is solved exactly: for a fixed first cut the objective is
  convex in the second, whose optimum is the middle of what is left, so checking the two cut
  points around it for every first cut suffices (O(n log n), vectorised);
- the columns of a row are that exact split with target total/9 (a heavy row spreads its
  excess over its three cells);
- the rows: the 64 best row splits by their own objective (|row - total/3|; every pair of
  cuts up to 12 tenants) are each completed with their column splits, and the one with the
  smallest largest cell deviation wins (exact for up to 12 tenants, tested by brute force).
A few tenants holding a large share of the storage still force some imbalance: a tenant with
10% of the storage cannot sit in a cell meant for 11.1% with anything much else. ``imbalance``
reports what was achieved. Refitting 1,000 tenants takes ~35 ms.

Ties, in order:
1. equal largest deviation -> fewer tenants whose column differs from their *global*
   storage-weighted peak-CPU tertile (columns only; this decides the degenerate cases, e.g. a
   row holding a single tenant puts it in its global CPU band, so a grid of 3 tenants still
   has them on distinct rows and distinct columns when their CPU bands differ);
2. smaller sum of squared deviations;
3. the earliest cut points.
Tenants tied on the key are ordered by the other key and then by tenant id, and may be split
across a boundary: tied tenants are interchangeable for diversity, and keeping them together
could leave one cell with most of the storage (e.g. many tenants that never reimage).

Degenerate inputs (documented behaviour, tested):
- fewer than 9 tenants: some cells stay empty; the splits still minimise the imbalance;
- tenants with zero storage are placed by their keys like any other and weigh nothing;
- all tenants with zero storage: every tenant weighs 1 (equal tenant counts), so the grid
  still separates the tenants by their history;
- no tenants: every cell is empty and ``imbalance`` is 0.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hdfs_placement.types import GRID_ROWS, Cell, DataNode, TenantStats

_TIE_SCALE = 1e9  # deviations equal to 1e-9 of the total count as ties
_ROW_CANDIDATES = 64  # best row splits whose cells are compared
_ALL_PAIRS_MAX = 12  # up to this many tenants, every pair of row cuts is a candidate


@dataclass(frozen=True)
class Grid:
    """A fitted 3x3 grid.

    ``row_bounds[k]`` is the reimage rate between row k and row k+1; ``col_bounds[r][k]`` the
    peak CPU between column k and k+1 of row r (midpoints between neighbouring tenants;
    -inf/+inf when the part on one side is empty). ``cell_bytes`` and ``cell_tenants`` are
    row-major (index = row*3 + col). ``imbalance`` = max over cells of
    |cell bytes - total/9| / (total/9) (0 = perfectly equal).
    """

    row_bounds: tuple[float, float]
    col_bounds: tuple[tuple[float, float], ...]
    tenant_cells: Mapping[str, Cell]
    cell_bytes: tuple[float, ...]
    cell_tenants: tuple[int, ...]
    total_bytes: float
    imbalance: float
    equal_weights: bool = False
    _bounds: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_bounds", (list(self.row_bounds), [list(b) for b in self.col_bounds]))

    def cell_of(self, tenant: str) -> Cell | None:
        """The cell of a tenant seen at fit time, None otherwise."""
        return self.tenant_cells.get(tenant)

    def classify(self, reimages_per_server_month: float, peak_cpu: float) -> Cell:
        """The cell a new tenant with these statistics falls into (value == bound -> lower band)."""
        rows, cols = self._bounds
        r = bisect_left(rows, reimages_per_server_month)
        return Cell(r, bisect_left(cols[r], peak_cpu))


def tenant_available_bytes(datanodes: Iterable[DataNode]) -> dict[str, int]:
    """Sum of the DataNodes' remaining bytes per primary tenant (input of ``TenantStats``)."""
    out: dict[str, int] = {}
    for dn in datanodes:
        out[dn.tenant] = out.get(dn.tenant, 0) + dn.remaining_bytes
    return out


def _split_candidates(
    w: np.ndarray, target: float, total: float, pref: np.ndarray | None, all_pairs: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut points (i, j), 0 <= i <= j <= n, of sorted weights into [:i], [i:j], [j:], best first.

    Returns (i, j, primary) ordered by the objective and tie-breaks of the module docstring;
    ``primary`` is max_k |part_k - target| in units of 1e-9 of ``total``. Without
    ``all_pairs`` only the two second cuts around the optimum of each first cut are listed
    (enough for the exact minimiser); ``pref`` (values 0..2) is the preferred part of each
    position.
    """
    n = len(w)
    cum = np.concatenate(([0.0], np.cumsum(w, dtype=np.float64)))
    if all_pairs:
        ii, jj = (a.ravel() for a in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
        keep = jj >= ii
        ii, jj = ii[keep], jj[keep]
    else:
        i = np.arange(n + 1)
        # The second cut's continuous optimum is the middle of what the first part leaves.
        hi = np.searchsorted(cum, cum + (total - cum) / 2.0, side="left")
        ii = np.concatenate((i, i))
        jj = np.clip(np.concatenate((hi, hi - 1)), ii, n)
    parts = np.stack((cum[ii], cum[jj] - cum[ii], total - cum[jj]))
    dev = np.abs(parts - target)
    scale = _TIE_SCALE / total if total > 0 else 1.0
    primary = np.rint(dev.max(axis=0) * scale)
    tertiary = ((dev / total) ** 2).sum(axis=0) if total > 0 else np.zeros_like(primary)
    if pref is None:
        secondary = np.zeros_like(primary)
    else:
        counts = [np.concatenate(([0], np.cumsum(pref == c))) for c in range(3)]
        secondary = (
            (ii - counts[0][ii])
            + ((jj - ii) - (counts[1][jj] - counts[1][ii]))
            + ((n - jj) - (counts[2][n] - counts[2][jj]))
        ).astype(np.float64)
    # lexsort: the last key is the primary one; full ties fall to the earliest cuts.
    order = np.lexsort((jj, ii, tertiary, secondary, primary))
    return ii[order], jj[order], primary[order]


def _three_way_split(w: np.ndarray, target: float, total: float, pref: np.ndarray | None) -> tuple[int, int]:
    ii, jj, _ = _split_candidates(w, target, total, pref)
    return int(ii[0]), int(jj[0])


def _bounds(keys: np.ndarray, i: int, j: int) -> tuple[float, float]:
    def at(c: int) -> float:
        if c == 0:
            return float("-inf")
        if c == len(keys):
            return float("inf")
        return float((keys[c - 1] + keys[c]) / 2.0)

    return at(i), at(j)


def _labels(n: int, i: int, j: int) -> np.ndarray:
    lab = np.full(n, 2, dtype=np.int64)
    lab[:i] = 0
    lab[i:j] = 1
    return lab


def _columns(weight, peak, reimage, id_rank, global_band, by_reimage, i: int, j: int, total: float):
    """Column splits of every row for row cuts (i, j): (objective, (i, j), [(order, ci, cj)])."""
    row_of_pos = _labels(len(by_reimage), i, j)
    cuts = []
    worst = 0.0
    for r in range(GRID_ROWS):
        members = by_reimage[row_of_pos == r]
        order = members[np.lexsort((id_rank[members], reimage[members], peak[members]))]
        w = weight[order]
        ci, cj = _three_way_split(w, total / 9.0, float(w.sum()), global_band[order])
        parts = np.array([w[:ci].sum(), w[ci:cj].sum(), w[cj:].sum()])
        worst = max(worst, float(np.abs(parts - total / 9.0).max()))
        cuts.append((order, ci, cj))
    return float(np.rint(worst / total * _TIE_SCALE)), (i, j), cuts


def fit_grid(tenants: Sequence[TenantStats]) -> Grid:
    """Cluster primary tenants into the 3x3 grid (Algorithm 2 lines 4-5); see module docstring."""
    names = [t.tenant for t in tenants]
    if len(set(names)) != len(names):
        raise ValueError("fit_grid: duplicate tenant ids")
    n = len(tenants)
    if n == 0:
        inf = float("inf")
        return Grid((inf, inf), ((inf, inf),) * GRID_ROWS, {}, (0.0,) * 9, (0,) * 9, 0.0, 0.0)
    reimage = np.array([t.reimages_per_server_month for t in tenants], dtype=np.float64)
    peak = np.array([t.peak_cpu for t in tenants], dtype=np.float64)
    weight = np.array([t.available_bytes for t in tenants], dtype=np.float64)
    equal_weights = bool(weight.sum() <= 0)
    if equal_weights:
        weight = np.ones(n)
    total = float(weight.sum())
    id_rank = np.argsort(np.argsort(np.array(names, dtype=object)))

    # Global peak-CPU tertile of each tenant: the tie-break preference for its column.
    by_cpu = np.lexsort((id_rank, reimage, peak))
    gi, gj = _three_way_split(weight[by_cpu], total / 3.0, total, None)
    global_band = np.empty(n, dtype=np.int64)
    global_band[by_cpu] = _labels(n, gi, gj)

    by_reimage = np.lexsort((id_rank, peak, reimage))
    ri, rj, _ = _split_candidates(weight[by_reimage], total / 3.0, total, None, all_pairs=n <= _ALL_PAIRS_MAX)
    # Among the best row splits, keep the one whose per-row column splits balance the cells best.
    best = None
    seen: set[tuple[int, int]] = set()
    for i, j in zip(ri.tolist(), rj.tolist()):
        if (i, j) in seen:
            continue
        seen.add((i, j))
        cand = _columns(weight, peak, reimage, id_rank, global_band, by_reimage, i, j, total)
        if best is None or cand[0] < best[0]:
            best = cand
        if len(seen) >= _ROW_CANDIDATES:
            break
    _, (ri0, rj0), col_cuts = best
    row_bounds = _bounds(reimage[by_reimage], ri0, rj0)

    cells: dict[str, Cell] = {}
    cell_bytes = np.zeros(9)
    cell_tenants = np.zeros(9, dtype=np.int64)
    col_bounds: list[tuple[float, float]] = []
    for r in range(GRID_ROWS):
        order, ci, cj = col_cuts[r]
        col_bounds.append(_bounds(peak[order], ci, cj))
        for k, c in zip(order, _labels(len(order), ci, cj)):
            cell = Cell(r, int(c))
            cells[names[k]] = cell
            cell_bytes[cell.index] += weight[k]
            cell_tenants[cell.index] += 1
    ideal = total / 9.0
    imbalance = float(np.abs(cell_bytes - ideal).max() / ideal) if ideal > 0 else 0.0
    return Grid(
        row_bounds=row_bounds,
        col_bounds=tuple(col_bounds),
        tenant_cells=cells,
        cell_bytes=tuple(float(b) for b in cell_bytes),
        cell_tenants=tuple(int(c) for c in cell_tenants),
        total_bytes=total,
        imbalance=imbalance,
        equal_weights=equal_weights,
    )

"""Precomputed lookups over a ``PlacementTable`` for Algorithm 2's hot path (OSDI'16 §4.2).

``chooseTarget`` runs inside every addBlock RPC, so everything that does not depend on the
block is computed once per table version here: integer codes for tenants, environments and
racks; per cell the DataNodes that have space and their cumulative free-space weights (one
``bisect`` picks a node with probability proportional to its free bytes); for each of the 64
(used rows, used columns) masks the list of cells Algorithm 2 lines 9-11 still allow. The
per-call path is then a handful of O(1) picks (``algorithm2``).

Two views of the per-node state exist: the table's own (``remaining``, ``busy`` from the
snapshot) and a ``LiveState`` that a simulator mutates between calls (free space consumed by
writes, reimages wiping disks, primaries turning busy). The pick weights stay those of the
last ``refreshed`` call; hard checks always read the live state, so stale weights can only
cost rejected picks, never a wrong target. The NameNode plug-in gets the same effect by
refreshing its table copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from hdfs_placement.table import PlacementTable
from hdfs_placement.types import GRID_COLS, GRID_ROWS, Cell, Target

N_CELLS = GRID_ROWS * GRID_COLS


@dataclass
class LiveState:
    """Mutable per-node state a simulator owns, indexed like the table: free bytes (int64)
    and busy flags (bool) as numpy arrays, so that bulk updates (a reimage wiping a tenant,
    a tenant turning busy) and the fallback scan stay vectorised."""

    remaining: np.ndarray
    busy: np.ndarray


class PlacementIndex:
    """Immutable lookups over one table. Node ``i`` is ``table.datanodes[i]``."""

    def __init__(self, table: PlacementTable) -> None:
        self.table = table
        self.version = table.version
        entries = table.datanodes
        self.n = len(entries)
        self.ids = [e.datanode_id for e in entries]
        self.row = [e.row for e in entries]
        self.col = [e.col for e in entries]
        self.cell = [e.row * GRID_COLS + e.col if e.row >= 0 else -1 for e in entries]
        self.tenant_names, self.tenant = _codes(e.tenant for e in entries)
        self.env_names, self.env = _codes(e.environment for e in entries)
        self.rack_names, self.rack = _codes(e.rack for e in entries)
        self.n_racks = len(self.rack_names)
        self.n_envs = len(self.env_names)
        # Writers arrive as a DataNode id, a hostname or a bare IP: all resolve to a node.
        self.lookup: dict[str, int] = {}
        for i, e in enumerate(entries):
            self.lookup.setdefault(e.hostname, i)
            self.lookup.setdefault(e.datanode_id.rsplit(":", 1)[0], i)
        for i, e in enumerate(entries):
            self.lookup[e.datanode_id] = i
        self.row_np = np.array([r if r >= 0 else GRID_ROWS for r in self.row], dtype=np.int8)
        self.col_np = np.array([c if c >= 0 else GRID_COLS for c in self.col], dtype=np.int8)
        self.env_np = np.array(self.env, dtype=np.int32)
        self.rack_np = np.array(self.rack, dtype=np.int32)
        self.cell_np = np.array(self.cell, dtype=np.int8)
        self._set_state([e.remaining_bytes for e in entries], [e.busy for e in entries])

    def _set_state(self, remaining: list[int], busy: list[bool]) -> None:
        self.remaining = remaining  # lists: the fastest scalar reads for the per-call path
        self.busy = busy
        self.remaining_np = np.asarray(remaining, dtype=np.int64)
        self.busy_np = np.asarray(busy, dtype=bool)
        # Per cell: nodes with free space and cumulative weights (free bytes) for bisect picks.
        self.cell_nodes: list[list[int]] = []
        self.cell_cum: list[list[float]] = []
        order = np.argsort(self.cell_np, kind="stable")
        sorted_cells = self.cell_np[order]
        for c in range(N_CELLS):
            lo, hi = np.searchsorted(sorted_cells, [c, c + 1])
            members = order[lo:hi]
            members = members[self.remaining_np[members] > 0]
            self.cell_nodes.append(members.tolist())
            self.cell_cum.append(list(accumulate(self.remaining_np[members].astype(np.float64).tolist())))
        nonempty = [c for c in range(N_CELLS) if self.cell_nodes[c]]
        # allowed_cells[(row_mask << 3) | col_mask]: non-empty cells whose row and column are unused.
        self.allowed_cells: list[tuple[int, ...]] = [
            tuple(c for c in nonempty if not (rm >> (c // GRID_COLS)) & 1 and not (cm >> (c % GRID_COLS)) & 1)
            for rm in range(1 << GRID_ROWS)
            for cm in range(1 << GRID_COLS)
        ]

    def refreshed(self, state: LiveState) -> PlacementIndex:
        """A copy whose pick weights and default state are ``state`` (cheap: no table rebuild)."""
        clone = object.__new__(PlacementIndex)
        clone.__dict__.update(self.__dict__)
        clone._set_state(np.asarray(state.remaining).tolist(), np.asarray(state.busy).tolist())
        return clone

    def resolve(self, name: str | None) -> int:
        """Node index of a DataNode id, hostname or IP; -1 when unknown or empty."""
        if not name:
            return -1
        return self.lookup.get(name, -1)

    def cell_of(self, i: int) -> Cell:
        return Cell(self.row[i], self.col[i])

    def target(self, i: int, relaxed: tuple[str, ...] = ()) -> Target:
        return Target(
            self.ids[i], self.row[i], self.col[i], self.tenant_names[self.tenant[i]],
            self.env_names[self.env[i]], self.rack_names[self.rack[i]], relaxed,
        )


def _codes(values) -> tuple[list[str], list[int]]:
    names: dict[str, int] = {}
    codes = [names.setdefault(v, len(names)) for v in values]
    return list(names), codes

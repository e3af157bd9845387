"""HDFS-H: history-based replica placement on a 3x3 grid (OSDI'16 §3.3, §4.2) — pure.

Standalone: depends on numpy/scipy only, never on ``harvester`` (the sidecar serves these
APIs over gRPC/HTTP; the simulator and evaluations call them in-process). No clock reads, no
global random state: times and generators are passed in.

Flow (modules, top to bottom):

- ``types``: DataNode, TenantStats, Cell, Target, ChooseTargetsResult, PlacementStatus, DeleteChoice
- ``grid``: ``fit_grid(tenant_stats) -> Grid`` (Algorithm 2 lines 4-5, equal storage per cell)
- ``table``: ``build_placement_table(...) -> PlacementTable`` (versioned, flat JSON for the plug-in)
- ``index``: ``PlacementIndex(table)`` precomputed lookups; ``LiveState`` for simulations
- ``algorithm2``: ``choose_targets`` / ``choose_target_indices`` (Algorithm 2 lines 6-18)
- ``replica_rules``: ``verify_placement``, ``choose_replicas_to_delete``, ``is_movable``
- ``availability``: busy primaries refuse secondary reads; unavailable-time accounting
- ``reimage``: synthetic reimage events fitted to §3.3's published figures (no public log exists)
- ``policies`` + ``durability``: Grid vs stock HDFS vs greedy under reimages and busy primaries
"""

from __future__ import annotations

from hdfs_placement.algorithm2 import choose_target_indices, choose_targets
from hdfs_placement.availability import (
    PackedBusy,
    block_available,
    busy_matrix,
    is_busy,
    segment_busy_steps,
    unavailable_now,
)
from hdfs_placement.grid import Grid, fit_grid, tenant_available_bytes
from hdfs_placement.index import LiveState, PlacementIndex
from hdfs_placement.replica_rules import choose_replicas_to_delete, is_movable, verify_placement
from hdfs_placement.table import SCHEMA, CellEntry, PlacementTable, TableEntry, build_placement_table
from hdfs_placement.types import (
    RELAXATION_ORDER,
    UNCLASSIFIED,
    Cell,
    ChooseTargetsResult,
    DataNode,
    DeleteChoice,
    PlacementStatus,
    Target,
    TenantStats,
)

__all__ = [
    "RELAXATION_ORDER", "SCHEMA", "UNCLASSIFIED",
    "Cell", "CellEntry", "ChooseTargetsResult", "DataNode", "DeleteChoice", "Grid", "LiveState",
    "PackedBusy", "PlacementIndex", "PlacementStatus", "PlacementTable", "TableEntry", "Target",
    "TenantStats",
    "block_available", "build_placement_table", "busy_matrix", "choose_replicas_to_delete",
    "choose_target_indices", "choose_targets", "fit_grid", "is_busy", "is_movable",
    "segment_busy_steps", "tenant_available_bytes", "unavailable_now", "verify_placement",
]

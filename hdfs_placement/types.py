"""Value types of HDFS-H (OSDI'16 §4.2): datanodes, tenant statistics, grid cells, results.

Every type here is a frozen dataclass: a value that can be shared between threads (the
sidecar's serving threads read a table while the refresher builds the next one).

Vocabulary (paper §3.1): a *primary tenant* is an (environment, machine function) pair owning
servers; an *environment* is a collection of logically related servers (one environment may
hold several primary tenants). HDFS names a DataNode by its transfer address ``ip:port``
(``xferaddr`` in the NameNode's JMX ``LiveNodes``, ../shared/fixtures/hdfs-3.3.6), so that is
the id used everywhere in this package.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Names of the soft constraints Algorithm 2 may relax, in the order it relaxes them
#: (see ``algorithm2``). Free space and exclusion are hard and never relaxed.
RELAX_ENVIRONMENT = "environment"
RELAX_ROW_COL = "row_col"
RELAX_BUSY = "busy"
RELAXATION_ORDER: tuple[str, ...] = (RELAX_ENVIRONMENT, RELAX_ROW_COL, RELAX_BUSY)

#: Grid shape of the paper (§4.2: "9 classes"; Algorithm 2 line 15: forget every 3 replicas).
GRID_ROWS = 3
GRID_COLS = 3


@dataclass(frozen=True, slots=True)
class DataNode:
    """One HDFS DataNode as the placement policy sees it.

    ``id`` is the transfer address ``ip:port`` (JMX ``xferaddr``), ``rack`` the network
    location (JMX ``location``, e.g. ``/default-rack``), ``remaining_bytes`` the DFS remaining
    space (JMX ``remaining``), ``busy`` whether the server's primary tenant is above the busy
    CPU threshold right now (it then refuses secondary accesses, §1 and issue item 4).
    """

    id: str
    hostname: str
    rack: str
    tenant: str
    environment: str
    capacity_bytes: int
    remaining_bytes: int
    busy: bool = False

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("DataNode.id (xfer address ip:port) must not be empty")
        if self.capacity_bytes < 0 or self.remaining_bytes < 0:
            raise ValueError(f"DataNode {self.id}: negative capacity or remaining bytes")


@dataclass(frozen=True, slots=True)
class TenantStats:
    """History of one primary tenant, the inputs of Algorithm 2 lines 1-2.

    ``reimages_per_server_month``: average reimages per server per month (§3.3, Figure 5).
    ``peak_cpu``: peak CPU utilization of the tenant's average server, 0..1 (§3.2, §4.2).
    ``available_bytes``: total storage the tenant's servers offer to HDFS (sum of their
    DataNodes' remaining bytes); the grid makes every cell hold the same total of it.
    """

    tenant: str
    environment: str
    reimages_per_server_month: float
    peak_cpu: float
    available_bytes: int

    def __post_init__(self) -> None:
        if self.reimages_per_server_month < 0:
            raise ValueError(f"tenant {self.tenant}: negative reimage rate")
        if not 0.0 <= self.peak_cpu <= 1.0:
            raise ValueError(f"tenant {self.tenant}: peak_cpu {self.peak_cpu} outside 0..1")
        if self.available_bytes < 0:
            raise ValueError(f"tenant {self.tenant}: negative available_bytes")


@dataclass(frozen=True, slots=True, order=True)
class Cell:
    """A grid cell: ``row`` = reimage-frequency band (0 = least), ``col`` = peak-CPU band."""

    row: int
    col: int

    @property
    def index(self) -> int:
        """Row-major position 0..8."""
        return self.row * GRID_COLS + self.col


#: Cell of a DataNode whose tenant has no statistics (it is not in the fitted grid).
UNCLASSIFIED = Cell(-1, -1)


@dataclass(frozen=True, slots=True)
class Target:
    """One chosen replica location (mirrors proto ``harvester.v1.Target``).

    ``relaxed`` names the constraints given up to place this replica (``RELAXATION_ORDER``
    names), empty when Algorithm 2 was followed exactly.
    """

    datanode_id: str
    row: int
    col: int
    tenant: str
    environment: str
    rack: str
    relaxed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChooseTargetsResult:
    """Answer of ``choose_targets``: new targets only (existing replicas are not repeated).

    Fewer targets than asked means no eligible node was left (never a bad node);
    ``reason`` says why in one line.
    """

    table_version: int
    targets: tuple[Target, ...]
    reason: str

    @property
    def datanode_ids(self) -> tuple[str, ...]:
        return tuple(t.datanode_id for t in self.targets)


@dataclass(frozen=True, slots=True)
class PlacementStatus:
    """Is a replica set grid-diverse? (like HDFS ``BlockPlacementStatus``).

    ``satisfied`` is False when any violation is listed; each violation is a one-line,
    human-readable string starting with its kind (``row``, ``col``, ``environment``,
    ``rack``). ``unknown`` lists replicas on DataNodes missing from the table; they are
    not judged (a stale table must not make the NameNode move healthy blocks).
    """

    satisfied: bool
    violations: tuple[str, ...]
    table_version: int
    unknown: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DeleteChoice:
    """Answer of ``choose_replicas_to_delete``: the replicas to remove and why."""

    delete: tuple[str, ...]
    reason: str
    table_version: int

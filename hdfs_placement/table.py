"""The versioned placement table the NameNode plug-in caches (OSDI'16 §4.2, §5) — pure.

The sidecar builds a table from the NameNode's DataNodes (JMX ``LiveNodes``: ``xferaddr``,
``location``, ``capacity``, ``remaining``; ../shared/fixtures/hdfs-3.3.6) and a fitted
``Grid``; the Java plug-in (``dfs.block.replicator.classname``) keeps a copy and runs
Algorithm 2 locally inside ``chooseTarget`` (no remote call on the addBlock path). The time
of generation is passed in by the caller (its injected Clock); nothing here reads a clock.

JSON form (``PlacementTable.to_json`` / ``from_json``; ``dumps`` gives the canonical text).
Flat on purpose, so that a tiny hand-written Java reader can parse it: one object whose
values are numbers, strings, booleans or arrays of flat objects; no nulls, no nesting deeper
than array-of-objects; strings are ASCII with JSON escapes (\\" \\\\ \\uXXXX); integers are
plain integers (no exponent), ``busy_cpu_threshold`` is a decimal number.

    {
      "schema": "harvester.hdfs-placement.v1",   // string, constant for this layout
      "version": 12,                             // int64, strictly increasing; the HTTP ETag
      "grid_version": 3,                         // int64, the grid refit the cells come from
      "generated_at_ms": 1795431979089,          // int64, epoch milliseconds (caller's clock)
      "busy_cpu_threshold": 0.9,                 // number 0..1: primary CPU above it = busy
      "cells": [                                 // always 9 objects, row-major
        {"row": 0, "col": 0, "available_bytes": 123, "tenants": 4}, ...
      ],
      "datanodes": [                             // one object per DataNode, sorted by id
        {"datanode_id": "10.0.0.1:9866", "hostname": "h1", "rack": "/r1",
         "tenant": "search-idx", "environment": "search", "row": 0, "col": 2,
         "capacity_bytes": 270553174016, "remaining_bytes": 84638343168, "busy": false}, ...
      ]
    }

``grid_version`` (absent in older documents = 0) changes only when the grid is refitted: a
plug-in can tell a refit (cells moved; blocks written earlier may verify as not diverse) from
a busy-flag or free-space update. ``row``/``col`` are -1 for a DataNode whose tenant has no
statistics (not in the grid): such a node is used only as the writer-local first replica or
when row/column diversity is relaxed. Field names match proto ``harvester.v1.PlacementTable`` / ``DataNodeEntry``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hdfs_placement.grid import Grid
from hdfs_placement.types import GRID_COLS, GRID_ROWS, UNCLASSIFIED, DataNode

SCHEMA = "harvester.hdfs-placement.v1"


@dataclass(frozen=True, slots=True)
class CellEntry:
    """One cell of the table: DataNode remaining bytes and tenant count in it."""

    row: int
    col: int
    available_bytes: int
    tenants: int


@dataclass(frozen=True, slots=True)
class TableEntry:
    """One DataNode with its grid cell (proto ``DataNodeEntry``)."""

    datanode_id: str
    hostname: str
    rack: str
    tenant: str
    environment: str
    row: int
    col: int
    capacity_bytes: int
    remaining_bytes: int
    busy: bool


_ENTRY_FIELDS: tuple[tuple[str, type], ...] = (
    ("datanode_id", str), ("hostname", str), ("rack", str), ("tenant", str),
    ("environment", str), ("row", int), ("col", int), ("capacity_bytes", int),
    ("remaining_bytes", int), ("busy", bool),
)
_CELL_FIELDS: tuple[tuple[str, type], ...] = (
    ("row", int), ("col", int), ("available_bytes", int), ("tenants", int),
)


@dataclass(frozen=True)
class PlacementTable:
    """A versioned snapshot: datanode -> cell, tenant, environment, free space, rack, busy."""

    version: int
    generated_at_ms: int
    busy_cpu_threshold: float
    cells: tuple[CellEntry, ...]
    datanodes: tuple[TableEntry, ...]
    grid_version: int = 0

    def __post_init__(self) -> None:
        if self.version < 0 or self.grid_version < 0:
            raise ValueError("PlacementTable.version and grid_version must be >= 0")
        if not 0.0 <= self.busy_cpu_threshold <= 1.0:
            raise ValueError("busy_cpu_threshold must be within 0..1")
        if len(self.cells) != GRID_ROWS * GRID_COLS:
            raise ValueError(f"a table has {GRID_ROWS * GRID_COLS} cells, got {len(self.cells)}")
        ids = [e.datanode_id for e in self.datanodes]
        if len(set(ids)) != len(ids):
            raise ValueError("PlacementTable: duplicate datanode_id")
        for e in self.datanodes:
            classified = 0 <= e.row < GRID_ROWS and 0 <= e.col < GRID_COLS
            if not classified and (e.row, e.col) != (UNCLASSIFIED.row, UNCLASSIFIED.col):
                raise ValueError(f"datanode {e.datanode_id}: cell ({e.row}, {e.col}) outside the grid")
            if e.capacity_bytes < 0 or e.remaining_bytes < 0:
                raise ValueError(f"datanode {e.datanode_id}: negative bytes")

    def to_json(self) -> dict[str, Any]:
        """The flat JSON object of the module docstring."""
        return {
            "schema": SCHEMA,
            "version": self.version,
            "grid_version": self.grid_version,
            "generated_at_ms": self.generated_at_ms,
            "busy_cpu_threshold": float(self.busy_cpu_threshold),
            "cells": [{k: getattr(c, k) for k, _ in _CELL_FIELDS} for c in self.cells],
            "datanodes": [{k: getattr(e, k) for k, _ in _ENTRY_FIELDS} for e in self.datanodes],
        }

    def dumps(self) -> str:
        """Canonical compact ASCII text of ``to_json`` (what the HTTP face serves)."""
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=True, allow_nan=False)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> PlacementTable:
        """Parse and validate ``to_json`` output; ValueError names the bad field."""
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"schema: expected {SCHEMA!r}, got {doc.get('schema')!r}")
        cells = tuple(CellEntry(**_fields(c, _CELL_FIELDS, f"cells[{i}]")) for i, c in enumerate(_array(doc, "cells")))
        nodes = tuple(
            TableEntry(**_fields(d, _ENTRY_FIELDS, f"datanodes[{i}]")) for i, d in enumerate(_array(doc, "datanodes"))
        )
        thr = doc.get("busy_cpu_threshold")
        if isinstance(thr, bool) or not isinstance(thr, (int, float)):
            raise ValueError("busy_cpu_threshold: expected a number")
        return cls(
            version=_int(doc, "version", "version"),
            generated_at_ms=_int(doc, "generated_at_ms", "generated_at_ms"),
            busy_cpu_threshold=float(thr),
            cells=cells,
            datanodes=nodes,
            grid_version=_int(doc, "grid_version", "grid_version") if "grid_version" in doc else 0,
        )


def _array(doc: Mapping[str, Any], key: str) -> list[Any]:
    value = doc.get(key)
    if not isinstance(value, list):
        raise ValueError(f"{key}: expected an array")
    return value


def _int(obj: Mapping[str, Any], key: str, where: str) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: expected an integer, got {value!r}")
    return value


def _fields(obj: Any, spec: tuple[tuple[str, type], ...], where: str) -> dict[str, Any]:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{where}: expected an object")
    out: dict[str, Any] = {}
    for key, typ in spec:
        value = obj.get(key)
        ok = isinstance(value, typ) and (typ is bool or not isinstance(value, bool))
        if not ok:
            raise ValueError(f"{where}.{key}: expected {typ.__name__}, got {value!r}")
        out[key] = value
    return out


def build_placement_table(
    datanodes: Iterable[DataNode],
    grid: Grid,
    *,
    version: int,
    generated_at_ms: int,
    busy_cpu_threshold: float,
    grid_version: int = 0,
) -> PlacementTable:
    """Place every DataNode in its tenant's grid cell; tenants unknown to the grid get (-1, -1).

    ``DataNode.busy`` is taken as given: the caller decides it from the primary tenant's
    current CPU against ``busy_cpu_threshold`` (see ``availability.is_busy``).
    """
    entries = []
    cell_bytes = [0] * (GRID_ROWS * GRID_COLS)
    cell_tenants: list[set[str]] = [set() for _ in range(GRID_ROWS * GRID_COLS)]
    for dn in sorted(datanodes, key=lambda d: d.id):
        cell = grid.cell_of(dn.tenant) or UNCLASSIFIED
        if cell is not UNCLASSIFIED:
            cell_bytes[cell.index] += dn.remaining_bytes
            cell_tenants[cell.index].add(dn.tenant)
        entries.append(
            TableEntry(dn.id, dn.hostname, dn.rack, dn.tenant, dn.environment, cell.row, cell.col,
                       dn.capacity_bytes, dn.remaining_bytes, dn.busy)
        )
    cells = tuple(
        CellEntry(r, c, cell_bytes[r * GRID_COLS + c], len(cell_tenants[r * GRID_COLS + c]))
        for r in range(GRID_ROWS) for c in range(GRID_COLS)
    )
    return PlacementTable(version, generated_at_ms, busy_cpu_threshold, cells, tuple(entries), grid_version)

"""The next placement table version, and when one is worth publishing (OSDI'16 §4.2) — pure.

The NameNode plug-in caches the table and re-reads it only when its version changes (HTTP
ETag long-poll / WatchPlacementTable), so a version must mean something. `next_table`
compares what the sidecar observes now with the PUBLISHED table and decides:

- publish at once (structural): no table yet; a new grid (refit: `grid_version` changed);
  a DataNode joined or left `LiveNodes`; a DataNode's hostname, rack, tenant, environment or
  grid cell changed;
- publish unless the last version is younger than `min_interval_s` (soft): a busy flag
  flipped (with hysteresis, `busy_flags`); a DataNode's free space moved by more than
  `free_space_change` x its capacity since the published table; its capacity changed;
- otherwise keep the published version (free space drifting by less, lastContact, ...).
A deferred soft change is published by the first tick after the interval, since every tick
compares with the published table again. A new version carries all current values.

Busy flags (§1: the primary owns its server; busy servers refuse secondary accesses): a
tenant turns busy when its current primary CPU is above `threshold`
(`hdfs_placement.is_busy`) and turns clear only below `clear_below`, so a tenant hovering at
the threshold does not flood the plug-ins with versions. No CPU evidence = not busy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harvester.telemetry.namenode_model import LiveDataNode
from hdfs_placement import DataNode, Grid, PlacementTable, build_placement_table, is_busy


def busy_flags(tenant_cpu: Mapping[str, float], previous: Mapping[str, bool], *, threshold: float,
               clear_below: float) -> dict[str, bool]:
    """Busy per tenant with hysteresis (module docstring); tenants without CPU are not busy."""
    out: dict[str, bool] = {}
    for tenant, cpu in tenant_cpu.items():
        out[tenant] = is_busy(cpu, threshold) or (previous.get(tenant, False) and cpu >= clear_below)
    return out


def datanodes_of(live: Sequence[LiveDataNode], owners: Mapping[str, tuple[str, str]],
                 busy: Mapping[str, bool]) -> list[DataNode]:
    """`hdfs_placement.DataNode`s from LiveNodes; `owners[datanode id]` = (tenant, environment),
    keyed by the DataNode's transfer address ip:port, as the NameNode (and the plug-in's
    DatanodeResolver) names it: several DataNodes of one host may belong to different tenants.

    A DataNode no tenant rule claims (`unmatched_nodes: ignore`) is still listed (the NameNode
    may use it): as its host's own tenant, which the grid does not know, so its cell is
    (-1, -1). An empty environment is the tenant's own (each tenant its own environment).
    """
    out = []
    for dn in live:
        tenant, env = owners.get(dn.xfer_addr, (dn.hostname, dn.hostname))
        out.append(DataNode(dn.xfer_addr, dn.hostname, dn.rack or "/default-rack", tenant, env or tenant,
                            max(0, dn.capacity_bytes), max(0, dn.remaining_bytes), busy.get(tenant, False)))
    return out


@dataclass(frozen=True, slots=True)
class PublishedVersion:
    """A published table version and why it was published (persisted; /status shows the last)."""

    version: int
    generated_at: float
    grid_version: int
    datanodes: int
    busy: int
    reasons: tuple[str, ...]

    @staticmethod
    def of(table: PlacementTable, reasons: Sequence[str]) -> PublishedVersion:
        return PublishedVersion(table.version, table.generated_at_ms / 1000.0, table.grid_version, len(table.datanodes),
                                sum(e.busy for e in table.datanodes), tuple(reasons))


@dataclass(frozen=True)
class TableDecision:
    """`table` is the new version to publish, or None (keep the published one); `reasons`
    says what changed (or why it waits); `kind` is structural, soft, deferred or unchanged."""

    table: PlacementTable | None
    reasons: tuple[str, ...]
    kind: str = "unchanged"

    @property
    def deferred(self) -> bool:
        return self.kind == "deferred"


def _describe(kind: str, ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit]) + (f" (+{len(ids) - limit} more)" if len(ids) > limit else "")
    return f"{kind}: {shown}"


def next_table(
    published: PlacementTable | None,
    datanodes: Sequence[DataNode],
    grid: Grid,
    grid_version: int,
    *,
    version: int,
    now_ms: int,
    busy_cpu_threshold: float,
    free_space_change: float,
    min_interval_s: float,
) -> TableDecision:
    """Decide whether to publish a new table (module docstring); `version` is the one to use."""
    candidate = build_placement_table(datanodes, grid, version=version, generated_at_ms=now_ms,
                                      busy_cpu_threshold=busy_cpu_threshold, grid_version=grid_version)
    if published is None:
        return TableDecision(candidate, ("first table",), "structural")
    structural: list[str] = []
    soft: list[str] = []
    if published.grid_version != grid_version:
        structural.append(f"grid refit: version {published.grid_version} -> {grid_version}")
    old = {e.datanode_id: e for e in published.datanodes}
    new = {e.datanode_id: e for e in candidate.datanodes}
    joined, left = sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys())
    if joined:
        structural.append(_describe("datanodes joined", joined))
    if left:
        structural.append(_describe("datanodes left", left))
    moved, flipped, space = [], [], []
    for dn_id in sorted(new.keys() & old.keys()):
        a, b = old[dn_id], new[dn_id]
        if (a.hostname, a.rack, a.tenant, a.environment, a.row, a.col) != (b.hostname, b.rack, b.tenant, b.environment, b.row, b.col):
            moved.append(dn_id)
        if a.busy != b.busy:
            flipped.append(f"{dn_id}->{'busy' if b.busy else 'clear'}")
        if a.capacity_bytes != b.capacity_bytes or abs(a.remaining_bytes - b.remaining_bytes) > free_space_change * max(b.capacity_bytes, 1):
            space.append(dn_id)
    if moved:
        structural.append(_describe("datanodes changed host/rack/tenant/cell", moved))
    if flipped:
        soft.append(_describe("busy flags", flipped))
    if space:
        soft.append(_describe(f"free space moved > {free_space_change:g} of capacity", space))
    if structural:
        return TableDecision(candidate, tuple(structural + soft), "structural")
    if not soft:
        return TableDecision(None, ())
    age_s = (now_ms - published.generated_at_ms) / 1000.0
    if age_s < min_interval_s:
        return TableDecision(None, tuple(soft) + (f"waiting: last version {age_s:.0f} s old < {min_interval_s:g} s",),
                             "deferred")
    return TableDecision(candidate, tuple(soft), "soft")

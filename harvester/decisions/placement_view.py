"""The cluster as constraint-aware placement sees it: node attributes and free resources.

`cluster_view(snapshot, settings)` resolves every node's attributes ONCE per telemetry
snapshot (DESIGN.md principle 10: overrides are resolved before decision code sees them):
1. built-ins from the RM's node report: `node_id`, `hostname`, `rack`, `vcores` and
   `memory_mb` (the node's current YARN total), `label` (its YARN node labels, a set);
2. `placement.label_attributes` of each label the node carries;
3. `placement.node_attributes` rules that match the node, in order (later rules win).
Free resources are `total − used` from the same report; only RUNNING nodes can be placed on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harvester.config_placement import PlacementSettings
from harvester.domain import ClusterSnapshot, NodeSample
from harvester.models.constraints import AttrValue, NodeTable


def node_attributes(node: NodeSample, settings: PlacementSettings) -> dict[str, AttrValue]:
    """One node's attributes, in the order of the module docstring."""
    attrs: dict[str, AttrValue] = {
        "node_id": node.node_id, "hostname": node.hostname, "rack": node.rack,
        "vcores": str(node.total.vcores), "memory_mb": str(node.total.memory_mb),
    }
    if node.labels:
        attrs["label"] = frozenset(node.labels)
    for label in node.labels:
        attrs.update(settings.label_attributes.get(label, {}))
    for rule in settings.node_attributes:
        if rule.matches(node.node_id, node.hostname):
            attrs.update(rule.attributes)
    return attrs


@dataclass(frozen=True, eq=False)
class ClusterView:
    """Nodes (in snapshot order) with attributes, totals and free resources as arrays."""

    time: float
    table: NodeTable
    total_mb: np.ndarray
    total_vcores: np.ndarray
    free_mb: np.ndarray
    free_vcores: np.ndarray
    usable: np.ndarray

    @property
    def size(self) -> int:
        return self.table.size

    @property
    def busy_fraction(self) -> np.ndarray:
        """Dominant used share of each node (work the estimator did not see arrive)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            mem = np.where(self.total_mb > 0, 1.0 - self.free_mb / self.total_mb, 1.0)
            cpu = np.where(self.total_vcores > 0, 1.0 - self.free_vcores / self.total_vcores, 1.0)
        return np.clip(np.maximum(mem, cpu), 0.0, 1.0)


def view_of(time: float, node_ids: list[str], attributes: list[dict[str, AttrValue]], total_mb: np.ndarray,
            total_vcores: np.ndarray, free_mb: np.ndarray, free_vcores: np.ndarray, usable: np.ndarray) -> ClusterView:
    """A view from arrays (the simulator and benchmarks build nodes without an RM)."""
    return ClusterView(time, NodeTable(node_ids, attributes), np.asarray(total_mb, dtype=np.int64),
                       np.asarray(total_vcores, dtype=np.int64), np.maximum(np.asarray(free_mb, dtype=np.int64), 0),
                       np.maximum(np.asarray(free_vcores, dtype=np.int64), 0), np.asarray(usable, dtype=bool))


def cluster_view(snapshot: ClusterSnapshot, settings: PlacementSettings) -> ClusterView:
    nodes = snapshot.nodes
    return view_of(
        snapshot.time, [n.node_id for n in nodes], [node_attributes(n, settings) for n in nodes],
        np.array([n.total.memory_mb for n in nodes]), np.array([n.total.vcores for n in nodes]),
        np.array([n.total.memory_mb - n.used.memory_mb for n in nodes]),
        np.array([n.total.vcores - n.used.vcores for n in nodes]),
        np.array([n.state == "RUNNING" for n in nodes], dtype=bool),
    )

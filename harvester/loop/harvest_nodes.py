"""Which nodes are harvested, as what — and the fold of every poll into tenant slots.

`NodeRegistry` turns a snapshot into one `NodeStrategy` per harvested node
(decisions/strategy.resolve_nodes: tenant rules, node sizes) and owns the nodes' BASELINES:
the total each node had when Harvester first saw it RUNNING, recorded (and persisted in the
history store) before the guard can ever update it. After the first capacity update the RM's
`totalResource` is Harvester's own number, so without the baseline a restarted sidecar would
take its own cut for the NodeManager's size. The first record wins; with the `memory` store
baselines die with the process — give `harvesting.node_resources.vcores` / `memory_mb` then.

`FoldTenantSlots` is a telemetry observer: each good poll becomes one contribution per tenant
to its 2-minute slot (models/tenant_slots.py, OSDI'16 §3.2), persisted at once so the refit
reads ≤ 30 days × 720 slots per tenant instead of raw samples. `RecordPrimaryVectors` keeps
the same poll's per-node primary utilization as one vector (the raw samples the reaction-time
reserve is fitted from, models/reaction_margins.py). Both read `NodeRegistry.utilization`,
computed once per snapshot.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.strategy import NodeIdentity, NodeResolver, NodeStrategy
from harvester.domain import ClusterSnapshot, NodeBaseline, Resources
from harvester.history.store import HistoryStore
from harvester.models.tenant_slots import node_utilization, slots_from_utilization


@dataclass(frozen=True, slots=True, eq=False)
class PollUtilization:
    """Each harvested node's u(node) in one poll (models/tenant_slots.py; NaN: does not count),
    in (tenant, node id) order: the stored primary vectors keep a tenant's nodes together, so the
    reserve's fold (models/reaction_margins.py) reads them in tiles without a gather."""

    time: float
    node_ids: tuple[str, ...]
    tenants: tuple[str, ...]
    util: np.ndarray
from harvester.observability.metrics import Metrics


class NodeRegistry:
    """Baselines (persisted) plus the resolver; thread-safe (telemetry writes, guard reads)."""

    def __init__(self, store: HistoryStore, harvesting: HarvestingSettings) -> None:
        self._store = store
        self._h = harvesting
        self._resolver = NodeResolver(harvesting)
        self._last: tuple[ClusterSnapshot, int, tuple[dict[str, NodeStrategy], dict[str, str]]] | None = None
        self._last_keys: list[tuple[str, str, float | None]] = []
        # per node: (hostname, baseline, physical cores) -> its resolution, until one of them changes
        self._per_node: dict[str, tuple[tuple[str, Resources | None, float | None], NodeStrategy | str]] = {}
        self._generation = 0  # bumped when a baseline is added: resolutions of older snapshots are stale
        self._lock = threading.Lock()
        self._baselines: dict[str, NodeBaseline] = store.node_baselines()
        self._util: tuple[ClusterSnapshot, int, PollUtilization] | None = None

    @property
    def harvesting(self) -> HarvestingSettings:
        return self._h

    def baselines(self) -> dict[str, NodeBaseline]:
        with self._lock:
            return dict(self._baselines)

    def observe(self, snapshot: ClusterSnapshot) -> Mapping[str, Any]:
        """Record the baseline of every RUNNING node seen for the first time (telemetry observer)."""
        with self._lock:
            new = [
                NodeBaseline(n.node_id, n.hostname, n.total, snapshot.time)
                for n in snapshot.nodes
                if n.state == "RUNNING" and n.node_id not in self._baselines
            ]
            if new:
                self._store.record_node_baselines(new)
                self._baselines.update((b.node_id, b) for b in new)
                self._generation += 1
        return {"new_nodes": len(new)} if new else {}

    def resolve(self, snapshot: ClusterSnapshot | None) -> tuple[dict[str, NodeStrategy], dict[str, str]]:
        """(strategy per harvested node of the snapshot, why each other node is left out).

        The answer for the last snapshot is kept: the slot fold, the guard and the refit all
        resolve the newest one (callers must not change the returned dicts)."""
        if snapshot is None:
            return {}, {}
        with self._lock:
            if self._last is not None and self._last[0] is snapshot and self._last[1] == self._generation:
                return self._last[2]
            # the same nodes (ids, hostnames, cores) and no new baseline: the same answer, the same dicts
            keys = [(n.node_id, n.hostname, n.physical_cores) for n in snapshot.nodes]
            if self._last is not None and self._last[1] == self._generation and keys == self._last_keys:
                self._last = (snapshot, self._generation, self._last[2])
                return self._last[2]
            self._last_keys = keys
            base, cache = self._baselines, self._per_node
            resolved: dict[str, NodeStrategy] = {}
            left_out: dict[str, str] = {}
            for n in snapshot.nodes:
                b = base.get(n.node_id)
                key = (n.hostname, b.resources if b else None, n.physical_cores)
                hit = cache.get(n.node_id)
                if hit is None or hit[0] != key:
                    hit = cache[n.node_id] = (key, self._resolver.one(NodeIdentity(n.node_id, *key)))
                if isinstance(hit[1], str):
                    left_out[n.node_id] = hit[1]
                else:
                    resolved[n.node_id] = hit[1]
            self._last = (snapshot, self._generation, (resolved, left_out))
            return resolved, left_out


    def utilization(self, snapshot: ClusterSnapshot) -> PollUtilization:
        """Every harvested node's primary utilization in `snapshot` (kept for the last one)."""
        nodes, _ = self.resolve(snapshot)
        with self._lock:
            if self._util is not None and self._util[0] is snapshot and self._util[1] == self._generation:
                return self._util[2]
            generation = self._generation
        samples = sorted((n for n in snapshot.nodes if n.node_id in nodes), key=lambda n: (nodes[n.node_id].tenant, n.node_id))
        util = np.fromiter((node_utilization(n, nodes[n.node_id].physical_cores, nodes[n.node_id].capacity.vcores)
                            for n in samples), np.float64, len(samples))
        out = PollUtilization(snapshot.time, tuple(n.node_id for n in samples),
                              tuple(nodes[n.node_id].tenant for n in samples), util)
        with self._lock:
            self._util = (snapshot, generation, out)
        return out


class RecordPrimaryVectors:
    """Telemetry observer: one poll → one primary vector in the store (the reserve's raw samples)."""

    def __init__(self, registry: NodeRegistry, store: HistoryStore, metrics: Metrics) -> None:
        self._registry = registry
        self._store = store
        self._metrics = metrics

    def __call__(self, snapshot: ClusterSnapshot) -> Mapping[str, Any]:
        u = self._registry.utilization(snapshot)
        if not u.node_ids:
            return {}
        written = self._store.append_primary_vectors([u.time], u.node_ids, u.util.astype(np.float32)[None, :])
        self._metrics.record_rows_written("primary_vectors", written)
        return {"primary_vectors": written}


class FoldTenantSlots:
    """Telemetry observer: one poll → per-tenant slot contributions in the store."""

    def __init__(self, registry: NodeRegistry, store: HistoryStore, metrics: Metrics, *, step_s: float) -> None:
        self._registry = registry
        self._store = store
        self._metrics = metrics
        self._step_s = step_s

    def __call__(self, snapshot: ClusterSnapshot) -> Mapping[str, Any]:
        u = self._registry.utilization(snapshot)
        rows = slots_from_utilization(u.tenants, u.util, time=snapshot.time, step_s=self._step_s)
        written = self._store.add_tenant_slots(rows)
        self._metrics.record_rows_written("tenant_slots", written)
        return {"tenant_slots": written}

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
reads ≤ 30 days × 720 slots per tenant instead of raw samples.
"""

from __future__ import annotations

import threading
from typing import Any, Mapping

from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.strategy import NodeIdentity, NodeResolver, NodeStrategy
from harvester.domain import ClusterSnapshot, NodeBaseline, Resources
from harvester.history.store import HistoryStore
from harvester.models.tenant_slots import aggregate_poll
from harvester.observability.metrics import Metrics


class NodeRegistry:
    """Baselines (persisted) plus the resolver; thread-safe (telemetry writes, guard reads)."""

    def __init__(self, store: HistoryStore, harvesting: HarvestingSettings) -> None:
        self._store = store
        self._h = harvesting
        self._resolver = NodeResolver(harvesting)
        self._last: tuple[ClusterSnapshot, int, tuple[dict[str, NodeStrategy], dict[str, str]]] | None = None
        # per node: (hostname, baseline, physical cores) -> its resolution, until one of them changes
        self._per_node: dict[str, tuple[tuple[str, Resources | None, float | None], NodeStrategy | str]] = {}
        self._generation = 0  # bumped when a baseline is added: resolutions of older snapshots are stale
        self._lock = threading.Lock()
        self._baselines: dict[str, NodeBaseline] = store.node_baselines()

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


class FoldTenantSlots:
    """Telemetry observer: one poll → per-tenant slot contributions in the store."""

    def __init__(self, registry: NodeRegistry, store: HistoryStore, metrics: Metrics, *, step_s: float) -> None:
        self._registry = registry
        self._store = store
        self._metrics = metrics
        self._step_s = step_s

    def __call__(self, snapshot: ClusterSnapshot) -> Mapping[str, Any]:
        nodes, _ = self._registry.resolve(snapshot)
        rows = aggregate_poll(
            snapshot.nodes,
            {i: ns.tenant for i, ns in nodes.items()},
            {i: ns.physical_cores for i, ns in nodes.items()},
            {i: ns.capacity.vcores for i, ns in nodes.items()},
            time=snapshot.time,
            step_s=self._step_s,
        )
        written = self._store.add_tenant_slots(rows)
        self._metrics.record_rows_written("tenant_slots", written)
        return {"tenant_slots": written}

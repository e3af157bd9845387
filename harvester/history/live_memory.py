"""In-memory side of the live-harvesting tables: a mixin of `MemoryHistoryStore` (same contract)."""

from __future__ import annotations

import threading
from typing import Collection, Sequence

from harvester.domain import NodeBaseline
from harvester.models.tenant_slots import TenantSlot


class LiveMemoryMixin:
    _lock: threading.Lock

    def _live_tables(self) -> tuple[dict[tuple[float, str], TenantSlot], dict[str, NodeBaseline]]:
        # created lazily so the mixin needs no cooperation from the store's __init__
        if not hasattr(self, "_slots"):
            self._slots: dict[tuple[float, str], TenantSlot] = {}
            self._baselines: dict[str, NodeBaseline] = {}
        return self._slots, self._baselines

    def add_tenant_slots(self, slots: Sequence[TenantSlot]) -> int:
        with self._lock:
            table = self._live_tables()[0]
            for s in slots:
                key = (s.start, s.tenant)
                old = table.get(key)
                if old is not None:
                    s = TenantSlot(s.tenant, s.start, old.util_sum + s.util_sum, old.polls + s.polls, max(old.nodes, s.nodes))
                table[key] = s
        return len(slots)

    def tenant_slots(
        self, *, since: float, until: float | None = None, tenants: Collection[str] | None = None
    ) -> list[TenantSlot]:
        names = None if tenants is None else set(tenants)
        with self._lock:
            rows = [
                s for (t, tenant), s in self._live_tables()[0].items()
                if t >= since and (until is None or t < until) and (names is None or tenant in names)
            ]
        return sorted(rows, key=lambda s: (s.start, s.tenant))

    def prune_tenant_slots(self, before: float) -> int:
        with self._lock:
            table = self._live_tables()[0]
            old = [k for k in table if k[0] < before]
            for k in old:
                del table[k]
        return len(old)

    def record_node_baselines(self, baselines: Sequence[NodeBaseline]) -> int:
        added = 0
        with self._lock:
            table = self._live_tables()[1]
            for b in baselines:
                if b.node_id not in table:
                    table[b.node_id] = b
                    added += 1
        return added

    def node_baselines(self) -> dict[str, NodeBaseline]:
        with self._lock:
            return dict(sorted(self._live_tables()[1].items()))

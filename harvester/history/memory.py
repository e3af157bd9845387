"""In-memory history store for tests and simulations (same contract as SQLite)."""

from __future__ import annotations

import bisect
import threading
from typing import Collection, Sequence

from harvester.domain import NodeSample
from harvester.history.harvesting_memory import HarvestingMemoryMixin
from harvester.history.hdfs_memory import HdfsMemoryMixin
from harvester.history.live_memory import LiveMemoryMixin
from harvester.history.migrations import LATEST_VERSION


class MemoryHistoryStore(HarvestingMemoryMixin, LiveMemoryMixin, HdfsMemoryMixin):
    """`HistoryStore` in a sorted list (see history/store.py for the contract)."""

    def __init__(self) -> None:
        self._samples: list[tuple[float, str, NodeSample]] = []
        self._lock = threading.Lock()

    def schema_version(self) -> int:
        return LATEST_VERSION

    def append_node_samples(self, samples: Sequence[NodeSample]) -> int:
        with self._lock:
            for s in samples:
                bisect.insort(self._samples, (s.time, s.node_id, s), key=lambda e: (e[0], e[1]))
        return len(samples)

    def node_samples(
        self, *, since: float, until: float | None = None, node_ids: Collection[str] | None = None
    ) -> list[NodeSample]:
        wanted = None if node_ids is None else set(node_ids)
        with self._lock:
            lo = bisect.bisect_left(self._samples, since, key=lambda e: e[0])
            hi = len(self._samples) if until is None else bisect.bisect_left(self._samples, until, key=lambda e: e[0])
            return [s for _, nid, s in self._samples[lo:hi] if wanted is None or nid in wanted]

    def node_ids(self) -> list[str]:
        with self._lock:
            return sorted({nid for _, nid, _ in self._samples})

    def prune(self, before: float) -> dict[str, int]:
        with self._lock:
            cut = bisect.bisect_left(self._samples, before, key=lambda e: e[0])
            del self._samples[:cut]
        return {"node_samples": cut}

    def close(self) -> None:
        pass

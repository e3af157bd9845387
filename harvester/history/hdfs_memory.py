"""In-memory side of the HDFS-H tables: a mixin of `MemoryHistoryStore` (same contract)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Sequence

from harvester.decisions.hdfs_table import PublishedVersion
from harvester.models.hdfs_grid_model import GridModel
from harvester.models.reimage_detection import DataNodeObservation, ReimageEvent

#: Published-version records kept (older ones are dropped on append; both stores).
TABLE_VERSIONS_KEPT = 1000


@dataclass
class _HdfsTables:
    grids: dict[int, GridModel] = field(default_factory=dict)
    reimages: list[ReimageEvent] = field(default_factory=list)
    datanodes: dict[str, DataNodeObservation] = field(default_factory=dict)
    versions: dict[int, PublishedVersion] = field(default_factory=dict)


class HdfsMemoryMixin:
    _lock: threading.Lock

    def _hdfs(self) -> _HdfsTables:
        # created lazily so the mixin needs no cooperation from the store's __init__
        if not hasattr(self, "_hdfs_tables"):
            self._hdfs_tables = _HdfsTables()
        return self._hdfs_tables

    def save_hdfs_grid(self, model: GridModel) -> int:
        with self._lock:
            self._hdfs().grids[model.version] = model
        return 1 + len(model.tenants)

    def hdfs_grid(self, version: int | None = None) -> GridModel | None:
        with self._lock:
            grids = self._hdfs().grids
            if not grids:
                return None
            return grids.get(max(grids) if version is None else version)

    def append_hdfs_reimages(self, events: Sequence[ReimageEvent]) -> int:
        with self._lock:
            self._hdfs().reimages.extend(events)
        return len(events)

    def hdfs_reimages(self, *, since: float, until: float | None = None) -> list[ReimageEvent]:
        with self._lock:
            rows = [e for e in self._hdfs().reimages if e.time >= since and (until is None or e.time < until)]
        return sorted(rows, key=lambda e: (e.time, e.hostname))

    def save_hdfs_datanodes(self, observations: Sequence[DataNodeObservation]) -> int:
        with self._lock:
            table = self._hdfs().datanodes
            for o in observations:
                table[o.name] = o
        return len(observations)

    def hdfs_datanodes(self) -> dict[str, DataNodeObservation]:
        with self._lock:
            return dict(sorted(self._hdfs().datanodes.items()))

    def append_hdfs_table_version(self, record: PublishedVersion) -> int:
        with self._lock:
            versions = self._hdfs().versions
            versions[record.version] = record
            for v in sorted(versions)[:-TABLE_VERSIONS_KEPT]:
                del versions[v]
        return 1

    def hdfs_table_versions(self, *, limit: int = 50) -> list[PublishedVersion]:
        with self._lock:
            versions = self._hdfs().versions
            return [versions[v] for v in sorted(versions, reverse=True)[:limit]]

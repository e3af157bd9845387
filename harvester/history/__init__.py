"""History: what Harvester remembers. `HistoryStore` is the port; SQLite and memory implement it."""

from harvester.history.store import HistoryStore, StoreError

__all__ = ["HistoryStore", "StoreError"]

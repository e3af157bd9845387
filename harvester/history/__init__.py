"""History: what Harvester remembers. `HistoryStore` is the port; SQLite implements it (a file
live, `:memory:` for tests, `store.backend: memory` and the simulator)."""

from harvester.history.store import HistoryStore, StoreError

__all__ = ["HistoryStore", "StoreError"]

"""The published placement table, shared by the refresh loop (writer) and both advice faces.

`PlacementBoard.publish(table)` swaps in a new version together with everything the readers
need precomputed (the `PlacementIndex` for ChooseTargets/Verify/Delete, the canonical JSON
body for HTTP) and wakes every long-poll and watch stream waiting for a change. Readers get
an immutable `Published` snapshot, so a request never sees half of two versions.

Waiting (`wait_for_change`, `close`: advice/change_board.py) is in WALL-CLOCK seconds on
purpose: it is a network protocol timeout (an HTTP long-poll's `wait`, a stream's liveness
check), not control-loop time, so it does not follow the injected `Clock`.
"""

from __future__ import annotations

from dataclasses import dataclass

from harvester.advice.change_board import ChangeBoard
from hdfs_placement import PlacementIndex, PlacementTable


@dataclass(frozen=True)
class Published:
    table: PlacementTable
    index: PlacementIndex
    body: bytes  # PlacementTable.dumps(), UTF-8 (ASCII): what GET /v1/hdfs/placement-table serves

    @property
    def version(self) -> int:
        return self.table.version


class PlacementBoard(ChangeBoard[Published]):
    """Thread-safe holder of the current table version (see the module docstring)."""

    def publish(self, table: PlacementTable) -> Published:
        pub = Published(table, PlacementIndex(table), table.dumps().encode("ascii"))

        def make(cur: Published | None) -> Published:
            if cur is not None and table.version <= cur.version:
                raise ValueError(f"table version {table.version} is not above the published {cur.version}")
            return pub

        return self._swap(make)

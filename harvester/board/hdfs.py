"""HDFS-H's published results (OSDI'16 §4.2): the placement table and the loop's status.

`PlacementBoard.publish(table)` swaps in a new version together with everything the readers
need precomputed (the `PlacementIndex` for ChooseTargets/Verify/Delete, the canonical JSON
body for HTTP) and wakes every long-poll and watch stream waiting for a change; versions only
go up. Readers get an immutable `Published` snapshot, so a request never sees half of two
versions. Waiting and closing: board/change_board.py (wall-clock seconds, on purpose).
The loop also publishes its status (NameNode, grid, last ticks) for /v1/hdfs/status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from harvester.board import Board, Item
from harvester.board.change_board import ChangeBoard
from hdfs_placement import PlacementIndex, PlacementTable


@dataclass(frozen=True)
class Published:
    table: PlacementTable
    index: PlacementIndex
    body: bytes  # PlacementTable.dumps(), UTF-8 (ASCII): what GET /v1/hdfs/placement-table serves

    @property
    def version(self) -> int:
        return self.table.version


PLACEMENT: Item[Published | None] = Item("hdfs.placement", None)
LOOP_STATUS: Item[Mapping[str, Any]] = Item("hdfs.loop_status", {})


class PlacementBoard(ChangeBoard[Published]):
    """The HDFS-H items of one `Board` (a fresh board if none is given)."""

    def __init__(self, board: Board | None = None) -> None:
        super().__init__(board, PLACEMENT)

    def publish(self, table: PlacementTable) -> Published:
        pub = Published(table, PlacementIndex(table), table.dumps().encode("ascii"))

        def make(cur: Published | None) -> Published:
            if cur is not None and table.version <= cur.version:
                raise ValueError(f"table version {table.version} is not above the published {cur.version}")
            return pub

        return self._swap(make)

    def publish_status(self, status: Mapping[str, Any]) -> None:
        self.board.publish(LOOP_STATUS, dict(status))

    def status(self) -> Mapping[str, Any]:
        return self.board.get(LOOP_STATUS)

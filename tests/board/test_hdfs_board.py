"""PlacementBoard: one published version at a time, waiters woken by publish and close."""

from __future__ import annotations

import json
import threading
import time

import pytest

from harvester.board.hdfs import PlacementBoard
from hdfs_placement import PlacementTable
from hdfs_tables import nine_cell_table


def test_publish_precomputes_what_readers_need_and_versions_only_grow() -> None:
    board = PlacementBoard()
    assert board.current() is None
    pub = board.publish(nine_cell_table(3))
    assert board.current() is pub and pub.version == 3 and pub.index.version == 3
    assert PlacementTable.from_json(json.loads(pub.body)) == pub.table
    with pytest.raises(ValueError, match="not above the published 3"):
        board.publish(nine_cell_table(3))


def test_wait_returns_at_once_on_a_different_version_else_after_the_timeout() -> None:
    board = PlacementBoard()
    board.publish(nine_cell_table(1))
    assert board.wait_for_change(None, 5).version == 1
    assert board.wait_for_change(0, 5).version == 1
    t0 = time.monotonic()
    assert board.wait_for_change(1, 0.2).version == 1 and time.monotonic() - t0 >= 0.19


def test_publish_and_close_wake_waiters() -> None:
    board = PlacementBoard()
    got = []
    waiter = threading.Thread(target=lambda: got.append(board.wait_for_change(None, 10)))
    waiter.start()
    time.sleep(0.1)
    board.publish(nine_cell_table(1))
    waiter.join(2)
    assert got[0].version == 1
    waiter = threading.Thread(target=lambda: got.append(board.wait_for_change(1, 10)))
    waiter.start()
    time.sleep(0.1)
    t0 = time.monotonic()
    board.close()
    waiter.join(2)
    assert got[1].version == 1 and time.monotonic() - t0 < 1.0 and board.closed

"""The state board: items with defaults, atomic updates, waiters woken by publish and close, and
features that add items without touching each other (board/__init__.py)."""

from __future__ import annotations

import threading
import time

import pytest

from harvester.board import Board, Item
from harvester.board.harvesting import HARVESTING, HarvestingBoard
from harvester.board.hdfs import PLACEMENT, PlacementBoard
from harvester.decisions.guard import GuardDecision
from harvester.decisions.reserve import ReserveTable
from harvester.models.patterns import Pattern
from harvester.models.utilization_classes import TenantAssignment, TenantClassModel, UtilizationClass
from hdfs_tables import nine_cell_table

PLANS: Item[tuple[str, ...]] = Item("test.plans", ())  # what a new loop (say, Morpheus) would declare


def test_an_item_reads_its_default_until_published_and_names_are_unique() -> None:
    board = Board()
    assert board.get(PLANS) == ()
    assert board.publish(PLANS, ("p1",)) == ("p1",) and board.get(PLANS) == ("p1",)
    with pytest.raises(ValueError, match="two board items are named 'test.plans'"):
        board.get(Item("test.plans", ()))


def test_a_failed_update_leaves_the_value() -> None:
    board = Board()
    board.publish(PLANS, ("a",))

    def bad(v: tuple[str, ...]) -> tuple[str, ...]:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        board.update(PLANS, bad)
    assert board.get(PLANS) == ("a",)


def test_a_new_item_leaves_the_other_features_alone() -> None:
    board = Board()
    h = HarvestingBoard(board)
    model = TenantClassModel(3, 0.0, (UtilizationClass("constant-0", Pattern.CONSTANT, 0.1, 0.2, 1, 1.0),),
                             (TenantAssignment("web", "constant-0", Pattern.CONSTANT, 0.1, 0.2, 0.0, 0.0, 10),))
    h.publish_model(model, ReserveTable(), {"constant-0": 4})
    PlacementBoard(board).publish(nine_cell_table(1))
    board.publish(PLANS, ("nightly",))
    assert board.get(HARVESTING).model is model and board.get(PLACEMENT).version == 1
    assert HarvestingBoard(board).view().class_nodes == {"constant-0": 4}, "a second facade sees the same values"
    h.publish_guard(GuardDecision(5.0, (), ()), classes=())
    assert h.view().model is model and h.view().guard.as_of == 5.0, "one item, fields updated together"


def test_waiters_wake_on_publish_and_on_close() -> None:
    board = Board()
    got: list[tuple[str, ...]] = []
    waiter = threading.Thread(target=lambda: got.append(board.wait(PLANS, lambda v: "x" in v, 10)))
    waiter.start()
    time.sleep(0.05)
    board.publish(PLANS, ("y",))  # not what it waits for: it goes on waiting
    time.sleep(0.05)
    assert waiter.is_alive()
    board.publish(PLANS, ("x",))
    waiter.join(5)
    assert got == [("x",)]
    t0 = time.monotonic()
    assert board.wait(PLANS, lambda v: False, 0.1) == ("x",) and time.monotonic() - t0 >= 0.09
    late = threading.Thread(target=lambda: got.append(board.wait(PLANS, lambda v: False, 10)))
    late.start()
    time.sleep(0.05)
    board.close()
    late.join(5)
    assert not late.is_alive() and board.closed

"""Waiting for a board item from asyncio without a thread per waiter (the admin server's
long-polls: 2,000 open requests cost 2,000 small futures, not 2,000 threads).

`AsyncItemWaiter(board, item)` registers ONE watcher on the state board (board/__init__.py
`Board.watch`). A publication — from any loop thread — schedules, on the event loop, the
resolution of every parked waiter's own future; each waiter then re-reads the item and returns
when its predicate holds, when its timeout (wall-clock seconds, like `Board.wait`) runs out,
or when the board is closed. A change between a waiter's read and its await cannot be missed:
the wake-up runs on the loop, after the waiter has parked. One future per waiter (not one
shared future awaited through `asyncio.wait`): removing each waiter's callback from a shared
future with 2,000 callbacks costs O(n) apiece, O(n²) per publication.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

from harvester.board import Board, Item

T = TypeVar("T")


class AsyncItemWaiter(Generic[T]):
    """`await wait(until, timeout_s)`: the item's value once `until(value)` holds (module docstring)."""

    def __init__(self, board: Board, item: Item[T]) -> None:
        self._board = board
        self._item = item
        self._loop: asyncio.AbstractEventLoop | None = None
        self._parked: set[asyncio.Future[None]] = set()
        self._unwatch: Callable[[], None] | None = None

    def _wake(self) -> None:  # any thread
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._fire)
            except RuntimeError:  # the loop closed in between (shutdown)
                pass

    def _fire(self) -> None:  # on the loop
        parked, self._parked = self._parked, set()
        for future in parked:
            if not future.done():
                future.set_result(None)

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._unwatch is None:
            self._unwatch = self._board.watch(self._item, self._wake)
        if self._loop is not loop:
            self._loop, self._parked = loop, set()

    async def wait(self, until: Callable[[T], bool], timeout_s: float) -> T:
        loop = asyncio.get_running_loop()
        self._bind(loop)
        deadline = loop.time() + max(0.0, timeout_s)
        while True:
            value = self._board.get(self._item)
            if self._board.closed or until(value):
                return value
            if loop.time() >= deadline:
                return value
            future: asyncio.Future[None] = loop.create_future()
            self._parked.add(future)
            timer = loop.call_at(deadline, _resolve, future)
            try:
                await future
            finally:  # also when the request is cancelled (client gone)
                timer.cancel()
                self._parked.discard(future)

    def close(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)

"""advice/async_wait.py: long-polls park on the event loop, one future each, and every one of
them wakes on a publication from another thread; a cancelled or timed-out waiter leaves nothing
behind (issue 15: 2,000 long-polls without a thread each)."""

from __future__ import annotations

import asyncio
import threading

from harvester.advice.async_wait import AsyncItemWaiter
from harvester.board import Board, Item

COUNT: Item[int] = Item("test.async_wait.count", 0)


def test_a_publication_from_another_thread_wakes_every_waiter() -> None:
    board = Board()
    waiter = AsyncItemWaiter(board, COUNT)

    async def run() -> list[int]:
        tasks = [asyncio.create_task(waiter.wait(lambda v: v >= 1, 60.0)) for _ in range(500)]
        while len(waiter._parked) < 500:  # every waiter parked before the publication
            await asyncio.sleep(0)
        threading.Thread(target=board.publish, args=(COUNT, 1)).start()
        got = await asyncio.gather(*tasks)
        assert not waiter._parked
        return got

    assert asyncio.run(run()) == [1] * 500
    waiter.close()


def test_a_waiter_whose_predicate_does_not_hold_parks_again() -> None:
    board = Board()
    waiter = AsyncItemWaiter(board, COUNT)

    async def run() -> int:
        task = asyncio.create_task(waiter.wait(lambda v: v >= 2, 60.0))
        for value in (1, 2):
            while not waiter._parked:
                await asyncio.sleep(0)
            board.publish(COUNT, value)
            await asyncio.sleep(0)
        return await task

    assert asyncio.run(run()) == 2


def test_timeout_and_cancellation_leave_nothing_parked() -> None:
    board = Board()
    waiter = AsyncItemWaiter(board, COUNT)

    async def run() -> int:
        timed_out = await waiter.wait(lambda v: v >= 1, 0.01)
        cancelled = asyncio.create_task(waiter.wait(lambda v: v >= 1, 60.0))
        while not waiter._parked:
            await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        assert not waiter._parked
        return timed_out

    assert asyncio.run(run()) == 0


def test_closing_the_board_wakes_waiters_with_the_current_value() -> None:
    board = Board()
    waiter = AsyncItemWaiter(board, COUNT)

    async def run() -> int:
        task = asyncio.create_task(waiter.wait(lambda v: v >= 1, 60.0))
        while not waiter._parked:
            await asyncio.sleep(0)
        board.close()
        return await task

    assert asyncio.run(run()) == 0

"""The discrete-event engine: time order, equal-time FIFO, the clock, `until`."""

from __future__ import annotations


import pytest

from harvester.clock import SimClock
from harvester.sim.engine import Engine


def test_events_run_in_time_order_and_equal_times_in_push_order() -> None:
    eng = Engine(SimClock(100.0), 100.0)
    seen: list[tuple[float, str]] = []
    eng.on(1, lambda t, p: seen.append((t, p)))
    for t, p in [(105.0, "c"), (101.0, "a"), (105.0, "d"), (103.0, "b")]:
        eng.push(t, 1, p)
    assert eng.run(200.0) == 4
    assert seen == [(101.0, "a"), (103.0, "b"), (105.0, "c"), (105.0, "d")]


def test_handlers_see_the_clock_at_their_event_time_and_can_push_more() -> None:
    clock = SimClock(0.0)
    eng = Engine(clock)
    seen: list[float] = []

    def tick(t: float, n: int) -> None:
        seen.append(clock.now())
        if n < 3:
            eng.push(t + 10.0, 1, n + 1)

    eng.on(1, tick)
    eng.push(5.0, 1, 0)
    eng.run(100.0)
    assert seen == [5.0, 15.0, 25.0, 35.0]
    assert clock.now() == 100.0, "the clock ends at `until`"


def test_until_leaves_later_events_queued_and_the_past_is_refused() -> None:
    eng = Engine(SimClock(0.0))
    ran: list[float] = []
    eng.on(1, lambda t, p: ran.append(t))
    eng.push(10.0, 1)
    eng.push(30.0, 1)
    eng.run(20.0)
    assert ran == [10.0] and len(eng.queue) == 1
    with pytest.raises(ValueError, match="in the past"):
        eng.push(15.0, 1)
    eng.run(40.0)
    assert ran == [10.0, 30.0]


def test_unsynced_handlers_do_not_move_the_clock_until_a_synced_one_runs() -> None:
    clock = SimClock(0.0)
    eng = Engine(clock)
    seen: list[tuple[str, float, float]] = []
    eng.on(1, lambda t, p: seen.append(("fast", t, clock.now())), sync_clock=False)
    eng.on(2, lambda t, p: seen.append(("slow", t, clock.now())))
    eng.push(3.0, 1)
    eng.push(4.0, 2)
    eng.run(10.0)
    assert seen == [("fast", 3.0, 0.0), ("slow", 4.0, 4.0)]


def test_a_handler_exception_propagates() -> None:
    eng = Engine(SimClock(0.0))

    def boom(t: float, p: object) -> None:
        raise RuntimeError("bad handler")

    eng.on(1, boom)
    eng.push(1.0, 1)
    with pytest.raises(RuntimeError, match="bad handler"):
        eng.run(5.0)


def test_duplicate_handler_is_refused() -> None:
    eng = Engine(SimClock(0.0))
    eng.on(1, lambda t, p: None)
    with pytest.raises(ValueError, match="already registered"):
        eng.on(1, lambda t, p: None)


@pytest.mark.parametrize("seed", range(5))
def test_a_stream_runs_its_events_in_the_order_push_many_would(seed: int) -> None:
    import random

    rnd = random.Random(seed)
    items = [(float(rnd.randint(0, 20)), f"s{i}") for i in range(40)]  # unsorted, many equal times
    others = [(float(rnd.randint(0, 20)), f"o{i}") for i in range(30)]

    def trace(stream: bool) -> list[tuple[float, str]]:
        eng = Engine(SimClock(0.0), 0.0)
        seen: list[tuple[float, str]] = []

        def on_item(t: float, p: str) -> None:
            seen.append((t, p))
            if p.endswith("7"):  # a handler pushing at its own time and later
                eng.push(t, 2, p + "+now")
                eng.push(t + 1.0, 2, p + "+1")

        eng.on(1, on_item)
        eng.on(2, lambda t, p: seen.append((t, p)))
        eng.queue.push_many(2, others[:10])
        if stream:
            eng.push_stream(1, items)
        else:
            eng.queue.push_many(1, items)
        eng.queue.push_many(2, others[10:])
        eng.run(100.0)
        return seen

    assert trace(stream=True) == trace(stream=False)
    assert len(trace(stream=True)) == 70 + 2 * sum(1 for _, p in items if p.endswith("7"))

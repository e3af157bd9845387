from __future__ import annotations

import threading
import time

import pytest

from harvester.clock import ScaledClock, SimClock


def test_sim_clock_only_moves_forward() -> None:
    c = SimClock(10.0)
    assert c.advance(5) == 15.0
    c.set(20.0)
    assert c.now() == 20.0 and c.monotonic() == 20.0
    with pytest.raises(ValueError):
        c.advance(-1)
    with pytest.raises(ValueError):
        c.set(19.0)
    stop = threading.Event()
    assert c.wait(stop, 100) is False, "a SimClock never blocks"
    stop.set()
    assert c.wait(stop, 100) is True


def test_scaled_clock_runs_faster_and_waits_scaled() -> None:
    c = ScaledClock(speed=100.0, start=1000.0)
    t0 = c.now()
    started = time.monotonic()
    c.wait(threading.Event(), 5.0)  # 5 s of clock time = 50 ms of wall time
    wall = time.monotonic() - started
    assert 0.04 <= wall < 1.0
    assert c.now() - t0 >= 4.0
    with pytest.raises(ValueError):
        ScaledClock(0)

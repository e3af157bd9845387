"""The emulator's reservation list for a recurring reservation whose allocation crosses the
period end, as a live 3.3.6 RM listed it: offsets folded into the period, the held ranges
[0, e) and [s, period), and the time between them as a zero-resource range."""

from __future__ import annotations

import sys
from pathlib import Path

from emu_cluster import EmuCluster
from rm_client import Interpreter, ReservationDefinition, ReservationRequest, Resource

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from live_cluster import recurring_allocation_problems  # noqa: E402

HOUR, MIN = 3_600_000, 60_000


def test_a_recurring_allocation_that_wraps_the_period_is_listed_folded_with_its_gap() -> None:
    start = 1_795_428_000.0 + 50 * 60  # hh:50 on the emulator's clock
    with EmuCluster(start=start) as c:
        arrival = int(start * 1000) + 5 * MIN  # hh:55: ten minutes of one container, window ten minutes
        rid = c.client.new_reservation()
        c.client.submit_reservation(rid, "root.default", ReservationDefinition(
            arrival_ms=arrival, deadline_ms=arrival + 10 * MIN, name="wraps", interpreter=Interpreter.R_ALL,
            recurrence_period_ms=HOUR, requests=(ReservationRequest(Resource(1024, 1), 1, 1, 10 * MIN),)))
        (info,) = c.client.list_reservations("root.default", rid, include_resource_allocations=True)
        got = [(a.start_ms, a.end_ms, a.resource.memory_mb) for a in info.allocations or ()]
        assert got == [(0, 5 * MIN, 1024), (5 * MIN, 55 * MIN, 0), (55 * MIN, HOUR, 1024)]
        assert recurring_allocation_problems(info, window_ms=10 * MIN) == []
        assert [(w.start_ms % HOUR, w.end_ms - w.start_ms) for w in info.allocation_windows(arrival)] == \
            [(0, 5 * MIN), (55 * MIN, 5 * MIN)]

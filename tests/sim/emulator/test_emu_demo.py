"""The `make run` demo cluster (harvester/sim/emulator/demo.py)."""

from __future__ import annotations

import numpy as np
import requests

from harvester.clock import SimClock
from harvester.sim.emulator.demo import PERIOD_S, build_demo, start_demo
from harvester.sim.emulator.lifecycle import AppState

T0 = 1_795_430_000.0


def _primary_over_an_hour(seed: int) -> tuple[np.ndarray, list[str], int]:
    clock = SimClock(start=T0)
    emu = build_demo(clock, seed=seed)
    rows = []
    for _ in range(60):
        clock.advance(PERIOD_S / 60)
        emu.sync()
        rows.append(emu.model.primary_cpu.copy())
    running = sum(1 for a in emu.apps.values() if a.state is AppState.RUNNING)
    return np.array(rows), list(emu.model.node_ids), running


def test_tenants_follow_periodic_constant_and_bursty_patterns() -> None:
    cpu, ids, running = _primary_over_an_hour(seed=3)
    assert len(ids) == 12 and running >= 2
    by_tenant = {t: cpu[:, [i for i, n in enumerate(ids) if n.startswith(t)]].mean(axis=1)
                 for t in ("web", "search", "db", "etl")}
    assert by_tenant["web"].max() - by_tenant["web"].min() > 3.0   # a full period of the sine
    assert by_tenant["db"].std() < 0.2                               # constant with noise
    assert set(np.round(by_tenant["etl"], 1)) - {0.3}                # bursts above the idle level


def test_the_demo_is_seeded() -> None:
    a, _, _ = _primary_over_an_hour(seed=5)
    b, _, _ = _primary_over_an_hour(seed=5)
    assert np.array_equal(a, b)


def test_start_demo_serves_on_loopback_and_stops() -> None:
    server = start_demo(clock=SimClock(start=T0))
    try:
        nodes = requests.get(server.url + "/ws/v1/cluster/nodes", timeout=10).json()["nodes"]["node"]
        assert server.url.startswith("http://127.0.0.1:") and len(nodes) == 12
    finally:
        server.stop()

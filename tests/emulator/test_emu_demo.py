"""The `make run` demo cluster (harvester/emulator/demo.py) and its synthesized history."""

from __future__ import annotations

import numpy as np
import requests

from harvester.clock import SimClock
from harvester.models.tenant_slots import series_from_slots, slot_start
from harvester.models.utilization_classes import fit
from harvester.emulator.demo import CORES, PERIOD_S, TENANTS, DemoLoad, build_demo, start_demo
from harvester.emulator.lifecycle import AppState

T0 = 1_795_430_000.0


def test_tenants_follow_daily_periodic_constant_and_bursty_patterns() -> None:
    load = DemoLoad(seed=3, start=T0)
    t = T0 + np.arange(0.0, PERIOD_S, 60.0)
    assert PERIOD_S == 86400.0, "a daily period: what the FFT pattern test looks for"
    web = np.asarray(load.web(t))
    assert web.max() - web.min() > 3.0 and abs(load.web(T0) - load.web(T0 + PERIOD_S)) < 1e-9
    assert np.std([load.db_live(x).mean() for x in t[:60]]) < 0.2
    etl = np.asarray(load.etl(t))
    assert etl.max() >= 2.0 and (etl == 0.3).mean() > 0.3, "bursts above an idle level"


def _primary_for_ten_minutes(seed: int) -> tuple[np.ndarray, list[str], int, DemoLoad]:
    clock = SimClock(start=T0)
    load = DemoLoad(seed=seed, start=T0)
    emu = build_demo(clock, seed=seed, load=load)
    rows = []
    for _ in range(10):
        clock.advance(60.0)
        emu.sync()
        rows.append(emu.model.primary_cpu.copy())
    running = sum(1 for a in emu.apps.values() if a.state is AppState.RUNNING)
    return np.array(rows), list(emu.model.node_ids), running, load


def test_the_emulator_follows_the_load_and_is_seeded() -> None:
    cpu, ids, running, load = _primary_for_ten_minutes(seed=5)
    assert len(ids) == 12 and running >= 2
    web = [i for i, n in enumerate(ids) if n.startswith("web-")]
    etl = [i for i, n in enumerate(ids) if n.startswith("etl-")]
    assert np.allclose(cpu[-1, web], load.web(T0 + 600.0)) and np.allclose(cpu[-1, etl], load.etl(T0 + 600.0))
    again, _, _, _ = _primary_for_ten_minutes(seed=5)
    assert np.array_equal(cpu, again)


def test_the_synthesized_history_classifies_the_tenants_as_the_readme_says() -> None:
    load = DemoLoad(seed=0, start=T0)
    slots = load.history_slots(T0)
    end = slot_start(T0, 120.0)
    assert len(slots) == 4 * 30 * 720 and max(s.start for s in slots) == end - 120.0
    series, nodes = series_from_slots(slots, start=end - 30 * 86400.0, end=end)
    assert nodes == {t: 3 for t in TENANTS} and not np.isnan(series.matrix).any()
    assert series.matrix.max() <= 1.0 and series.matrix.min() >= 0.2 / CORES - 1e-9
    model = fit(series, version=1, fitted_at=T0, tenant_weights=nodes)
    patterns = {a.tenant: a.pattern.value for a in model.tenants}
    assert patterns == {"web": "periodic", "search": "periodic", "db": "constant", "etl": "unpredictable"}


def test_start_demo_serves_on_loopback_and_stops() -> None:
    server = start_demo(clock=SimClock(start=T0))
    try:
        nodes = requests.get(server.url + "/ws/v1/cluster/nodes", timeout=10).json()["nodes"]["node"]
        assert server.url.startswith("http://127.0.0.1:") and len(nodes) == 12
    finally:
        server.stop()

"""The real guard as the simulator's controller: youngest containers die on a spike, nothing is
sent on stale telemetry (OSDI'16 §2, §4.1; decisions/guard.py)."""

from __future__ import annotations

import numpy as np
import pytest
from harvest_rig import CORES, DAY, START, flat, job, make  # type: ignore[import-not-found]

from harvester.domain import KillContainer, SetNodeCapacity
from harvester.sim.ports import SimTelemetrySource

HISTORY = 2 * DAY


def spiking(at_sample: int, level: float) -> np.ndarray:
    """Two flat tenants (the guard's reserve is its 5 % floor); tenant 0 rises at `at_sample`."""
    samples = HISTORY + 30
    a, b = flat(0.10, samples), flat(0.10, samples)
    a[HISTORY + at_sample:] = level
    return np.stack([a, b])


def fill(rig) -> None:  # type: ignore[no-untyped-def]
    """Three jobs of different ages fill the 8 nodes (13 vcores each: 16 − 1.6 primary − 0.8 reserve)."""
    rig.submit(job("old", 10.0, tasks=40, duration_s=5000.0))
    rig.submit(job("mid", 60.0, tasks=40, duration_s=5000.0))
    rig.submit(job("new", 110.0, tasks=24, duration_s=5000.0))


@pytest.mark.parametrize("mechanism, cause", [("rm_overcommit", "rm_overcommit"), ("signals", "controller")])
def test_a_primary_spike_kills_the_youngest_containers_first(mechanism: str, cause: str) -> None:
    # 0.16 × 16 = 2.56 cores: 2.56 + 13 batch cores still fit the host (no CPU overflow, so the
    # substrate kills nothing) but eat the reserve: only the guard acts, cutting 13 → 12 vcores
    rig = make(spiking(2, 0.16), HISTORY, policy="guard_only", include_containers=mechanism == "signals",
               guard_params={"harvesting": {"guard": {"kill_mechanism": mechanism}}})
    fill(rig)
    rig.run(200.0)
    assert rig.model.cap_vcores.tolist() == [13] * 8 and rig.model.alloc_vcores.tolist() == [13] * 8
    before = {n: {c.container_id: c.started_at for c in rig.model.containers_on(n)} for n in range(8)}
    rig.run(240.0 + 7.0)  # the sample at 240 s, the guard 6 s later
    assert rig.stats.kills["primary"] == 0
    assert rig.stats.kills[cause] == 4, "one container on each of the spiking tenant's 4 nodes"
    for n in range(8):
        after = {c.container_id for c in rig.model.containers_on(n)}
        killed = set(before[n]) - after
        if n in rig.nodes_of(0):
            assert len(killed) == 1 and rig.model.capacity(n).vcores == 12
            (victim,) = killed
            assert before[n][victim] >= max(before[n][c] for c in after), f"node {n}: the youngest died"
        else:
            assert not killed and rig.model.capacity(n).vcores == 13
    views = {v.node_id: v for v in rig.guard.last.nodes}
    assert "primary 2.56 − reserve 0.80" in views["h00:8041"].reason


def test_no_action_on_stale_telemetry_then_action_once_it_is_fresh() -> None:
    rig = make(spiking(2, 0.50), HISTORY, policy="guard_only", period_s=1e9)  # drive the guard by hand after t=6 s
    fill(rig)
    rig.run(200.0)
    source = SimTelemetrySource(rig.model, include_containers=False)
    old = source.poll(START + 200.0)
    rig.run(241.0)  # the spike is in the model now: 8 + 13 cores > 16
    now = START + 241.0
    stale_after = rig.guard.strategy.stale_after_s
    assert rig.guard.tick(now + stale_after, old, []) == [], "a snapshot older than stale_after_s: no action at all"
    assert all(v.stale and v.outcome == "stale:snapshot" for v in rig.guard.last.nodes)
    acted = rig.guard.tick(now, source.poll(now), [])
    cuts = [a for a in acted if isinstance(a, SetNodeCapacity)]
    assert {a.node_id for a in cuts} == {f"h{i:02d}:8041" for i in range(4)}
    assert all(a.overcommit_timeout_ms == 0 for a in cuts) and not any(isinstance(a, KillContainer) for a in acted)


def test_reserves_are_fitted_margins_of_the_history() -> None:
    rig = make(spiking(2, 0.16), HISTORY, policy="guard_only")
    rig.run(10.0)
    fitted = rig.guard.harvest.fitted
    assert fitted is not None and fitted.margins.quantile == 0.95  # the history up to and with the sample at t=0
    (cls,) = fitted.class_ids
    m = fitted.margins.margin(cls)
    assert m is not None and m.changes == 2 * HISTORY and m.margin == 0.0
    assert fitted.reserves.fraction(cls) == 0.05 and "clamped" in fitted.reserves.reason(cls)
    assert rig.model.cap_vcores.tolist() == [int(CORES - 1.6 - 0.8)] * 8

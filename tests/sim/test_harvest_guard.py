"""The live guard loop on the simulator's ports: youngest containers die on a spike, nothing is
sent on stale telemetry (OSDI'16 §2, §4.1; decisions/guard.py, loop/guard.py)."""

from __future__ import annotations

import numpy as np
import pytest
from harvest_rig import CORES, DAY, START, flat, job, make  # type: ignore[import-not-found]

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
               loop_params={"harvesting": {"guard": {"kill_mechanism": mechanism}}})
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
    views = {v.node_id: v for v in rig.board.view().guard.nodes}
    assert "primary 2.56 − reserve 0.80" in views["h00:8041"].reason


def test_no_action_on_stale_telemetry_then_action_once_it_is_fresh() -> None:
    rig = make(spiking(2, 0.50), HISTORY, policy="guard_only", period_s=1e9)  # tick the loops by hand after t=6 s
    rig.run(7.0)
    rig.plane.telemetry.tick(START + 7.0)  # a second fresh sample: the guard may raise capacity
    rig.plane.guard.tick(START + 7.0)
    fill(rig)
    rig.run(241.0)  # the spike is in the model now: 8 + 13 cores > 16; the last poll was at t=7 s
    plane, now = rig.plane, START + 241.0
    before = rig.stats.controller_actions
    summary = plane.guard.tick(now)
    assert summary.summary["actions"] == 0 and rig.stats.controller_actions == before, \
        "a snapshot older than stale_after_s: no action at all"
    assert all(v.stale and v.outcome == "stale:snapshot" for v in rig.board.view().guard.nodes)
    plane.telemetry.tick(now)
    plane.guard.tick(now)
    acted = [e for e in rig.board.guard_status().recent if e.at == now]
    assert {e.target for e in acted if e.kind == "set_capacity"} == {f"h{i:02d}:8041" for i in range(4)}
    assert all("overCommitTimeout=0 ms" in e.detail and e.fate == "sent" for e in acted)
    assert not any(e.kind == "kill" for e in acted)


def test_reserves_are_fitted_margins_of_the_history() -> None:
    rig = make(spiking(2, 0.16), HISTORY, policy="guard_only")
    rig.run(130.0)  # two guard ticks (6 s, 126 s): a node's first sample raises nothing
    view = rig.board.view()
    assert view.model is not None
    margins = rig.store.margin_model(view.model.version)  # the refit loop persisted what it published
    assert margins is not None and margins.quantile == 0.95
    (cls,) = [c.class_id for c in view.model.classes]
    m = margins.margin(cls)
    # the history before t=0 only (the refit window ends at the slot still filling): 2 tenants × (HISTORY − 1)
    assert m is not None and m.changes == 2 * (HISTORY - 1) and m.margin == 0.0
    assert view.reserves.fraction(cls) == 0.05 and "clamped" in view.reserves.reason(cls)
    assert rig.model.cap_vcores.tolist() == [int(CORES - 1.6 - 0.8)] * 8

"""Classes as Algorithm 1 sees them now: model tags joined with the current snapshot."""

from __future__ import annotations

import pytest

from harvester.decisions.class_view import class_states, nodes_per_class
from harvester.decisions.guard import evaluate
from harvester.decisions.reserve import ReserveTable
from harvester.domain import Resources
from harvester.models.patterns import Pattern
from harvester.models.utilization_classes import TenantAssignment, TenantClassModel, UtilizationClass

from harvesting_builders import NOW, context, node_strategy, sample, snapshot

MODEL = TenantClassModel(
    1, 0.0,
    (UtilizationClass("periodic-0", Pattern.PERIODIC, 0.3, 0.6, 1, 1.0), UtilizationClass("constant-0", Pattern.CONSTANT, 0.2, 0.25, 1, 1.0),
     UtilizationClass("unpredictable-0", Pattern.UNPREDICTABLE, 0.5, 0.9, 1, 1.0)),
    (TenantAssignment("web", "periodic-0", Pattern.PERIODIC, 0.3, 0.6, 0.9, 0.1, 100),
     TenantAssignment("db", "constant-0", Pattern.CONSTANT, 0.2, 0.25, 0.0, 0.01, 100),
     TenantAssignment("test", "unpredictable-0", Pattern.UNPREDICTABLE, 0.5, 0.9, 0.0, 0.2, 100)),
)
NODES = {n.node_id: n for n in [node_strategy("w1:1", tenant="web"), node_strategy("w2:1", tenant="web"),
                                node_strategy("d1:1", tenant="db"), node_strategy("x1:1", tenant="nobody")]}
RESERVES = ReserveTable({"periodic-0": 0.1, "constant-0": 0.05}, {"periodic-0": "r", "constant-0": "r"}, 0.2)


def test_current_utilization_capacity_and_allocation_per_class() -> None:
    snap = snapshot([
        sample("w1:1", node_cpu=4.0, used=Resources(4096, 2)),
        sample("w2:1", node_cpu=8.0, used=Resources(8192, 4)),
        sample("d1:1", node_cpu=None, used=Resources(1024, 1)),
    ])
    states = {s.class_id: s for s in class_states(MODEL, RESERVES, NODES, snap, now=NOW, stale_after_s=30)}
    assert set(states) == {"periodic-0", "constant-0"}, "classes without nodes are left out"
    p = states["periodic-0"]
    assert p.current == pytest.approx((4 / 16 + 8 / 16) / 2)
    assert p.capacity == Resources(2 * 65536, 32) and p.allocated == Resources(12288, 6) and p.nodes == 2
    assert p.reserve_fraction == 0.1 and p.memory_free_mb is None
    assert states["constant-0"].current == 0.25, "no fresh utilization: fall back to the class's peak"
    assert nodes_per_class(MODEL, NODES) == {"periodic-0": 2, "constant-0": 1}


def test_stale_snapshot_falls_back_to_peak_and_guard_gives_free_memory() -> None:
    old = snapshot([sample("w1:1", node_cpu=1.0)], t=NOW - 100)
    states = class_states(MODEL, RESERVES, NODES, old, now=NOW, stale_after_s=30)
    assert all(s.current == s.peak for s in states) and all(s.allocated == Resources(0, 0) for s in states)
    snap = snapshot([sample("w1:1", node_cpu=2.0, used=Resources(4096, 2))])
    guard = evaluate(context(snap, [NODES["w1:1"]]))
    [p] = [s for s in class_states(MODEL, RESERVES, NODES, snap, now=NOW, stale_after_s=30, guard=guard)
           if s.class_id == "periodic-0"]
    assert p.memory_free_mb == 65536 - 4096

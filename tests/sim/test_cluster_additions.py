"""The cluster model's simulator fast paths behave like the recorded per-node operations."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.domain import Resources
from harvester.sim.cluster import ClusterModel, EndCause


def model(n: int = 3) -> ClusterModel:
    m = ClusterModel()
    m.add_nodes([f"h{i}:1" for i in range(n)], Resources(8192, 8), physical_cores=8)
    return m


def test_allocate_batch_matches_allocate() -> None:
    a, b = model(), model()
    nodes = [0, 2, 2, 1]
    for i, n in enumerate(nodes):
        a.allocate(f"c{i}", "app", n, Resources(1024, 2), 5.0, cpu_cores=1.5, force=True)
    got = b.allocate_batch([f"c{i}" for i in range(4)], "app", nodes, Resources(1024, 2), 5.0, cpu_cores=1.5)
    assert [c.node for c in got] == nodes and [c.seq for c in got] == [1, 2, 3, 4]
    for col in ("alloc_mem", "alloc_vcores", "container_cpu"):
        assert np.array_equal(getattr(a, col), getattr(b, col)), col
    assert b.container_counts().tolist() == [1, 1, 2]
    assert [c.container_id for c in b.youngest_first(2)] == [c.container_id for c in a.youngest_first(2)]
    with pytest.raises(ValueError, match="duplicate container c1"):
        b.allocate_batch(["x", "c1"], "app", [0, 0], Resources(1, 1), 6.0)
    assert "x" not in b.containers, "a failed batch changes nothing"


def test_set_capacities_is_set_capacity_for_many_nodes() -> None:
    a, b = model(), model()
    for m in (a, b):
        for i in range(5):
            m.allocate(f"c{i}", "app", i % 2, Resources(1024, 1), float(i))
    a.set_capacity(0, Resources(2048, 1), 10.0, overcommit_timeout_ms=500)
    a.set_capacity(1, Resources(8192, 8), 10.0, overcommit_timeout_ms=500)
    a.set_capacity(2, Resources(0, 0), 10.0, overcommit_timeout_ms=500)
    b.set_capacities(np.arange(3), np.array([1, 8, 0]), np.array([2048, 8192, 0]), 10.0, overcommit_timeout_ms=500)
    assert [a.capacity(i) for i in range(3)] == [b.capacity(i) for i in range(3)]
    assert a.next_due() == b.next_due() == pytest.approx(10.5)
    ka, kb = a.advance(11.0), b.advance(11.0)
    assert [c.container_id for c in ka] == [c.container_id for c in kb] == ["c4", "c2"]
    with pytest.raises(ValueError, match="negative"):
        b.set_capacities(np.arange(1), np.array([-1]), np.array([1]), 12.0)


def test_bulk_update_supersedes_a_pending_deadline() -> None:
    m = model(1)
    m.allocate("c", "app", 0, Resources(4096, 4), 0.0)
    m.set_capacity(0, Resources(1024, 1), 1.0, overcommit_timeout_ms=10_000)
    m.set_capacities(np.arange(1), np.array([8]), np.array([8192]), 2.0)
    assert m.next_due() is None and m.advance(100.0) == []


def test_restore_node_brings_a_removed_node_back_empty() -> None:
    m = model(1)
    m.allocate("c", "app", 0, Resources(1024, 1), 0.0)
    m.set_capacity(0, Resources(2048, 2), 0.0)
    assert [c.end_cause for c in m.remove_node(0, 5.0)] == [EndCause.NODE_LOST]
    m.restore_node(0, 10.0)
    assert m.running[0] and m.capacity(0) == Resources(8192, 8) and m.containers_on(0) == []
    with pytest.raises(ValueError, match="already running"):
        m.restore_node(0, 11.0)

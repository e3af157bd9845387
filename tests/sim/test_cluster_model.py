"""The shared cluster model against the recorded Hadoop 3.3.6 dynamics (scenarios/overcommit-timeout)."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.domain import Resources
from harvester.sim.cluster import ClusterModel, EndCause

N1 = "localhost:45454"


def recorded_cluster() -> tuple[ClusterModel, int, list[str]]:
    """AM + 4 workers of 1024 MB / 1 vcore on an 8192 MB / 8 vcore node (2 physical cores)."""
    m = ClusterModel()
    m.add_nodes([N1, "localhost:45455"], Resources(8192, 8), physical_cores=2)
    n = m.index(N1)
    ids = [f"container_1_0001_01_{i:06d}" for i in range(1, 6)]
    for i, cid in enumerate(ids):
        assert m.allocate(cid, "application_1_0001", n, Resources(1024, 1), now=17.7, is_am=(i == 0)) is not None
    return m, n, ids


def test_timeout_minus_one_kills_nothing_and_available_goes_negative() -> None:
    m, n, ids = recorded_cluster()
    m.set_capacity(n, Resources(3072, 3), now=22.7, overcommit_timeout_ms=-1)
    assert m.advance(1000.0) == []
    assert m.available(n) == Resources(-2048, -2)
    assert len(m.containers_on(n)) == 5


def test_timeout_zero_kills_the_youngest_workers_exactly_enough_never_the_am() -> None:
    m, n, ids = recorded_cluster()
    m.set_capacity(n, Resources(3072, 3), now=90.8, overcommit_timeout_ms=0)
    killed = m.advance(90.8)
    assert [c.container_id for c in killed] == [ids[4], ids[3]]
    assert all(c.end_cause is EndCause.RM_OVERCOMMIT for c in killed)
    assert m.allocated(n) == Resources(3072, 3) and m.available(n) == Resources(0, 0)
    assert {c.container_id for c in m.containers_on(n)} == set(ids[:3])


def test_positive_timeout_is_milliseconds_and_waits() -> None:
    m, n, _ = recorded_cluster()
    m.set_capacity(n, Resources(3072, 3), now=170.8, overcommit_timeout_ms=20_000)
    assert m.next_due() == pytest.approx(190.8)
    assert m.advance(190.7) == []
    assert len(m.advance(190.8)) == 2


def test_vcores_only_cut_kills_too() -> None:
    m, n, ids = recorded_cluster()
    m.release(ids[4], 100.0, EndCause.RM_OVERCOMMIT)
    m.release(ids[3], 100.0, EndCause.RM_OVERCOMMIT)
    m.set_capacity(n, Resources(8192, 2), now=260.8, overcommit_timeout_ms=0)
    assert [c.container_id for c in m.advance(260.8)] == [ids[2]]
    assert m.available(n) == Resources(6144, 0)


def test_a_newer_update_supersedes_a_pending_deadline() -> None:
    m, n, _ = recorded_cluster()
    m.set_capacity(n, Resources(3072, 3), now=0.0, overcommit_timeout_ms=20_000)
    m.set_capacity(n, Resources(8192, 8), now=5.0, overcommit_timeout_ms=-1)
    assert m.next_due() is None
    assert m.advance(100.0) == []


def test_only_ams_over_the_limit_stay_over() -> None:
    m = ClusterModel()
    m.add_nodes(["h:1"], Resources(4096, 4), physical_cores=4)
    m.allocate("am", "app", 0, Resources(2048, 2), 0.0, is_am=True)
    m.set_capacity(0, Resources(1024, 1), now=1.0, overcommit_timeout_ms=0)
    assert m.advance(1.0) == []
    assert m.available(0) == Resources(-1024, -1)


def test_allocation_respects_capacity_unless_forced() -> None:
    m = ClusterModel()
    m.add_nodes(["h:1"], Resources(2048, 2), physical_cores=2)
    assert m.allocate("a", "app", 0, Resources(2048, 2), 0.0) is not None
    assert m.allocate("b", "app", 0, Resources(1, 1), 0.0) is None
    assert m.allocate("b", "app", 0, Resources(1, 1), 0.0, force=True) is not None
    with pytest.raises(ValueError, match="duplicate container"):
        m.allocate("a", "app", 0, Resources(1, 1), 0.0, force=True)


def test_release_frees_and_is_idempotent() -> None:
    m, n, ids = recorded_cluster()
    c = m.release(ids[1], 50.0, EndCause.SIGNAL_GRACEFUL)
    again = m.release(ids[1], 60.0, EndCause.SIGNAL_FORCEFUL)
    assert again is c and c.ended_at == 50.0 and c.end_cause is EndCause.SIGNAL_GRACEFUL
    assert m.allocated(n) == Resources(4096, 4)


def test_utilization_units_match_the_nm() -> None:
    """scenarios/cpu-burn: one busy container on an 8-vcore, 2-core host reads ~3.8 vcores."""
    m = ClusterModel()
    m.add_nodes(["h:1"], Resources(8192, 8), physical_cores=2)
    m.allocate("c", "app", 0, Resources(1024, 1), 0.0, cpu_cores=0.95)
    m.set_primary_usage(np.array([0.8]), np.array([1500.0]))
    u = m.utilization(0)
    assert u.containers_cpu_vcores == pytest.approx(3.8)
    assert u.node_cpu_cores == pytest.approx(1.75)
    m.set_primary_usage(5.0)
    assert m.utilization(0).node_cpu_cores == 2.0, "the host cannot use more than its cores"


def test_negative_capacity_and_bad_timeouts_are_refused() -> None:
    m, n, _ = recorded_cluster()
    with pytest.raises(ValueError, match="negative capacity"):
        m.set_capacity(n, Resources(-1, 2), now=0.0)
    with pytest.raises(ValueError, match="overCommitTimeout"):
        m.set_capacity(n, Resources(1, 2), now=0.0, overcommit_timeout_ms=-5)


def test_removed_node_ends_its_containers_and_takes_no_more() -> None:
    m, n, ids = recorded_cluster()
    ended = m.remove_node(n, 10.0)
    assert len(ended) == 5 and all(c.end_cause is EndCause.NODE_LOST for c in ended)
    assert not m.fits(n, 1, 1)
    assert m.free_vcores()[n] == 0

"""The CapacityScheduler arithmetic (capacity.py) and the host CPU sharing (contention.py),
as tables taken from the recordings, plus invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harvester.domain import Resources as R
from harvester.emulator import capacity as cap
from harvester.emulator.contention import fair_level, granted, processes

CLUSTER = R(16384, 16)
MIN = R(1024, 1)


def _containers_until_refused(eff_min: R, eff_max: R) -> int:
    """Containers of 1024 MB one user gets in a queue (one per heartbeat, AM first)."""
    used = R(0, 0)
    n = 0
    while n < 100:
        limit = cap.user_limit(eff_min=eff_min, minimum=MIN, queue_used=used, active_used=used, active_users=1,
                               user_limit_pct=100.0, user_limit_factor=1.0, cluster=CLUSTER)
        if not (cap.may_assign_to_user(used, limit, CLUSTER) and cap.fits_queue(used, MIN, eff_max, CLUSTER)):
            return n
        used, n = used + MIN, n + 1
    return n


@pytest.mark.parametrize("eff_min,eff_max,containers,where", [
    (R(2048, 2), CLUSTER, 3, "recurring-reservation: 3 x 1024 MB in a 2048 MB reservation"),
    (R(4096, 4), CLUSTER, 5, "recurring-reservation: 5 after nudge 2"),
    (R(6144, 6), CLUSTER, 7, "recurring-reservation-update: 7 x 1024 MB in 6144 MB"),
    (R(0, 0), CLUSTER, 2, "recurring-reservation period 2: AM + one map in a 0 % queue"),
    (R(0, 0), R(0, 0), 0, "a reservation queue before any nudge: nothing (effective 0/0)"),
    (CLUSTER, CLUSTER, 16, "captures/scheduler-while-queue-full: 16 x 1 GB on a 16 GB cluster"),
])
def test_a_user_gets_capacity_plus_one_container_within_the_queue_maximum(eff_min: R, eff_max: R, containers: int,
                                                                         where: str) -> None:
    assert _containers_until_refused(eff_min, eff_max) == containers, where


@pytest.mark.parametrize("cluster,pct,eff", [
    (CLUSTER, 87.5, R(14336, 14)), (CLUSTER, 62.5, R(10240, 10)), (R(12288, 12), 100.0, R(12288, 12)),
    (CLUSTER, 12.5, R(2048, 2)), (CLUSTER, 0.0, R(0, 0)),
])
def test_effective_resources_are_the_absolute_share_of_the_cluster(cluster: R, pct: float, eff: R) -> None:
    assert cap.effective(cluster, pct) == eff


def test_am_limit_and_normalization() -> None:
    assert cap.am_limit(eff_min=CLUSTER, current_limit=CLUSTER, am_pct=0.5, minimum=MIN) == R(8192, 8)
    assert cap.am_limit(eff_min=R(0, 0), current_limit=R(0, 0), am_pct=0.5, minimum=MIN) == R(0, 0)
    assert cap.normalize(R(512, 1), MIN) == R(1024, 1) and cap.normalize(R(1536, 1), MIN) == R(2048, 1)
    assert cap.normalize(R(512, 1), R(512, 1)) == R(512, 1)


@pytest.mark.parametrize("demands,cores,level,each", [
    ([1, 1, 1, 1], 2.0, 0.5, 0.5),                   # cpu-contention: 4 burners get 1/4 of 2 cores each
    ([1, 1, 1, 1, 1], 2.0, 0.4, 0.4),                # + 1 outside: 1/5
    ([1, 1, 1, 1, 1, 1], 2.0, 2 / 6, 2 / 6),         # + 2 outside: 1/6
    ([1, 1], 2.0, math.inf, 1.0),                    # cpu-burn: 2 burners on 2 cores, no contention
    ([1, 1, 1, 0.1], 2.0, 0.6333333333333333, 0.6333333333333333),  # a light process keeps its 0.1
])
def test_cores_are_shared_evenly_per_runnable_process(demands: list[float], cores: float, level: float,
                                                      each: float) -> None:
    got = fair_level(demands, cores)
    assert got == pytest.approx(level)
    assert granted(1.0, got) == pytest.approx(each)


@given(st.lists(st.floats(0.0, 3.0), max_size=12), st.floats(0.5, 16.0))
def test_fair_shares_never_exceed_the_host_or_what_is_wanted(wants: list[float], cores: float) -> None:
    level = fair_level([p for w in wants for p in processes(w)], cores)
    got = [granted(w, level) for w in wants]
    assert all(g <= w + 1e-9 for g, w in zip(got, wants))
    assert sum(got) <= max(cores, 0.0) + 1e-6 or level == math.inf
    if sum(wants) > cores:
        assert sum(got) == pytest.approx(cores, rel=1e-6)

"""Busy primaries refuse secondary reads; a block is unavailable when all live replicas are busy."""

from __future__ import annotations

import numpy as np

from hdfs_placement import PackedBusy, block_available, busy_matrix, is_busy, segment_busy_steps, unavailable_now


def test_point_rules() -> None:
    assert is_busy(0.91, 0.9) and not is_busy(0.9, 0.9)
    assert block_available([True, False, True]) and not block_available([True, True])
    assert not block_available([])  # no live replica: nothing to read (lost, counted elsewhere)


def test_busy_matrix_treats_missing_samples_as_idle() -> None:
    util = np.array([[0.95, np.nan, 0.5], [0.2, 0.99, np.nan]])
    assert busy_matrix(util, 0.9).tolist() == [[True, False, False], [False, True, False]]


def test_unavailable_now() -> None:
    tenant_busy = np.array([True, False, True])
    replicas = np.array([[0, 2, -1], [0, 1, -1], [-1, -1, -1], [2, -1, -1]])
    assert unavailable_now(replicas, tenant_busy).tolist() == [True, False, False, True]


def test_segment_busy_steps_matches_brute_force() -> None:
    rng = np.random.default_rng(4)
    busy = rng.random((12, 300)) < 0.7
    busy[3] = False  # a tenant that is never busy
    packed = PackedBusy.pack(busy, step_s=120.0)
    tenants = rng.integers(-1, 12, (400, 3))
    start = rng.integers(0, 320, 400)
    end = start + rng.integers(-3, 200, 400)
    got = segment_busy_steps(packed, tenants, start, end)
    for i in range(400):
        live = tenants[i][tenants[i] >= 0]
        window = range(start[i], min(end[i], 300))
        expected = 0 if live.size == 0 else sum(bool(busy[live, s].all()) for s in window)
        assert got[i] == expected


def test_step_at_counts_steps_starting_inside_a_segment() -> None:
    packed = PackedBusy.pack(np.ones((1, 10), dtype=bool), step_s=60.0)
    # A segment [90 s, 200 s) holds the steps starting at 120 and 180 s.
    start, end = packed.step_at(90.0), packed.step_at(200.0)
    assert (int(start), int(end)) == (2, 4)
    assert segment_busy_steps(packed, np.array([[0]]), np.array([start]), np.array([end])).tolist() == [2]
    assert int(packed.step_at(10_000.0)) == 10  # clipped to the series

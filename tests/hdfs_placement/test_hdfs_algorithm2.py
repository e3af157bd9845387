"""Algorithm 2 on known tables: grid diversity, writer, favoured, existing, relaxations."""

from __future__ import annotations

import numpy as np
import pytest

from hdfs_placement import PlacementIndex, choose_targets

BLOCK = 128 * 1024 * 1024
W00 = "10.0.0.0:9866"  # node 0 of tenant t00 (row 0, col 0)


def _cells(result) -> list[tuple[int, int]]:
    return [(t.row, t.col) for t in result.targets]


def _is_transversal(cells: list[tuple[int, int]]) -> bool:
    return len({r for r, _ in cells}) == len(cells) and len({c for _, c in cells}) == len(cells)


def test_writer_first_then_distinct_rows_columns_environments(grid9: PlacementIndex) -> None:
    for seed in range(50):
        res = choose_targets(grid9, replication=3, block_size=BLOCK, rng=seed, writer=W00)
        assert res.targets[0].datanode_id == W00
        assert _is_transversal(_cells(res))
        assert len({t.environment for t in res.targets}) == 3
        assert all(t.relaxed == () for t in res.targets)
        assert res.table_version == 7 and res.reason == "3 of 3 targets"


def test_rows_and_columns_are_forgotten_every_three_replicas(grid9: PlacementIndex) -> None:
    for seed in range(30):
        res = choose_targets(grid9, replication=6, block_size=BLOCK, rng=np.random.default_rng(seed), writer=W00)
        cells = _cells(res)
        assert _is_transversal(cells[:3]) and _is_transversal(cells[3:])
        # Greedy random choice can leave the 6th replica only a used environment: then it
        # says so (and only then).
        for k, t in enumerate(res.targets):
            reused = t.environment in {u.environment for u in res.targets[:k]}
            assert reused == ("environment" in t.relaxed)
            assert "row_col" not in t.relaxed


def test_writer_named_by_hostname_or_ip(grid9: PlacementIndex) -> None:
    assert choose_targets(grid9, replication=1, block_size=BLOCK, rng=0, writer="h120").targets[0].datanode_id == "10.0.5.0:9866"
    assert choose_targets(grid9, replication=1, block_size=BLOCK, rng=0, writer="10.0.5.2").targets[0].datanode_id == "10.0.5.2:9866"


@pytest.mark.parametrize("why", ["excluded", "full", "busy", "unknown"])
def test_unusable_writer_gives_a_random_first_replica(make_grid9, why: str) -> None:
    index = make_grid9(busy=lambda r, c, k: why == "busy" and (r, c, k) == (0, 0, 0),
                       remaining=lambda r, c, k: 10 if why == "full" and (r, c, k) == (0, 0, 0) else 10**12)
    writer = "192.168.9.9:9866" if why == "unknown" else W00
    excluded = [W00] if why == "excluded" else []
    seen = set()
    for seed in range(40):
        res = choose_targets(index, replication=3, block_size=BLOCK, rng=seed, writer=writer, excluded=excluded)
        assert len(res.targets) == 3
        if why != "unknown":
            assert W00 not in res.datanode_ids
        assert _is_transversal(_cells(res))
        seen.add(res.targets[0].datanode_id)
        if why != "unknown":
            assert "writer not usable" in res.reason
    assert len(seen) > 5  # the first replica really is random


def test_favoured_nodes_taken_when_they_meet_the_constraints(grid9: PlacementIndex) -> None:
    fav_ok = "10.0.4.1:9866"  # t11: row 1, col 1 — compatible with a writer in (0, 0)
    fav_bad = "10.0.1.1:9866"  # t01: row 0 — same row as the writer, so skipped
    for seed in range(10):
        res = choose_targets(grid9, replication=3, block_size=BLOCK, rng=seed, favored=[W00, fav_bad, fav_ok])
        assert res.datanode_ids[:2] == (W00, fav_ok)
        assert fav_bad not in res.datanode_ids
    # Favoured nodes come before the writer, as in HDFS's favoured-nodes chooseTarget.
    res = choose_targets(grid9, replication=2, block_size=BLOCK, rng=3, writer=W00, favored=[fav_ok])
    assert res.datanode_ids[0] == fav_ok


def test_existing_replicas_count_first(grid9: PlacementIndex) -> None:
    existing = ["10.0.0.1:9866", "10.0.4.1:9866"]  # (0,0) and (1,1): only (2,2) completes the group
    for seed in range(20):
        res = choose_targets(grid9, replication=3, block_size=BLOCK, rng=seed, existing=existing)
        assert _cells(res) == [(2, 2)]
    assert choose_targets(grid9, replication=2, block_size=BLOCK, rng=0, existing=existing).targets == ()


def test_excluded_nodes_are_never_chosen(grid9: PlacementIndex) -> None:
    excluded = [f"10.0.{c}.{k}:9866" for c in range(9) for k in range(3) if (c, k) != (8, 2)]
    res = choose_targets(grid9, replication=3, block_size=BLOCK, rng=0, excluded=excluded)
    assert res.datanode_ids == ("10.0.8.2:9866",)
    assert "no datanode left" in res.reason


def test_environment_is_relaxed_first(make_grid9) -> None:
    index = make_grid9(same_environment=True)
    res = choose_targets(index, replication=3, block_size=BLOCK, rng=5, writer=W00)
    assert _is_transversal(_cells(res))  # row/col diversity kept
    assert [t.relaxed for t in res.targets] == [(), ("environment",), ("environment",)]
    assert "relaxed: environment" in res.reason


def test_row_col_relaxed_when_only_one_row_has_space(make_grid9) -> None:
    index = make_grid9(remaining=lambda r, c, k: 10**12 if r == 0 else 0)
    res = choose_targets(index, replication=3, block_size=BLOCK, rng=5, writer=W00)
    assert [r for r, _ in _cells(res)] == [0, 0, 0]
    assert len({c for _, c in _cells(res)}) == 3  # columns still differ where they can
    assert res.targets[1].relaxed == ("row_col",)


def test_busy_relaxed_last(make_grid9) -> None:
    index = make_grid9(busy=lambda r, c, k: True)
    res = choose_targets(index, replication=3, block_size=BLOCK, rng=5)
    assert _is_transversal(_cells(res))
    assert all(t.relaxed == ("busy",) for t in res.targets)
    # With a single idle node, it is preferred to any busy one.
    index = make_grid9(busy=lambda r, c, k: (r, c, k) != (2, 1, 0))
    res = choose_targets(index, replication=1, block_size=BLOCK, rng=5)
    assert res.datanode_ids == ("10.0.7.0:9866",) and res.targets[0].relaxed == ()


def test_free_space_is_hard(make_grid9) -> None:
    index = make_grid9(remaining=lambda r, c, k: BLOCK if (r, c) in {(0, 0), (1, 1)} else BLOCK - 1)
    res = choose_targets(index, replication=3, block_size=BLOCK, rng=2, writer=W00)
    assert len(res.targets) == 3
    assert {(t.row, t.col) for t in res.targets} <= {(0, 0), (1, 1)}
    res = choose_targets(index, replication=3, block_size=BLOCK + 1, rng=2, writer=W00)
    assert res.targets == () and "no datanode left" in res.reason


def test_rack_is_a_tie_breaker(grid9: PlacementIndex) -> None:
    for seed in range(30):
        res = choose_targets(grid9, replication=3, block_size=BLOCK, rng=seed, writer=W00)
        assert len({t.rack for t in res.targets}) == 3  # racks /rack0-2 all free for the taking


def test_deterministic_under_seed(grid9: PlacementIndex) -> None:
    a = choose_targets(grid9, replication=4, block_size=BLOCK, rng=np.random.default_rng(9))
    b = choose_targets(grid9, replication=4, block_size=BLOCK, rng=np.random.default_rng(9))
    c = choose_targets(grid9, replication=4, block_size=BLOCK, rng=9)
    d = choose_targets(grid9, replication=4, block_size=BLOCK, rng=9)
    assert a == b and c == d
    draws = {choose_targets(grid9, replication=3, block_size=BLOCK, rng=s).datanode_ids for s in range(20)}
    assert len(draws) > 10


def test_negative_block_size_rejected(grid9: PlacementIndex) -> None:
    with pytest.raises(ValueError):
        choose_targets(grid9, replication=3, block_size=-1, rng=0)

"""verify_placement, choose_replicas_to_delete, is_movable on known replica sets."""

from __future__ import annotations

from hdfs_placement import (
    DataNode,
    PlacementIndex,
    TenantStats,
    build_placement_table,
    choose_replicas_to_delete,
    fit_grid,
    is_movable,
    verify_placement,
)


def n(row: int, col: int, k: int = 0) -> str:
    """Node k of the tenant in cell (row, col) of the grid9 fixture (rack /rack{k})."""
    return f"10.0.{row * 3 + col}.{k}:9866"


def test_verify_accepts_a_transversal_and_lists_violations(grid9: PlacementIndex) -> None:
    ok = verify_placement(grid9, [n(0, 0, 0), n(1, 2, 1), n(2, 1, 2)])
    assert ok.satisfied and ok.violations == () and ok.table_version == 7
    same_row = verify_placement(grid9, [n(0, 0, 0), n(0, 2, 1), n(2, 1, 2)])
    assert not same_row.satisfied
    assert [v.split(":")[0] for v in same_row.violations] == ["row"]
    same_tenant = verify_placement(grid9, [n(1, 1, 0), n(1, 1, 1)])
    kinds = sorted(v.split(":")[0] for v in same_tenant.violations)
    assert kinds == ["col", "environment", "row"]
    one_rack = verify_placement(grid9, [n(0, 0, 1), n(1, 1, 1), n(2, 2, 1)])
    assert one_rack.violations == ("rack: 1 rack(s) < 2",)
    # A lone replica of a 3-replica block is mis-placed for HDFS (min(2, 3) racks), not for 1.
    assert verify_placement(grid9, [n(0, 0, 1)], replication=3).violations == ("rack: 1 rack(s) < 2",)
    assert verify_placement(grid9, [n(0, 0, 1)], replication=1).satisfied


def test_verify_four_replicas_allows_two_per_row(grid9: PlacementIndex) -> None:
    status = verify_placement(grid9, [n(0, 0, 0), n(1, 1, 1), n(2, 2, 2), n(0, 1, 0)])
    assert status.satisfied
    status = verify_placement(grid9, [n(0, 0, 0), n(0, 1, 1), n(0, 2, 2), n(1, 1, 0)])
    assert any(v.startswith("row: 3 replicas in row 0") for v in status.violations)


def test_verify_ignores_unknown_and_flags_unclassified() -> None:
    grid = fit_grid([TenantStats("a", "ea", 0.1, 0.1, 10), TenantStats("b", "eb", 0.9, 0.9, 10)])
    nodes = [DataNode("1.0.0.1:1", "a", "/r1", "a", "ea", 10, 10), DataNode("1.0.0.2:1", "b", "/r2", "b", "eb", 10, 10),
             DataNode("1.0.0.3:1", "c", "/r3", "c", "ec", 10, 10)]
    index = PlacementIndex(build_placement_table(nodes, grid, version=2, generated_at_ms=0, busy_cpu_threshold=0.9))
    status = verify_placement(index, ["1.0.0.1:1", "1.0.0.2:1", "9.9.9.9:1"])
    assert status.satisfied and status.unknown == ("9.9.9.9:1",)
    status = verify_placement(index, ["1.0.0.1:1", "1.0.0.3:1"])
    assert not status.satisfied and any("outside the grid" in v for v in status.violations)


def test_delete_the_replica_that_duplicates_diversity(grid9: PlacementIndex) -> None:
    replicas = [n(0, 0, 0), n(1, 1, 1), n(2, 2, 2), n(1, 1, 0)]  # two replicas in tenant t11
    choice = choose_replicas_to_delete(grid9, replicas, 3)
    assert len(choice.delete) == 1 and choice.delete[0] in {n(1, 1, 1), n(1, 1, 0)}
    assert "loses 0 row/col, 0 environment" in choice.reason
    kept = [r for r in replicas if r not in choice.delete]
    assert verify_placement(grid9, kept).satisfied


def test_delete_prefers_busy_then_least_free(make_grid9) -> None:
    index = make_grid9(busy=lambda r, c, k: (r, c, k) == (1, 1, 0),
                       remaining=lambda r, c, k: 10**11 if (r, c, k) == (1, 1, 2) else 10**12)
    replicas = [n(0, 0, 0), n(1, 1, 1), n(1, 1, 2), n(1, 1, 0), n(2, 2, 2)]
    assert choose_replicas_to_delete(index, replicas, 4).delete == (n(1, 1, 0),)  # busy first
    assert choose_replicas_to_delete(index, replicas, 3).delete == (n(1, 1, 0), n(1, 1, 2))  # then least free


def test_delete_honours_candidates_and_hint(grid9: PlacementIndex) -> None:
    replicas = [n(0, 0, 0), n(1, 1, 1), n(2, 2, 2), n(1, 1, 0)]
    assert choose_replicas_to_delete(grid9, replicas, 3, hint=n(1, 1, 0)).delete == (n(1, 1, 0),)
    assert choose_replicas_to_delete(grid9, replicas, 3, hint=n(1, 1, 1)).delete == (n(1, 1, 1),)
    # A hint that would lose diversity is not taken.
    assert choose_replicas_to_delete(grid9, replicas, 3, hint=n(0, 0, 0)).delete != (n(0, 0, 0),)
    # Only candidates may go, even when that loses diversity.
    only = choose_replicas_to_delete(grid9, replicas, 3, candidates=[n(2, 2, 2)])
    assert only.delete == (n(2, 2, 2),)
    none = choose_replicas_to_delete(grid9, replicas, 2, candidates=[n(2, 2, 2)])
    assert none.delete == (n(2, 2, 2),) and "no deletable replica" in none.reason
    assert choose_replicas_to_delete(grid9, replicas, 4).delete == ()


def test_unknown_replicas_count_but_are_never_deleted(grid9: PlacementIndex) -> None:
    choice = choose_replicas_to_delete(grid9, [n(0, 0, 0), n(1, 1, 1), "8.8.8.8:9866"], 2)
    assert len(choice.delete) == 1 and "8.8.8.8:9866" not in choice.delete


def test_is_movable_only_when_diversity_is_kept(grid9: PlacementIndex) -> None:
    replicas = [n(0, 0, 0), n(1, 1, 1), n(2, 2, 2)]
    assert is_movable(grid9, replicas, n(1, 1, 1), n(1, 1, 0))  # same tenant, other node (rack /rack0 is used)
    assert is_movable(grid9, replicas, n(2, 2, 2), n(2, 1, 2)) is False  # column 1 would be doubled
    assert is_movable(grid9, replicas, n(1, 1, 1), n(0, 0, 0)) is False  # target already holds it
    assert is_movable(grid9, replicas, n(1, 1, 1), "7.7.7.7:9866") is False  # unknown target
    assert is_movable(grid9, replicas, n(0, 1, 0), n(1, 2, 0)) is False  # source does not hold it
    # Racks: leaving the only other rack is refused; moving within a rack set is fine.
    two_racks = [n(0, 0, 0), n(1, 1, 0), n(2, 2, 1)]
    assert is_movable(grid9, two_racks, n(2, 2, 1), n(2, 2, 0)) is False
    assert is_movable(grid9, two_racks, n(1, 1, 0), n(1, 1, 2))

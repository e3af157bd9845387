"""The SplitMix64 stream shared with the Java shim, and Algorithm 2 driven by it."""

from __future__ import annotations

from hdfs_placement import PlacementIndex, choose_targets
from hdfs_placement.splitmix import SplitMix64


def test_reference_values_of_splitmix64() -> None:
    # The published reference sequence for seed 0 (Vigna's splitmix64.c).
    s = SplitMix64(0)
    assert [s.next_u64() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    u = SplitMix64(1)
    draws = [u() for _ in range(1000)]
    assert all(0.0 <= x < 1.0 for x in draws) and len(set(draws)) == 1000


def test_algorithm_2_replays_the_same_choice_from_the_same_stream(grid9: PlacementIndex) -> None:
    a = choose_targets(grid9, replication=3, block_size=1, rng=SplitMix64(99))
    b = choose_targets(grid9, replication=3, block_size=1, rng=SplitMix64(99))
    assert a == b and len(a.targets) == 3
    assert len({t.row for t in a.targets}) == 3 and len({t.col for t in a.targets}) == 3

"""The iteration order of a `java.util.HashMap` (OpenJDK 8+) — pure, for answers that must list
entries in the order a Java service does (the Resource Estimator's history is a HashMap of
`RecurrenceId`s, serialized in its iteration order: `[run3, run2, run1]` in the fixtures).

A HashMap iterates bucket by bucket, and within a bucket in insertion order (a resize splits
every bucket keeping that order). The bucket of a key is `spread(hashCode) & (capacity - 1)`,
`spread(h) = h ^ (h >>> 16)`. The capacity starts at 16 and doubles whenever the size passes
0.75 × capacity; it never shrinks, so it follows from the LARGEST size the map ever had.

Not modelled: a bucket of more than 8 keys (Java turns it into a tree, or resizes while the
table is under 64), which needs 9 keys whose spread hashes agree in their low bits.
"""

from __future__ import annotations

from typing import Iterable, Sequence, TypeVar

T = TypeVar("T")
INITIAL_CAPACITY = 16
LOAD_FACTOR = 0.75


def string_hash(s: str) -> int:
    """`String.hashCode()`: s[0]·31^(n−1) + … + s[n−1] over UTF-16 code units, as an unsigned 32-bit int."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def capacity_for(largest_size: int) -> int:
    """Table capacity of a map that has held at most `largest_size` entries (puts one at a time)."""
    cap = INITIAL_CAPACITY
    while largest_size > cap * LOAD_FACTOR:
        cap *= 2
    return cap


def bucket(hash_code: int, capacity: int) -> int:
    h = hash_code & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def iteration_order(entries: Iterable[tuple[int, T]], capacity: int) -> list[T]:
    """`entries` = (hashCode, item) in insertion order → items in the map's iteration order."""
    items: Sequence[tuple[int, T]] = list(entries)
    order = sorted(range(len(items)), key=lambda i: (bucket(items[i][0], capacity), i))
    return [items[i][1] for i in order]

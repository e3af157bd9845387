"""The Java HashMap order (harvester.models.java_hashmap) and the Resource Estimator's history
orders built on it (models/estimator_history.py), against known String.hashCode values, the
fixtures' recording, and a real java.util.HashMap (tests/models/data/HashMapOrder.java, run
with the JDK's single-file launcher; skipped without `java`)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from harvester.models.estimator_history import RecurrenceId, filtered_order, store_order
from harvester.models.java_hashmap import bucket, capacity_for, iteration_order, string_hash

ORACLE = Path(__file__).parent / "data" / "HashMapOrder.java"


@pytest.mark.parametrize(("s", "java"), [
    ("", 0), ("hello", 99162322), ("Aa", 2112), ("BB", 2112), ("é", 233),
    ("polygenelubricants", -2147483648),  # Integer.MIN_VALUE
    ("\U0001F600", 0xD83D * 31 + 0xDE00),  # one code point, two UTF-16 units
])
def test_string_hash_is_javas(s: str, java: int) -> None:
    assert string_hash(s) == java & 0xFFFFFFFF


@pytest.mark.parametrize(("size", "cap"), [(0, 16), (12, 16), (13, 32), (24, 32), (25, 64), (96, 128), (97, 256)])
def test_capacity_doubles_past_three_quarters(size: int, cap: int) -> None:
    assert capacity_for(size) == cap


def test_the_recorded_history_order() -> None:
    """The fixtures' history lists run3, run2, run1 (buckets 7, 8, 9 of 16)."""
    rids = [RecurrenceId("etl_daily", f"etl_daily_run{i}") for i in (1, 2, 3)]
    assert [bucket(r.java_hash(), 16) for r in rids] == [9, 8, 7]
    assert [r for r, _ in store_order([(r, []) for r in rids], 3)] == rids[::-1]
    assert iteration_order([(5, "a"), (5, "b"), (3, "c")], 16) == ["c", "a", "b"]  # a bucket keeps insertion order


def _emulate(ops: list[str]) -> list[list[str]]:
    entries: list[RecurrenceId] = []
    largest = 0
    out = []
    for op in ops:
        f = op.split(" ")
        if f[0] == "put":
            rid = RecurrenceId(f[1], f[2])
            if rid not in entries:
                entries.append(rid)
                largest = max(largest, len(entries))
        elif f[0] == "del":
            rid = RecurrenceId(f[1], f[2])
            if rid in entries:
                entries.remove(rid)
        else:
            held = [(r, []) for r in entries]
            if f[0] == "filter":
                shown = filtered_order([(r, s) for r, s in held if r.pipeline_id == f[1]], largest)
            else:
                shown = store_order(held, largest)
            out.append([f"{r.pipeline_id} {r.run_id}" for r, _ in shown])
    return out


@pytest.mark.skipif(shutil.which("java") is None, reason="no JDK: the java.util.HashMap oracle cannot run")
def test_same_order_as_a_real_java_hashmap() -> None:
    rng = random.Random(26)
    pipes = ["etl_daily", "tpch_q12", "ünïcode", "p\U0001F600"]
    ops, live = [], []
    for step in range(400):
        if live and rng.random() < 0.25:
            p, r = live.pop(rng.randrange(len(live)))
            ops.append(f"del {p} {r}")
        else:
            p = rng.choice(pipes)
            r = f"{p}_run{rng.randrange(60)}"
            ops.append(f"put {p} {r}")
            if (p, r) not in live:
                live.append((p, r))
        if step % 20 == 19:
            ops += ["dump"] + [f"filter {p}" for p in pipes]
    java = subprocess.run(["java", str(ORACLE)], input="\n".join(ops) + "\n", capture_output=True, text=True,
                          timeout=120, encoding="utf-8")
    assert java.returncode == 0, java.stderr[-2000:]
    theirs = [block.splitlines() for block in java.stdout.split("--\n")[:-1]]
    ours = _emulate(ops)
    assert len(theirs) == len(ours) == 100
    assert max(len(b) for b in theirs) > 24  # the store grew past two resizes
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"listing {i} differs"

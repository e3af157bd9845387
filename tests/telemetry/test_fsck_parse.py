"""Parsing `hdfs fsck -files -blocks -locations [-racks]` (the recorded 3.3.6 output and both replica forms)."""

from __future__ import annotations

import re

from harvester.telemetry.fsck import Replica, parse_fsck_blocks
from shared_paths import FIXTURES_DIR


def test_the_recorded_fsck_output() -> None:
    text = (FIXTURES_DIR / "hdfs-3.3.6" / "fsck-files-blocks-locations-racks.txt").read_text()
    blocks = parse_fsck_blocks(text)
    block_lines = [line for line in text.splitlines() if re.match(r"^\d+\. BP-", line)]
    assert len(blocks) == len(block_lines) == 74, "every block line is parsed (74 blocks validated)"
    first = blocks[0]
    assert (first.path, first.replication, first.block, first.length) == ("/data/clean/final-00000", 1, "blk_1073741929_1105", 300000)
    assert first.replicas == (Replica("127.0.0.1:9866", "/default-rack"),)
    jar = next(b for b in blocks if b.path.endswith("job_1795429207487_0003/job.jar"))
    assert jar.replication == 10 and len(jar.replicas) == 1, "an under-replicated file keeps its target"
    assert {r.datanode_id for b in blocks for r in b.replicas} == {"127.0.0.1:9866"}


def test_several_replicas_with_racks_details_or_storages() -> None:
    text = (
        "/warehouse/a b.txt 268435456 bytes, replicated: replication=3, 2 block(s):  OK\n"
        "0. BP-1-127.0.0.1-1:blk_1073741825_1001 len=134217728 Live_repl=3  "
        "[/dc1/r1/10.0.0.1:9866(HEALTHY), /dc1/r2/10.0.0.7:9866(HEALTHY), /dc1/r2/10.0.0.9:9866(STALE_NODE)]\n"
        "1. BP-1-127.0.0.1-1:blk_1073741826_1002 len=134217728 Live_repl=2  "
        "[DatanodeInfoWithStorage[10.0.0.2:9866,DS-6d1c-4b,DISK], DatanodeInfoWithStorage[10.0.0.3:9866,DS-77aa,SSD]]\n"
        "/empty 0 bytes, replicated: replication=3, 0 block(s):  OK\n"
    )
    a, b = parse_fsck_blocks(text)
    assert a.path == "/warehouse/a b.txt" and a.replication == 3
    assert a.replicas == (Replica("10.0.0.1:9866", "/dc1/r1"), Replica("10.0.0.7:9866", "/dc1/r2"),
                          Replica("10.0.0.9:9866", "/dc1/r2"))
    assert b.replicas == (Replica("10.0.0.2:9866", ""), Replica("10.0.0.3:9866", ""))

"""Block locations from `hdfs fsck <path> -files -blocks -locations [-racks]` output — pure parsing.

The way to check where HDFS really put a file's replicas (../shared/fixtures/hdfs-3.3.6/
fsck-files-blocks-locations-racks.txt, Hadoop 3.3.6 `NamenodeFsck`):

    /data/raw/part-00000 300000 bytes, replicated: replication=3, 1 block(s):  OK
    0. BP-644208893-127.0.0.1-1795427833620:blk_1073741927_1103 len=300000 Live_repl=3  [/r1/10.0.0.1:9866, /r2/10.0.0.7:9866, /r2/10.0.0.9:9866]

With `-racks` each replica is `NodeBase.getPath`: `<rack>/<ip:port>`; without it,
`DatanodeInfoWithStorage[<ip:port>,<storage id>,<type>]`. Replicas are separated by ", ";
`-replicaDetails` / `-upgradedomains` append "(...)" to each, which is ignored. The DataNode
ids are transfer addresses, the ids of the placement table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FILE = re.compile(r"^(?P<path>/\S*(?: \S+)*?) (?P<size>\d+) bytes, replicated: replication=(?P<repl>\d+),")
_BLOCK = re.compile(r"^\d+\. (?P<pool>\S+?):(?P<block>blk_-?\d+_\d+) len=(?P<len>\d+)(?: (?:Live_repl|repl)=(?P<live>\d+))?"
                    r"(?:\s+\[(?P<locs>.*)\])?")
_STORAGE = re.compile(r"^DatanodeInfoWithStorage\[(?P<addr>[^,\]]+)")


@dataclass(frozen=True, slots=True)
class Replica:
    datanode_id: str  # ip:port
    rack: str         # "" when fsck ran without -racks


@dataclass(frozen=True, slots=True)
class FsckBlock:
    path: str
    replication: int          # the file's target replication
    block: str                # blk_<id>_<genstamp>
    length: int
    replicas: tuple[Replica, ...]


def _replica(text: str) -> Replica:
    text = re.sub(r"\(.*$", "", text.strip())
    m = _STORAGE.match(text)
    if m:
        return Replica(m.group("addr"), "")
    rack, _, addr = text.rpartition("/")
    return Replica(addr, rack)


def parse_fsck_blocks(text: str) -> list[FsckBlock]:
    """Every block line, with the file it belongs to; blocks without locations have none."""
    out: list[FsckBlock] = []
    path, repl = "", 0
    for line in text.splitlines():
        f = _FILE.match(line)
        if f:
            path, repl = f.group("path"), int(f.group("repl"))
            continue
        b = _BLOCK.match(line.strip())
        if b and path:
            locs = b.group("locs")
            replicas = tuple(_replica(x) for x in locs.split(", ")) if locs else ()
            out.append(FsckBlock(path, repl, b.group("block"), int(b.group("len")), replicas))
    return out

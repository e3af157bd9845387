"""Disk reimages, observed: detection from NameNode JMX history, and merging with a log — pure.

OSDI'16 §3.3 takes reimage frequencies from AutoPilot's logs; Hadoop has no API that reports
a reimage. Two sources exist here:

1. an operator log (CSV; `harvester.telemetry.reimage_log`), complete for its period;
2. this heuristic over the NameNode's `LiveNodes` (telemetry.namenode_model), polled
   regularly. A reimage wipes the DataNode's disks; when the DataNode comes back (or
   re-registers before the NameNode declared it dead) its block report is empty, so its
   `numBlocks` collapses. Rule, per DataNode (keyed by its LiveNodes name hostname:port,
   which survives a reimage): a reimage is counted at the poll where
     - the DataNode's previous observation had `numBlocks >= min_blocks`, and
     - now `numBlocks <= reset_fraction x previous`, and
     - the NameNode is the same process (`NNStartedTimeInMillis` unchanged: after a NameNode
       restart block counts are rebuilt from block reports, so the baseline is reset), and
     - the cluster's `TotalBlocks` is at least `cluster_drop_fraction x` its value at the
       previous observation (a mass delete empties many DataNodes at once; not a reimage).
   The previous observation of a DataNode that is missing or dead is kept, so a DataNode that
   drops out and returns is compared with its last state before the gap (the gap is named in
   the event's reason). The event's time is the poll that saw the reset.

Limits (also in docs/hdfs.md): a DataNode wiped while it held fewer than `min_blocks` blocks,
or wiped during a NameNode restart, is missed; a DataNode that comes back under another
hostname or xfer port is a new DataNode; a failed disk of a multi-disk DataNode loses only part of the
blocks (`volfails` rises) and is not a reimage by this rule; a disk replaced and re-added with
its data intact is not a reimage; the time resolution is the poll interval (or the outage).
A DataNode whose blocks are all deleted by users within one poll, while the rest of the
cluster keeps its blocks, would be counted: rare for a DataNode holding >= `min_blocks`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from harvester.telemetry.namenode_model import LiveDataNode, NameNodeInfo

SOURCE_JMX = "jmx"
SOURCE_LOG = "log"


@dataclass(frozen=True, slots=True)
class ReimageEvent:
    """One DataNode wiped at `time` (epoch s). `tenant` "" = to be resolved from `datanode_id`
    by the tenant rules; `datanode_id` (xferaddr ip:port) "" = the whole host (an operator log
    line before `per_datanode` spread it over the host's DataNodes)."""

    time: float
    hostname: str
    tenant: str = ""
    datanode_id: str = ""
    source: str = SOURCE_LOG
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DataNodeObservation:
    """The last live observation of a DataNode, the heuristic's memory (persisted)."""

    name: str               # LiveNodes key hostname:xferPort
    hostname: str
    datanode_id: str        # xferaddr ip:port
    time: float             # when it was last seen live
    first_seen: float       # when Harvester first saw it live (observation span for rates)
    num_blocks: int
    block_pool_used_bytes: int
    nn_started_ms: int      # NameNode process the counts were reported by
    cluster_blocks: int     # the NameNode's TotalBlocks at that poll


@dataclass(frozen=True, slots=True)
class DetectionParams:
    min_blocks: int = 100
    reset_fraction: float = 0.05
    cluster_drop_fraction: float = 0.5


@dataclass(frozen=True)
class Detection:
    """Reimages seen at this poll and the observations to remember (every DataNode ever seen)."""

    events: tuple[ReimageEvent, ...]
    observations: dict[str, DataNodeObservation]


def detect_reimages(
    previous: Mapping[str, DataNodeObservation], info: NameNodeInfo, now: float, params: DetectionParams
) -> Detection:
    """Apply the module docstring's rule to one NameNodeInfo poll taken at `now`."""
    out = dict(previous)
    events: list[ReimageEvent] = []
    for dn in info.live:
        p = previous.get(dn.name)
        if p is not None and p.nn_started_ms == info.started_ms and p.num_blocks >= params.min_blocks:
            collapsed = dn.num_blocks <= params.reset_fraction * p.num_blocks
            mass_delete = info.total_blocks < params.cluster_drop_fraction * p.cluster_blocks
            if collapsed and not mass_delete:
                gap = now - p.time
                events.append(ReimageEvent(
                    time=now, hostname=dn.hostname, datanode_id=dn.xfer_addr, source=SOURCE_JMX,
                    reason=(f"numBlocks {p.num_blocks} -> {dn.num_blocks} (<= {params.reset_fraction:g} x), "
                            f"last seen {gap:.0f} s before; cluster TotalBlocks {p.cluster_blocks} -> {info.total_blocks}"),
                ))
        out[dn.name] = DataNodeObservation(
            name=dn.name, hostname=dn.hostname, datanode_id=dn.xfer_addr, time=now,
            first_seen=p.first_seen if p is not None else now, num_blocks=dn.num_blocks,
            block_pool_used_bytes=dn.block_pool_used_bytes, nn_started_ms=info.started_ms,
            cluster_blocks=info.total_blocks,
        )
    return Detection(tuple(events), out)


def per_datanode(events: Iterable[ReimageEvent], live: Iterable[LiveDataNode],
                 tenant_of: Mapping[str, str]) -> list[ReimageEvent]:
    """Host-wide events (operator log lines: a hostname, no DataNode id) as one event per DataNode
    on that host: reimaging a server wipes every DataNode it runs, and several DataNodes of one
    host (different xfer ports) may belong to different tenants (`tenant_of`: DataNode id ->
    tenant). The log names a host by its name or its IP. A line that also names a tenant counts
    for that tenant's DataNodes on the host only (once, as given, when it has none there); a host
    with no live DataNode keeps its line as it is. Events with a DataNode id pass unchanged."""
    on_host: dict[str, list[LiveDataNode]] = {}
    for dn in live:
        for name in {dn.hostname, dn.xfer_addr.rsplit(":", 1)[0]}:
            on_host.setdefault(name, []).append(dn)
    out: list[ReimageEvent] = []
    for e in events:
        nodes = [] if e.datanode_id else on_host.get(e.hostname, [])
        if e.tenant:
            nodes = [dn for dn in nodes if tenant_of.get(dn.xfer_addr) == e.tenant]
        if not nodes:
            out.append(e)
        out.extend(replace(e, hostname=dn.hostname, datanode_id=dn.xfer_addr) for dn in nodes)
    return out


def merge_reimages(events: Iterable[ReimageEvent], dedupe_s: float = 86400.0) -> list[ReimageEvent]:
    """Events of both sources, time-ordered, without counting one reimage twice.

    An event is dropped when the same DataNode (the same id; or the same hostname when either
    event is host-wide, without an id) already has a kept event from the OTHER source within
    `dedupe_s` (the log says when, the heuristic says when it was noticed). Two events of one
    source are both kept: each source is trusted to list a reimage once.
    """
    kept: list[ReimageEvent] = []
    seen: dict[tuple[str, str], list[tuple[str, float]]] = {}  # (hostname, source) -> (datanode id, time)
    for e in sorted(events, key=lambda e: (e.time, e.hostname, e.source)):
        other = SOURCE_JMX if e.source == SOURCE_LOG else SOURCE_LOG
        if any(e.time - t <= dedupe_s and (not d or not e.datanode_id or d == e.datanode_id)
               for d, t in seen.get((e.hostname, other), ())):
            continue
        kept.append(e)
        seen.setdefault((e.hostname, e.source), []).append((e.datanode_id, e.time))
    return kept

"""NameNode JMX values (Hadoop 3.3.6 `NameNodeInfo` bean) and their parsing — pure, no I/O.

The decoded form of `GET {nn_http}/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo`
(../shared/fixtures/hdfs-3.3.6/nn-jmx-NameNodeInfo.json): `LiveNodes` and `DeadNodes` are JSON
objects serialised into strings. `LiveNodes` is keyed `<hostname>:<xferPort>`; each value has
`xferaddr` (ip:port, HDFS's DataNode id), `location` (rack), `capacity`, `used`, `remaining`,
`blockPoolUsed` (bytes), `numBlocks`, `lastContact` (s), `lastBlockReport` (min),
`adminState`, `volfails`, `version`. Kept apart from the HTTP client so that models and
decisions can use these values without importing `requests`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

INFO_QUERY = "Hadoop:service=NameNode,name=NameNodeInfo"
STATUS_QUERY = "Hadoop:service=NameNode,name=NameNodeStatus"


@dataclass(frozen=True, slots=True)
class LiveDataNode:
    """One entry of `LiveNodes` (units as the NameNode reports them: bytes, seconds, minutes)."""

    name: str                      # the LiveNodes key: hostname:xferPort
    hostname: str
    xfer_addr: str                 # ip:port, HDFS's DataNode id
    info_addr: str
    rack: str                      # `location`
    admin_state: str               # "In Service", "Decommission In Progress", ...
    capacity_bytes: int
    dfs_used_bytes: int
    non_dfs_used_bytes: int
    remaining_bytes: int
    block_pool_used_bytes: int
    num_blocks: int
    last_contact_s: int
    last_block_report_min: int | None
    volume_failures: int
    version: str


@dataclass(frozen=True, slots=True)
class DeadDataNode:
    """One entry of `DeadNodes` (the NameNode stopped hearing from it)."""

    name: str
    hostname: str
    xfer_addr: str
    last_contact_s: int
    decommissioned: bool


@dataclass(frozen=True, slots=True)
class NameNodeInfo:
    """The NameNodeInfo bean, decoded. `url` is the NameNode that answered."""

    url: str
    version: str
    cluster_id: str
    block_pool_id: str
    started_ms: int
    total_blocks: int
    missing_blocks: int
    live: tuple[LiveDataNode, ...]
    dead: tuple[DeadDataNode, ...]


def _int(d: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = d.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: {key} is {value!r}, expected a number")
    return int(value)


def _str(d: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = d.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key} is {value!r}, expected a string")
    return value


def _embedded(bean: Mapping[str, Any], key: str) -> dict[str, Any]:
    """LiveNodes / DeadNodes: a JSON object serialised into a string (or absent/empty)."""
    raw = bean.get(key, "{}")
    if raw in (None, ""):
        return {}
    if isinstance(raw, dict):  # tolerate a servlet that nests it as an object
        return raw
    if not isinstance(raw, str):
        raise ValueError(f"{key} is {type(raw).__name__}, expected a JSON string")
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{key} is not valid JSON inside its string: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{key} holds {type(doc).__name__}, expected an object")
    return doc


def _hostname(name: str) -> str:
    return name.rsplit(":", 1)[0] if ":" in name else name


def parse_live_node(name: str, d: Mapping[str, Any]) -> LiveDataNode:
    where = f"LiveNodes[{name!r}]"
    if not isinstance(d, Mapping):
        raise ValueError(f"{where}: expected an object")
    lbr = d.get("lastBlockReport")
    return LiveDataNode(
        name=name,
        hostname=_hostname(name),
        xfer_addr=_str(d, "xferaddr", where),
        info_addr=_str(d, "infoAddr", where, ""),
        rack=_str(d, "location", where, "/default-rack"),
        admin_state=_str(d, "adminState", where, "In Service"),
        capacity_bytes=_int(d, "capacity", where),
        dfs_used_bytes=_int(d, "used", where, d.get("usedSpace", 0)),
        non_dfs_used_bytes=_int(d, "nonDfsUsedSpace", where, 0),
        remaining_bytes=_int(d, "remaining", where),
        block_pool_used_bytes=_int(d, "blockPoolUsed", where, 0),
        num_blocks=_int(d, "numBlocks", where),
        last_contact_s=_int(d, "lastContact", where, 0),
        last_block_report_min=None if lbr is None else _int(d, "lastBlockReport", where),
        volume_failures=_int(d, "volfails", where, 0),
        version=_str(d, "version", where, ""),
    )


def parse_namenode_info(doc: Any, url: str) -> NameNodeInfo:
    """Decode a `/jmx?qry=...NameNodeInfo` answer; ValueError says which field is wrong."""
    beans = doc.get("beans") if isinstance(doc, dict) else None
    if not isinstance(beans, list) or not beans:
        raise ValueError("no bean in the answer (is this a NameNode? the query names NameNodeInfo)")
    bean = beans[0]
    if not isinstance(bean, dict):
        raise ValueError("beans[0] is not an object")
    where = "NameNodeInfo"
    live = tuple(sorted((parse_live_node(k, v) for k, v in _embedded(bean, "LiveNodes").items()),
                        key=lambda n: n.xfer_addr))
    dead = []
    for k, v in sorted(_embedded(bean, "DeadNodes").items()):
        w = f"DeadNodes[{k!r}]"
        if not isinstance(v, Mapping):
            raise ValueError(f"{w}: expected an object")
        dead.append(DeadDataNode(k, _hostname(k), _str(v, "xferaddr", w, ""), _int(v, "lastContact", w, 0),
                                 bool(v.get("decommissioned", False))))
    return NameNodeInfo(
        url=url,
        version=_str(bean, "SoftwareVersion", where, _str(bean, "Version", where, "")),
        cluster_id=_str(bean, "ClusterId", where, ""),
        block_pool_id=_str(bean, "BlockPoolId", where, ""),
        started_ms=_int(bean, "NNStartedTimeInMillis", where, 0),
        total_blocks=_int(bean, "TotalBlocks", where, 0),
        missing_blocks=_int(bean, "NumberOfMissingBlocks", where, 0),
        live=live,
        dead=tuple(dead),
    )

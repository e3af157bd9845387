"""A msgspec typed decode of one ``/nodes`` element (the RM's ``NodeInfo`` JSON) into
:class:`~rm_client.wire.nodes.Node`, for :mod:`rm_client.wire.streamed` (issue 29).

The structs below mirror the JSON shape with the USUAL types only (numbers as numbers,
strings as strings, lists as arrays or a collapsed single object, ``{}`` wrappers for empty
lists). msgspec rejects anything else (a number sent as a string, a missing required key,
``true`` for a number) and :func:`decode_node_raw` raises :class:`Mismatch` for resource
vectors it does not read itself: the element then takes the plain path of
:data:`rm_client.wire.nodes.NODE`, so results and errors are today's. Unknown keys are
skipped, as the plain path ignores them.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from rm_client.wire.nodes import AllocationTag, Node, NodeAttribute, ResourceUtilization
from rm_client.wire.resources import _DEFAULT_HI, _DEFAULT_LO, Resource, decode_resource
from rm_client.wire.streamed import Mismatch

__all__ = ["decode_node_raw"]

_BUILTIN = ("memory-mb", "vcores")


class _Info(msgspec.Struct, gc=False):
    name: str
    minimumAllocation: int | None = None  # noqa: N815 (the RM's keys)
    maximumAllocation: int | None = None  # noqa: N815
    value: int | None = None
    units: str | None = None
    resourceType: str | None = None  # noqa: N815


class _Infos(msgspec.Struct, gc=False):
    resourceInformation: list[_Info] | None = None  # noqa: N815 (a collapsed one: the plain path)


_NULL = msgspec.Raw(b"null")


class _Res(msgspec.Struct, gc=False):
    memory: int
    vCores: int  # noqa: N815
    resourceInformations: msgspec.Raw = _NULL  # noqa: N815 (read once per distinct text: _resource)


class _Util(msgspec.Struct, gc=False):
    nodePhysicalMemoryMB: int  # noqa: N815
    nodeVirtualMemoryMB: int  # noqa: N815
    nodeCPUUsage: float  # noqa: N815
    aggregatedContainersPhysicalMemoryMB: int  # noqa: N815
    aggregatedContainersVirtualMemoryMB: int  # noqa: N815
    containersCPUUsage: float  # noqa: N815


class _Tag(msgspec.Struct, gc=False):
    allocationTag: str  # noqa: N815
    allocationsCount: int  # noqa: N815


class _Tags(msgspec.Struct, gc=False):
    allocationTagInfo: list[_Tag] | _Tag | None = None  # noqa: N815


class _Attr(msgspec.Struct, gc=False):
    prefix: str
    name: str
    type: str
    value: str


class _Attrs(msgspec.Struct, gc=False):
    nodeAttributeInfo: list[_Attr] | _Attr | None = None  # noqa: N815


class _Node(msgspec.Struct, gc=False):
    rack: str
    state: str
    id: str
    nodeHostName: str  # noqa: N815
    nodeHTTPAddress: str  # noqa: N815
    lastHealthUpdate: int  # noqa: N815
    version: str
    healthReport: str  # noqa: N815
    numContainers: int  # noqa: N815
    usedMemoryMB: int  # noqa: N815
    availMemoryMB: int  # noqa: N815
    usedVirtualCores: int  # noqa: N815
    availableVirtualCores: int  # noqa: N815
    memUtilization: float | None = None  # noqa: N815
    cpuUtilization: float | None = None  # noqa: N815
    numRunningOpportContainers: int | None = None  # noqa: N815
    usedMemoryOpportGB: int | None = None  # noqa: N815
    usedVirtualCoresOpport: int | None = None  # noqa: N815
    numQueuedContainers: int | None = None  # noqa: N815
    nodeLabels: list[str] | str | None = None  # noqa: N815
    allocationTags: _Tags | None = None  # noqa: N815
    resourceUtilization: _Util | None = None  # noqa: N815
    usedResource: _Res | None = None  # noqa: N815
    availableResource: _Res | None = None  # noqa: N815
    nodeAttributesInfo: _Attrs | None = None  # noqa: N815
    totalResource: _Res | None = None  # noqa: N815


_DECODER = msgspec.json.Decoder(_Node)


_INFOS = msgspec.json.Decoder(_Infos | None)
_PLAIN_INFOS: dict[bytes, bool] = {}  # infos text -> "only memory-mb/vcores with default limits"
_PLAIN_INFOS_MAX = 4096


def _plain_infos(text: bytes) -> bool:
    infos = _INFOS.decode(text)
    if infos is None or infos.resourceInformation is None:
        return True  # null, {} and {"resourceInformation":null}: no other types, no limits
    return all(e.name in _BUILTIN and e.minimumAllocation in _DEFAULT_LO and e.maximumAllocation in _DEFAULT_HI
               for e in infos.resourceInformation)


@lru_cache(maxsize=8192)
def _plain_resource(memory_mb: int, vcores: int) -> Resource:
    """Resources are frozen values: equal ones are shared (fewer objects, less memory)."""
    return Resource(memory_mb, vcores)


def _resource(r: _Res | None) -> Resource | None:
    """As :func:`rm_client.wire.resources.decode_resource`. The ``resourceInformations`` text
    of a real RM repeats from node to node; whether it holds only memory-mb/vcores with the
    default limits (then only ``memory``/``vCores`` count) is decided once per distinct text.
    Any other vector is handed to the plain decoder with the typed values (absent and null
    are both None there, as in the plain reader)."""
    if r is None:
        return None
    text = bytes(r.resourceInformations)
    plain = _PLAIN_INFOS.get(text)
    if plain is None:
        plain = _plain_infos(text)
        if len(_PLAIN_INFOS) >= _PLAIN_INFOS_MAX:
            _PLAIN_INFOS.clear()
        _PLAIN_INFOS[text] = plain
    if plain:
        return _plain_resource(r.memory, r.vCores)
    infos = _INFOS.decode(text)
    assert infos is not None and infos.resourceInformation is not None
    listed = [{k: getattr(e, k) for k in e.__struct_fields__ if getattr(e, k) is not None}
              for e in infos.resourceInformation]
    doc = {"memory": r.memory, "vCores": r.vCores, "resourceInformations": {"resourceInformation": listed}}
    return decode_resource(doc, "")


def _list(v: list | object | None) -> list:  # type: ignore[type-arg]
    return v if type(v) is list else [] if v is None else [v]


def decode_node_raw(raw: msgspec.Raw | bytes) -> Node:
    """One NodeInfo element -> :class:`Node`; raises msgspec errors or :class:`Mismatch`."""
    n = _DECODER.decode(raw)
    labels = n.nodeLabels
    u = n.resourceUtilization
    tags = n.allocationTags
    tags = None if tags is None else tags.allocationTagInfo
    attrs = n.nodeAttributesInfo
    attrs = None if attrs is None else attrs.nodeAttributeInfo
    try:
        return Node(
            n.id, n.rack, n.state, n.nodeHostName, n.nodeHTTPAddress, n.lastHealthUpdate, n.version,
            n.healthReport, n.numContainers, n.usedMemoryMB, n.availMemoryMB, n.usedVirtualCores,
            n.availableVirtualCores, n.memUtilization, n.cpuUtilization, n.numRunningOpportContainers,
            n.usedMemoryOpportGB, n.usedVirtualCoresOpport, n.numQueuedContainers,
            () if labels is None else (labels,) if type(labels) is str else tuple(labels),
            () if tags is None else tuple(AllocationTag(t.allocationTag, t.allocationsCount) for t in _list(tags)),
            None if u is None else ResourceUtilization(
                u.nodePhysicalMemoryMB, u.nodeVirtualMemoryMB, u.nodeCPUUsage,
                u.aggregatedContainersPhysicalMemoryMB, u.aggregatedContainersVirtualMemoryMB, u.containersCPUUsage),
            _resource(n.usedResource),
            _resource(n.availableResource),
            () if attrs is None else tuple(NodeAttribute(a.prefix, a.name, a.type, a.value) for a in _list(attrs)),
            _resource(n.totalResource),
        )
    except Exception as exc:  # the plain decoder's error (RMDecodeError) or anything unforeseen
        raise Mismatch(str(exc)) from None

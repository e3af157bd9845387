"""``ResourceInfo``: memory in MB and vcores, plus any extra resource types (e.g. GPUs).

RM form (every ``*Resource``/``capability`` object of 3.3.6)::

    {"memory":8192,"vCores":8,"resourceInformations":{"resourceInformation":[
        {"attributes":{},"maximumAllocation":9223372036854775807,"minimumAllocation":0,
         "name":"memory-mb","resourceType":"COUNTABLE","units":"Mi","value":8192},
        {... "name":"vcores", "units":"", "value":8}]}}

``memory``/``vCores`` duplicate the ``memory-mb``/``vcores`` entries, so only the OTHER entries
are kept (in :attr:`Resource.others`). The reservation list writes all of it with numbers as
strings and ``"attributes":null`` (see :func:`encode_resource`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rm_client.wire._json import Field, Struct, dec_int, dec_str, fail, fstr, items, join, obj

__all__ = [
    "JAVA_LONG_MAX",
    "PARTITION_USAGE",
    "PartitionResourceUsage",
    "Resource",
    "ResourceInformation",
    "decode_resource",
    "encode_resource",
    "field_resource",
]

JAVA_LONG_MAX = 9223372036854775807
_BUILTIN = ("memory-mb", "vcores")
_DEFAULT_LO = (0, "0", None)
_DEFAULT_HI = (JAVA_LONG_MAX, str(JAVA_LONG_MAX), None)


@dataclass(frozen=True, slots=True)
class ResourceInformation:
    """One extra resource type (not memory or vcores), e.g. ``yarn.io/gpu``."""

    name: str
    value: int
    units: str = ""
    resource_type: str = "COUNTABLE"
    minimum_allocation: int = 0
    maximum_allocation: int = JAVA_LONG_MAX


@dataclass(frozen=True, slots=True)
class Resource:
    """A YARN resource vector. ``memory_mb`` in MB (MiB), ``vcores`` in virtual cores.

    ``builtin_limits``: ``(name, minimumAllocation, maximumAllocation)`` of the memory-mb or
    vcores entry when it is not the usual ``0 .. Long.MAX`` (the scheduler's configured queue
    resources carry the real limits there); kept so that encoding gives the RM's bytes back."""

    memory_mb: int
    vcores: int
    others: tuple[ResourceInformation, ...] = ()
    builtin_limits: tuple[tuple[str, int, int], ...] = ()

    def __str__(self) -> str:
        extra = "".join(f", {o.name}:{o.value}" for o in self.others)
        return f"<memory:{self.memory_mb}, vCores:{self.vcores}{extra}>"


def decode_resource(v: Any, where: str) -> Resource:
    if type(v) is not dict:
        v = obj(v, where)  # raises RMDecodeError: not an object
    mem = v.get("memory")
    vc = v.get("vCores")
    if mem is None:
        raise fail(where, "memory", "missing in resource")
    if vc is None:
        raise fail(where, "vCores", "missing in resource")
    memory_mb = mem if type(mem) is int else dec_int(mem, where, "memory")
    vcores = vc if type(vc) is int else dec_int(vc, where, "vCores")
    infos = v.get("resourceInformations")
    if infos is None:
        return Resource(memory_mb, vcores)
    # Fast path (almost every resource of a real RM): only memory-mb and vcores, default limits.
    entries = infos.get("resourceInformation") if type(infos) is dict else None
    if type(entries) is list and all(
        type(e) is dict and e.get("name") in _BUILTIN and e.get("minimumAllocation") in _DEFAULT_LO
        and e.get("maximumAllocation") in _DEFAULT_HI for e in entries
    ):
        return Resource(memory_mb, vcores)
    return _decode_informations(memory_mb, vcores, infos, join(where, "resourceInformations"))


def _decode_informations(memory_mb: int, vcores: int, infos: Any, w: str) -> Resource:
    others = []
    limits = []
    for i, info in enumerate(items(obj(infos, w).get("resourceInformation"), w, "resourceInformation")):
        wi = f"{w}.resourceInformation[{i}]"
        info = obj(info, wi)
        if info.get("name") in _BUILTIN:
            lo, hi = info.get("minimumAllocation"), info.get("maximumAllocation")
            if lo not in _DEFAULT_LO or hi not in _DEFAULT_HI:
                full = _decode_info(info, wi)
                limits.append((full.name, full.minimum_allocation, full.maximum_allocation))
            continue
        others.append(_decode_info(info, wi))
    return Resource(memory_mb, vcores, tuple(others), tuple(limits))


def _decode_info(info: dict[str, Any], where: str) -> ResourceInformation:
    def get(key: str, dec: Any, default: Any) -> Any:
        raw = info.get(key)
        return default if raw is None else dec(raw, where, key)

    name = info.get("name")
    if name is None:
        raise fail(where, "name", "missing in resourceInformation")
    value = info.get("value")
    if value is None:
        raise fail(where, "value", "missing in resourceInformation")
    return ResourceInformation(
        name=dec_str(name, where, "name"),
        value=dec_int(value, where, "value"),
        units=get("units", dec_str, ""),
        resource_type=get("resourceType", dec_str, "COUNTABLE"),
        minimum_allocation=get("minimumAllocation", dec_int, 0),
        maximum_allocation=get("maximumAllocation", dec_int, JAVA_LONG_MAX),
    )


def _info(name: str, value: int, units: str, rtype: str, lo: int, hi: int, strings: bool) -> dict[str, Any]:
    def s(n: int) -> Any:
        return str(n) if strings else n

    return {
        "attributes": None if strings else {},
        "maximumAllocation": s(hi),
        "minimumAllocation": s(lo),
        "name": name,
        "resourceType": rtype,
        "units": units,
        "value": s(value),
    }


def encode_resource(r: Resource, strings: bool = False, *, informations: bool = True) -> dict[str, Any]:
    """The RM's JSON for ``r``. ``strings``: the reservation-list form (numbers as strings,
    ``attributes`` null). ``informations=False``: the short request form ``{"memory","vCores"}``.
    The result may be shared between calls: treat it as read-only."""
    if informations and not r.others and not r.builtin_limits:
        return _plain(r.memory_mb, r.vcores, strings)
    return _encode(r, strings, informations)


@lru_cache(maxsize=8192)
def _plain(memory_mb: int, vcores: int, strings: bool) -> dict[str, Any]:
    """Memory and vcores only, the usual limits: the common case, built once per value."""
    return _encode(Resource(memory_mb, vcores), strings, True)


def _encode(r: Resource, strings: bool, informations: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "memory": str(r.memory_mb) if strings else r.memory_mb,
        "vCores": str(r.vcores) if strings else r.vcores,
    }
    if informations:
        limits = {name: (lo, hi) for name, lo, hi in r.builtin_limits}
        mem_lo, mem_hi = limits.get("memory-mb", (0, JAVA_LONG_MAX))
        vc_lo, vc_hi = limits.get("vcores", (0, JAVA_LONG_MAX))
        infos = [
            _info("memory-mb", r.memory_mb, "Mi", "COUNTABLE", mem_lo, mem_hi, strings),
            _info("vcores", r.vcores, "", "COUNTABLE", vc_lo, vc_hi, strings),
        ]
        infos += [
            _info(o.name, o.value, o.units, o.resource_type, o.minimum_allocation, o.maximum_allocation, strings)
            for o in r.others
        ]
        out["resourceInformations"] = {"resourceInformation": infos}
    return out


def _field_dec(raw: Any, where: str, key: str) -> Resource:
    return decode_resource(raw, join(where, key))


def field_resource(attr: str, key: str, optional: bool = True) -> Field:
    """A :class:`~rm_client.wire._json.Field` holding a :class:`Resource`."""
    return Field(attr, key, _field_dec, encode_resource, optional, None)


@dataclass(frozen=True, slots=True)
class PartitionResourceUsage:
    """One entry of ``resourceUsagesByPartition`` (apps' ``resourceInfo``, queues' and users'
    ``resources``): YARN allocations in one node-label partition (``""`` = default)."""

    partition_name: str
    used: Resource | None = None
    reserved: Resource | None = None
    pending: Resource | None = None
    am_used: Resource | None = None
    am_limit: Resource | None = None
    user_am_limit: Resource | None = None


PARTITION_USAGE: Struct[PartitionResourceUsage] = Struct(PartitionResourceUsage, [
    fstr("partition_name", "partitionName"),
    field_resource("used", "used"),
    field_resource("reserved", "reserved"),
    field_resource("pending", "pending"),
    field_resource("am_used", "amUsed"),
    field_resource("am_limit", "amLimit"),
    field_resource("user_am_limit", "userAmLimit"),
])

"""Shared pieces of the RM's JSON: resource blocks and small helpers.

Every resource in 3.3.6's natural JSON carries a `resourceInformations` block with the two
countable resources (captures/nodes.json); the reservation list prints the same block in
mapped form, all strings and `"attributes":null`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from harvester.domain import Resources
from harvester.emulator.jsonfmt import dumps

LONG_MAX = 9223372036854775807


def resource(memory: int, vcores: int) -> dict[str, Any]:
    """A natural-JSON ResourceInfo."""
    return {
        "memory": memory,
        "vCores": vcores,
        "resourceInformations": {"resourceInformation": [
            {"attributes": {}, "maximumAllocation": LONG_MAX, "minimumAllocation": 0, "name": "memory-mb",
             "resourceType": "COUNTABLE", "units": "Mi", "value": memory},
            {"attributes": {}, "maximumAllocation": LONG_MAX, "minimumAllocation": 0, "name": "vcores",
             "resourceType": "COUNTABLE", "units": "", "value": vcores},
        ]},
    }


def res(r: Resources) -> dict[str, Any]:
    return resource(r.memory_mb, r.vcores)


def zero() -> dict[str, Any]:
    return resource(0, 0)


@lru_cache(maxsize=4096)
def resource_text(memory: int, vcores: int) -> str:
    """The compact JSON text of a resource block (the /nodes fast path concatenates these)."""
    return dumps(resource(memory, vcores))


def mapped_resource(r: Resources) -> dict[str, Any]:
    """The reservation list's form: every value a string, attribute maps printed as null."""
    return {
        "memory": str(r.memory_mb),
        "vCores": str(r.vcores),
        "resourceInformations": {"resourceInformation": [
            {"attributes": None, "maximumAllocation": str(LONG_MAX), "minimumAllocation": "0", "name": "memory-mb",
             "resourceType": "COUNTABLE", "units": "Mi", "value": str(r.memory_mb)},
            {"attributes": None, "maximumAllocation": str(LONG_MAX), "minimumAllocation": "0", "name": "vcores",
             "resourceType": "COUNTABLE", "units": "", "value": str(r.vcores)},
        ]},
    }


def ms(t: float) -> int:
    return int(round(t * 1000))

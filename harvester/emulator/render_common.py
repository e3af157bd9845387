"""What every renderer shares: the emulator's values in rm_client's wire types, and the encoder.

The emulator writes every RM answer from rm_client.wire's field tables (the same tables the
client decodes with), so a key, a value kind or a list quirk cannot differ between the two
directions. This module converts the emulator's own values (harvester.domain.Resources, epoch
seconds, percentages) into the wire types and writes JSON text.
"""

from __future__ import annotations

from typing import Any

from harvester.domain import Resources
from rm_client.wire._json import dumps as _dumps
from rm_client.wire._json import java_float
from rm_client.wire.resources import Resource

ZERO = Resource(0, 0)


def res(r: Resources) -> Resource:
    return Resource(r.memory_mb, r.vcores)


def ms(t: float) -> int:
    return int(round(t * 1000))


def pct(part: float, whole: float) -> float:
    """A Java float percentage (0.0 when there is no whole)."""
    return java_float(100.0 * part / whole) if whole > 0 else 0.0


def dominant_pct(part: Resources, whole: Resources, cluster: Resources) -> float:
    """`part` as a percentage of `whole` the way the CapacityScheduler's DominantResourceCalculator
    divides (CSQueueUtils: Resources.divide(rc, cluster, part, whole)): the ratio of the two
    dominant shares of the cluster — 2560 MB / 5 vc of a 16384 MB / 16 vc queue is 31.25 %, not
    memory's 15.6 % (captures scheduler-running). 0.0 when there is no whole."""
    def dominant(r: Resources) -> float:
        return max((x / c for x, c in ((r.memory_mb, cluster.memory_mb), (r.vcores, cluster.vcores)) if c > 0),
                   default=0.0)

    w = dominant(whole)
    return java_float(100.0 * dominant(part) / w) if w > 0 else 0.0


def dumps(doc: Any) -> str:
    """Compact JSON as the RM writes it (repeated map keys included)."""
    return _dumps(doc).decode("utf-8")


__all__ = ["ZERO", "dominant_pct", "dumps", "java_float", "ms", "pct", "res"]

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


def dumps(doc: Any) -> str:
    """Compact JSON as the RM writes it (repeated map keys included)."""
    return _dumps(doc).decode("utf-8")


__all__ = ["ZERO", "dumps", "java_float", "ms", "pct", "res"]

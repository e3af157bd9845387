"""JSON encoding with the quirks of Hadoop 3.3.6's two JSON providers.

The RM answers with two different Jersey JSON providers (fixtures/yarn-3.3.6/captures):

- "natural" JAXB JSON (apps, nodes, scheduler, metrics, appattempts list): numbers are numbers,
  Java `float` fields print with at most 7 significant digits (`6.2020326`), lists stay lists
  even with one element, and a `Map` is written as an object with one repeated `"entry"` key
  per map entry (`"resourceSecondsMap":{"entry":{..},"entry":{..}}`, a duplicate-key object:
  a plain JSON parser keeps only the last entry). `DupKeys` renders that.
- "mapped" Jettison JSON (reservation list, one attempt, attempt containers): every scalar is a
  string, a one-element list collapses to the bare element and an empty result is `{}`.
  `mapped()` converts a natural tree into that form.

`dumps` is the only encoder the emulator uses; it is the C-accelerated `json` encoder with
compact separators (the RM sends no whitespace).
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable

import numpy as np

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)


class DupKeys(dict):  # type: ignore[type-arg]
    """An object written with repeated keys, in order (JAXB map adapter output).

    The stdlib encoder asks a dict subclass for `items()`, so the pairs come out verbatim. The
    placeholder entry only keeps the dict non-empty: an empty map must be written as `{}` by
    the caller (the RM does that too).
    """

    def __init__(self, pairs: Iterable[tuple[str, Any]]) -> None:
        self._pairs = list(pairs)
        super().__init__({"_": None} if self._pairs else {})

    def items(self):  # type: ignore[override]
        return self._pairs


def dumps(doc: Any) -> str:
    return _ENCODER.encode(doc)


def jfloat(x: float) -> float:
    """A Java `float` field as Jackson prints it: the shortest repr of the 32-bit value.

    Returned as a Python float whose repr is that text (e.g. 6.2020326, 0.0).
    """
    if not math.isfinite(x):
        return 0.0
    return float(str(np.float32(x)))


def mapped(value: Any) -> Any:
    """Natural JSON tree -> Jettison "mapped" form: scalars to strings, 1-lists collapsed.

    `None` stays `null` (the reservation list prints `"attributes":null` for the empty
    attribute map, which the caller passes as None). Booleans become "true"/"false".
    """
    if isinstance(value, dict):
        return {k: mapped(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [mapped(v) for v in value]
        return items[0] if len(items) == 1 else items
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def collapse(items: list[Any]) -> Any:
    """Jettison's list rule on its own: [] -> absent, [x] -> x, [x, y] -> [x, y]."""
    return items[0] if len(items) == 1 else items

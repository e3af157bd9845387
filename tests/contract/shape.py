"""Structural comparison of two RM answers (recorded vs emulated, or real vs emulated).

What must agree (fixtures/README.md): status code; content type; whether the body is empty,
JSON or plain text; for JSON, recursively the key multiset of every object (duplicate keys
such as the `"entry"` maps count), the kind of every value — object, list, string, numeric
string (the "numbers as strings" quirk), int, float, bool, null — and therefore the
one-element list collapse; for RemoteException bodies the exception class and the message
with digits normalized; for plain-text bodies the text with digits normalized.

Values are not compared (times, ids, sizes differ legitimately). Lists may differ in length;
elements are paired by an identity key when they carry one (`id`, `reservation-id`, ...),
else in order, else each emulated element against its closest recorded one.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

ID_KEYS = ("id", "reservation-id", "containerId", "appAttemptId", "queueName", "username", "name", "operation",
           "state", "key", "accessType")


class Obj(tuple):  # type: ignore[type-arg]
    """A JSON object as its (key, value) pairs, duplicates kept."""

    def keys(self) -> list[str]:
        return [k for k, _ in self]

    def get(self, key: str, default: Any = None) -> Any:
        return next((v for k, v in self if k == key), default)


def parse(text: str) -> Any:
    return json.loads(text, object_pairs_hook=Obj)


def kind(v: Any) -> str:
    if isinstance(v, Obj):
        return "object"
    if isinstance(v, list):
        return "list"
    if isinstance(v, bool):
        return "bool"
    if v is None:
        return "null"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str) and re.fullmatch(r"-?\d+(\.\d+)?", v):
        return "numeric-string"
    return "string"


def _compatible(recorded: str, actual: str) -> bool:
    # a recorded non-numeric string ("", "N/A") may legitimately hold digits in another state,
    # but a recorded numeric string must stay numeric (numbers-as-strings quirk)
    return recorded == actual or (recorded == "string" and actual == "numeric-string")


def compare(recorded: Any, actual: Any, path: str = "$") -> list[str]:
    """Differences in shape, as readable 'path: problem' lines (empty = same shape)."""
    kr, ka = kind(recorded), kind(actual)
    if not _compatible(kr, ka):
        return [f"{path}: recorded {kr}, emulated {ka}"]
    if kr == "object":
        return _compare_objects(recorded, actual, path)
    if kr == "list":
        return _compare_lists(recorded, actual, path)
    return []


def _compare_objects(recorded: Obj, actual: Obj, path: str) -> list[str]:
    rk, ak = Counter(recorded.keys()), Counter(actual.keys())
    diffs = []
    if rk != ak:
        missing = sorted((rk - ak).elements())
        extra = sorted((ak - rk).elements())
        diffs.append(f"{path}: keys differ; missing {missing}, extra {extra}")
    for key in rk.keys() & ak.keys():
        rvals = [v for k, v in recorded if k == key]
        avals = [v for k, v in actual if k == key]
        for i, (rv, av) in enumerate(zip(rvals, avals)):
            suffix = f"[dup {i}]" if len(rvals) > 1 else ""
            diffs += compare(rv, av, f"{path}.{key}{suffix}")
    return diffs


def _identity(v: Any) -> Any:
    if isinstance(v, Obj):
        for key in ID_KEYS:
            got = v.get(key)
            if isinstance(got, (str, int)):
                return (key, got)
    return None


def _compare_lists(recorded: list, actual: list, path: str) -> list[str]:
    if not recorded or not actual:
        return []
    ids_r = {_identity(v): v for v in recorded if _identity(v) is not None}
    diffs: list[str] = []
    if len(recorded) == len(actual) and all(_identity(v) is None for v in actual):
        for i, (rv, av) in enumerate(zip(recorded, actual)):
            diffs += compare(rv, av, f"{path}[{i}]")
        return diffs
    for i, av in enumerate(actual):
        rv = ids_r.get(_identity(av)) if _identity(av) is not None else None
        if rv is not None:
            diffs += compare(rv, av, f"{path}[{i}]")
            continue
        best = min((compare(r, av, f"{path}[{i}]") for r in recorded), key=len)
        diffs += best
    return diffs


def normalize(text: str) -> str:
    """Digits (ids, times, sizes, columns) do not have to match; words and structure do."""
    return re.sub(r"\d+", "#", text)


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: str


def _content_type(v: str) -> str:
    return v.replace(" ", "").lower()


def compare_answers(recorded: Answer, actual: Answer) -> list[str]:
    """Status, content type, body form, then shape (see the module docstring)."""
    diffs = []
    if recorded.status != actual.status:
        diffs.append(f"status: recorded {recorded.status}, emulated {actual.status}")
    if _content_type(recorded.content_type) != _content_type(actual.content_type):
        diffs.append(f"content type: recorded {recorded.content_type!r}, emulated {actual.content_type!r}")
    rb, ab = recorded.body.strip(), actual.body.strip()
    if not rb or not ab:
        if bool(rb) != bool(ab):
            diffs.append(f"body: recorded {'empty' if not rb else 'non-empty'}, emulated "
                         f"{'empty' if not ab else 'non-empty'}")
        return diffs
    if rb.startswith("<"):
        if not ab.startswith("<"):
            diffs.append("body: recorded XML, emulated not XML")
        return diffs
    try:
        rdoc = parse(rb)
    except ValueError:
        rdoc = None
    try:
        adoc = parse(ab)
    except ValueError:
        adoc = None
    if rdoc is None:
        if adoc is not None:
            return diffs + ["body: recorded plain text, emulated JSON"]
        if normalize(rb) != normalize(ab):
            diffs.append(f"plain text differs: recorded {rb[:120]!r}, emulated {ab[:120]!r}")
        return diffs
    if adoc is None:
        return diffs + [f"body: recorded JSON, emulated plain text {ab[:80]!r}"]
    diffs += compare(rdoc, adoc)
    rex = rdoc.get("RemoteException") if isinstance(rdoc, Obj) else None
    aex = adoc.get("RemoteException") if isinstance(adoc, Obj) else None
    if rex is not None and aex is not None:
        for key in ("exception", "javaClassName"):
            if rex.get(key) != aex.get(key):
                diffs.append(f"RemoteException.{key}: recorded {rex.get(key)!r}, emulated {aex.get(key)!r}")
        rm, am = rex.get("message"), aex.get("message")
        if rm is not None and am is not None and normalize(rm) != normalize(am):
            diffs.append(f"RemoteException.message: recorded {rm[:200]!r}, emulated {am[:200]!r}")
    return diffs

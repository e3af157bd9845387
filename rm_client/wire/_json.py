"""JSON primitives shared by every wire module: tolerant scalar readers, the RM's list quirks,
a declarative field table (:class:`Struct`) that both decodes and encodes one DAO, and
``loads``/``dumps`` that understand the RM's duplicate JSON keys.

Why a field table: each RM DAO is described once (JSON key, Python attribute, kind), and the
same table decodes RM answers for the client and encodes them for the emulator, so the two
cannot drift apart.

Quirks handled here (all recorded from a live 3.3.6 RM, see fixtures README):

* numbers sometimes arrive as strings (reservation list, ``server.webapp.dao`` attempt and
  container DAOs): every integer/float reader accepts ``123`` and ``"123"``;
* a one-element list is sometimes collapsed to the bare object, and an empty list is
  sometimes ``{}``, ``null`` or an absent key: :func:`items` accepts all of them;
* map-typed fields (``resourceSecondsMap``) are written as REPEATED keys
  (``{"entry":{..},"entry":{..}}``); plain ``json.loads`` would keep only the last one, so
  :func:`loads` merges repeated keys into a list, and :func:`dumps` writes a
  :class:`RepeatedKeys` object back with its repeated keys.

Every reader raises :class:`~rm_client.errors.RMDecodeError` naming the JSON path; nothing
else escapes.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rm_client.errors import RMDecodeError

__all__ = [
    "Field",
    "RepeatedKeys",
    "Struct",
    "collapse",
    "dec_bool",
    "dec_float",
    "dec_int",
    "dec_str",
    "decode_list",
    "dumps",
    "encode_list",
    "fail",
    "fbool",
    "fcustom",
    "ffloat",
    "fint",
    "flist",
    "fobj",
    "fstr",
    "fstrs",
    "items",
    "java_float",
    "join",
    "loads",
    "obj",
]

T = TypeVar("T")
Dec = Callable[[Any, str, str], Any]
Enc = Callable[[Any, bool], Any]

def join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def fail(where: str, key: str, reason: str) -> RMDecodeError:
    """The error to raise for ``where.key`` (returned, so callers write ``raise fail(...)``)."""
    return RMDecodeError(reason, where=join(where, key))


def _kind(v: Any) -> str:
    return "null" if v is None else type(v).__name__


# --- scalar readers: fast path for the JSON type the RM normally sends, slow path for strings


def dec_int(v: Any, where: str, key: str) -> int:
    if type(v) is int:
        return v
    if type(v) is str:
        try:
            return int(v.strip())
        except ValueError:
            raise fail(where, key, f"expected an integer, got the string {v[:40]!r}") from None
    if type(v) is float and v.is_integer():
        return int(v)
    raise fail(where, key, f"expected an integer, got {_kind(v)}")


def dec_float(v: Any, where: str, key: str) -> float:
    if type(v) is float:
        return v
    if type(v) is int:
        return float(v)
    if type(v) is str:
        try:
            return float(v.strip())
        except ValueError:
            raise fail(where, key, f"expected a number, got the string {v[:40]!r}") from None
    raise fail(where, key, f"expected a number, got {_kind(v)}")


def dec_str(v: Any, where: str, key: str) -> str:
    if type(v) is str:
        return v
    if type(v) in (int, float):  # harmless: a number where the RM usually sends text
        return str(v)
    raise fail(where, key, f"expected a string, got {_kind(v)}")


def dec_bool(v: Any, where: str, key: str) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str and v.lower() in ("true", "false"):
        return v.lower() == "true"
    raise fail(where, key, f"expected true/false, got {_kind(v)}")


def obj(v: Any, where: str, key: str = "") -> dict[str, Any]:
    if type(v) is dict:
        return v
    raise RMDecodeError(f"expected an object, got {_kind(v)}", where=join(where, key) if key else where)


def items(v: Any, where: str, key: str = "") -> list[Any]:
    """The elements of an RM list: array, a collapsed single object, ``{}``/``null``/absent = []."""
    if type(v) is list:
        return v
    if v is None:
        return []
    if type(v) is dict:
        return [v] if v else []
    raise RMDecodeError(f"expected a list or an object, got {_kind(v)}", where=join(where, key) if key else where)


def collapse(values: list[Any]) -> Any:
    """The RM's non-array list form: one element -> the bare element, else a JSON array."""
    return values[0] if len(values) == 1 else values


def java_float(x: float) -> float:
    """A Java ``float`` field as the RM's Jackson prints it: the shortest decimal that names
    the same 32-bit value (``6.2020326``, ``12.5``). Returned as a Python float whose repr is
    that text, so encoding it gives the RM's digits."""
    if not math.isfinite(x):
        return 0.0
    f32 = struct.unpack("f", struct.pack("f", x))[0]
    # a float32 has 6-9 significant digits; `g` drops trailing zeros, so fewer come out as such
    for digits in range(6, 10):
        text = f"{f32:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f32:
            return float(text)
    return f32


# --- the field table


@dataclass(frozen=True, slots=True)
class Field:
    """One JSON key of a DAO. ``dec(raw, where, key)`` reads it, ``enc(value, strings)`` writes
    it (``strings``: the caller wants every number as a string, the reservation-list form).
    A missing or ``null`` key gives ``default`` when ``optional`` (otherwise a decode error);
    on encode a value equal to ``default`` of an optional field is left out, so absent keys
    stay absent."""

    attr: str
    key: str
    dec: Dec
    enc: Enc
    optional: bool = False
    default: Any = None
    always: bool = False  # write even when equal to ``default`` (the RM writes {} for empty)


def _enc_scalar(v: Any, strings: bool) -> Any:
    if not strings or type(v) is str:
        return v
    if type(v) is bool:
        return "true" if v else "false"
    return str(v)


def fint(attr: str, key: str, optional: bool = False, default: Any = None, always: bool = False) -> Field:
    return Field(attr, key, dec_int, _enc_scalar, optional, default, always)


def ffloat(attr: str, key: str, optional: bool = False, default: Any = None, always: bool = False) -> Field:
    return Field(attr, key, dec_float, _enc_scalar, optional, default, always)


def fstr(attr: str, key: str, optional: bool = False, default: Any = None, always: bool = False) -> Field:
    return Field(attr, key, dec_str, _enc_scalar, optional, default, always)


def fbool(attr: str, key: str, optional: bool = False, default: Any = None, always: bool = False) -> Field:
    return Field(attr, key, dec_bool, _enc_scalar, optional, default, always)


def fobj(attr: str, key: str, struct: Struct[Any], optional: bool = False) -> Field:
    return Field(attr, key, struct.field_decoder, struct.encode, optional, None)


def flist(attr: str, key: str, struct: Struct[Any], *, inner: str | None = None, array: bool = True,
          optional: bool = True, default: Any = (), always: bool = False) -> Field:
    """A list of ``struct`` under ``key`` (or under ``key.inner`` for wrapped lists such as
    ``"timeouts":{"timeout":[...]}``). ``array``: the RM writes a JSON array even for one
    element (its JAXB "arrays" set); otherwise one element is collapsed to the bare object.
    A wrapped empty list is written ``{}``; ``always`` writes it even though it is empty;
    ``default=None`` keeps "key absent" (None) apart from "empty" (())."""

    def dec(raw: Any, where: str, k: str) -> tuple[Any, ...]:
        if not raw and type(raw) is dict:  # the RM's {} for an empty list: nothing to read
            return ()
        w = join(where, k)
        if inner is not None:
            raw = obj(raw, w).get(inner)
            w = join(w, inner)
        return tuple(struct.decode(x, f"{w}[{i}]") for i, x in enumerate(items(raw, w)))

    def enc(values: Sequence[Any], strings: bool) -> Any:
        out = [struct.encode(x, strings) for x in values]
        body: Any = out if array else collapse(out)
        if inner is None:
            return body
        return {inner: body} if out else {}

    return Field(attr, key, dec, enc, optional, default, always)


def fcustom(attr: str, key: str, dec: Dec, enc: Enc, optional: bool = False, default: Any = None,
            always: bool = False) -> Field:
    return Field(attr, key, dec, enc, optional, default, always)


class Struct(Generic[T]):
    """Decode/encode one DAO (a JSON object) from/to the frozen dataclass ``cls``."""

    __slots__ = ("cls", "fields", "name", "_plan")

    def __init__(self, cls: type[T], fields: Iterable[Field]) -> None:
        self.cls = cls
        self.fields = tuple(fields)
        self.name = cls.__name__
        # Hot loop plan: a value already of the field's JSON type is taken as is (no call);
        # anything else (strings for numbers, null, nested objects) goes through ``dec``.
        self._plan = tuple(
            (f.attr, f.key, f.dec, f.optional, f.default, _FAST_TYPES.get(f.dec, _NoFastPath))
            for f in self.fields
        )

    def decode(self, v: Any, where: str) -> T:
        if type(v) is not dict:
            raise RMDecodeError(f"expected a {self.name} object, got {_kind(v)}", where=where)
        kwargs: dict[str, Any] = {}
        get = v.get
        for attr, key, dec, optional, default, fast_type in self._plan:
            raw = get(key)
            if type(raw) is fast_type:
                kwargs[attr] = raw
            elif raw is None:
                if not optional:
                    raise fail(where, key, f"missing in {self.name}")
                kwargs[attr] = default
            else:
                kwargs[attr] = dec(raw, where, key)
        return self.cls(**kwargs)

    def field_decoder(self, raw: Any, where: str, key: str) -> T:
        return self.decode(raw, join(where, key))

    def encode(self, value: T, strings: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in self.fields:
            v = getattr(value, f.attr)
            if f.optional and (v is None or (v == f.default and not f.always)):
                continue
            # scalars in the natural form are written as they are (the hot path of big answers)
            out[f.key] = v if f.enc is _enc_scalar and not strings else f.enc(v, strings)
        return out


class _NoFastPath:  # a type no JSON value has
    pass


_FAST_TYPES: dict[Any, type] = {dec_int: int, dec_float: float, dec_str: str, dec_bool: bool}


def _dec_strs(raw: Any, where: str, key: str) -> tuple[str, ...]:
    w = join(where, key)
    if type(raw) is str:  # a one-element list collapsed to the bare string
        return (raw,)
    return tuple(dec_str(x, w, str(i)) for i, x in enumerate(items(raw, w)))


def _enc_strs(values: tuple[str, ...], strings: bool) -> list[str]:
    return list(values)


def fstrs(attr: str, key: str) -> Field:
    """An optional list of strings (``nodeLabels``), absent = ()."""
    return Field(attr, key, _dec_strs, _enc_strs, True, ())


def decode_list(doc: Any, outer: str | None, inner: str, struct: Struct[T]) -> tuple[T, ...]:
    """``{outer: {inner: [..]}}`` (or ``{inner: [..]}`` when ``outer`` is None), with the RM's
    list quirks: collapsed single element, ``{}``/``null``/absent = ()."""
    container: Any = obj(doc, "")
    where = ""
    if outer is not None:
        container = container.get(outer)
        if container is None:
            return ()
        container = obj(container, outer)
        where = outer
    decode = struct.decode
    w = join(where, inner)
    return tuple(decode(x, f"{w}[{i}]") for i, x in enumerate(items(container.get(inner), w)))


def encode_list(outer: str | None, inner: str, values: Sequence[Any], struct: Struct[Any], *,
                strings: bool = False) -> dict[str, Any]:
    """The RM's list answer: ``{outer: {inner: [..]}}``, an empty list written ``{outer: {}}``
    (``{}`` when ``outer`` is None), an array even for one element (the RM's JAXB arrays)."""
    body = {inner: [struct.encode(v, strings) for v in values]} if values else {}
    return body if outer is None else {outer: body}


# --- bytes <-> JSON


class RepeatedKeys(dict):  # type: ignore[type-arg]
    """An object whose key repeats (``{"entry":{..},"entry":{..}}``), the RM's form for
    map-typed fields. The JSON encoder asks a dict subclass for its ``items()``, so the pairs are
    written verbatim, in order (by the C encoder). The dict itself holds the first pair only, to
    be non-empty (an empty dict is written ``{}`` without asking)."""

    def __init__(self, pairs: Iterable[tuple[str, Any]]) -> None:
        self.pairs = list(pairs)
        super().__init__(self.pairs[:1])

    def items(self):  # type: ignore[override]
        return self.pairs

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RepeatedKeys) and other.pairs == self.pairs

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RepeatedKeys({self.pairs!r})"


def _merge_repeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) == len(pairs):
        return d
    merged: dict[str, Any] = {}
    seen_twice: set[str] = set()
    for k, v in pairs:
        if k in merged:
            if k not in seen_twice:
                merged[k] = [merged[k]]
                seen_twice.add(k)
            merged[k].append(v)
        else:
            merged[k] = v
    return merged


def loads(body: bytes | str, *, merge_repeated_keys: bool = True) -> Any:
    """Parse an RM body. Repeated keys become a list (the RM's map form) unless
    ``merge_repeated_keys`` is False (faster; use it only for DAOs without maps, e.g. nodes)."""
    try:
        if merge_repeated_keys:
            return json.loads(body, object_pairs_hook=_merge_repeated)
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        raise RMDecodeError(f"body is not JSON ({exc})", snippet=text[:200]) from None


def dumps(doc: Any) -> bytes:
    """Compact UTF-8 JSON as the RM (Jackson) writes it: no spaces, non-ASCII kept as is;
    :class:`RepeatedKeys` objects keep their repeated keys."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()

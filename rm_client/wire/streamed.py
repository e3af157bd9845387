"""Memory-bounded decode of the big list answers (``/nodes``, ``/apps``), issue 29.

The plain path (:func:`rm_client.wire._json.loads` then the field tables) builds the whole
answer as Python dicts first: a 61 MB ``/nodes`` answer took 1.5 GB. Here msgspec
(https://jcristharif.com/msgspec/) reads the envelope and cuts the list into one raw byte
span per element (views into the body, no copy); each element is decoded on its own and its
intermediate objects die before the next one, so memory is the body plus the models.

``/nodes`` elements are read by a msgspec typed decode of the RM's JSON shape
(:mod:`rm_client.wire.nodes_typed`), ``/apps`` elements by the plain per-element path (their
repeated-key maps need :func:`loads`).

Identity with the plain path is by construction, not by imitation: the fast path accepts only
inputs on which it gives the plain path's result (valid strict UTF-8 starting with ``{``,
msgspec-valid JSON, the usual types); anything else — a quirk the typed shape does not cover,
a malformed answer, a repeated key in the envelope — goes to the plain path, which gives
today's result or today's error, word for word.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from typing import Any

import msgspec

from rm_client.errors import RMDecodeError
from rm_client.wire._json import Struct, loads

__all__ = ["FALLBACK", "Mismatch", "decode_list_streamed"]

FALLBACK = object()  # "use the plain path" (returned, never raised to callers)


class Mismatch(Exception):
    """Raised by a fast element decoder for an input it does not promise to decode as the
    plain path would (the element then takes the plain path)."""
_LEAD = re.compile(rb"[ \t\n\r]*\{")
_NULL = msgspec.Raw(b"null")
_CHUNK = 1 << 20


def _plain_utf8(body: bytes) -> bool:
    """The body is strict UTF-8 starting with ``{``: then ``json.loads`` (which guesses the
    encoding and decodes with surrogatepass) and msgspec see the same text."""
    if _LEAD.match(body) is None:
        return False
    if body.isascii():
        return True
    dec = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(body)
    try:
        for i in range(0, len(body), _CHUNK):
            dec.decode(view[i:i + _CHUNK])
        dec.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


_HEADROOM = 32


def _with_headroom(frames: int, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` called ``frames`` Python frames deeper. Both parsers count nesting against
    the interpreter's recursion limit from the current stack depth; the plain path goes
    through a few more frames (json.loads, decode, raw_decode, the hook). Checking the body's
    nesting with this headroom makes msgspec refuse (-> plain path, today's error) every body
    json would refuse for depth, instead of accepting a few levels json rejects."""
    if frames:
        return _with_headroom(frames - 1, fn, *args)
    return fn(args[0], type=args[1])


def _envelope_types(outer: str, inner: str) -> type:
    wrap = msgspec.defstruct("Wrap", [("items", msgspec.Raw, _NULL)], rename={"items": inner})
    return msgspec.defstruct("Env", [("body", wrap | None, None)], rename={"body": outer})


_ENVS: dict[tuple[str, str], type] = {}


def _envelope_unique(body: bytes, raw: msgspec.Raw, outer: str, inner: str) -> bool:
    """For endpoints whose plain path merges repeated keys: the envelope outside the list
    has no repeated key (the list is replaced by ``0`` and the tiny rest parsed as today)."""
    view = memoryview(raw)
    n = len(view)
    start = body.find(bytes(view[:64]))
    if start < 0 or start + n > len(body):
        return False
    for i in range(0, n, _CHUNK):  # the span is the list's own bytes (memcmp by chunks, no big copy)
        if bytes(view[i:i + _CHUNK]) != body[start + i:start + min(n, i + _CHUNK)]:
            return False
    skeleton = body[:start] + b"0" + body[start + n:]
    try:
        doc = loads(skeleton)
    except RMDecodeError:
        return False
    wrap = doc.get(outer) if type(doc) is dict else None
    return type(wrap) is dict and type(wrap.get(inner)) is int and wrap.get(inner) == 0


def decode_list_streamed(body: Any, outer: str, inner: str, struct: Struct[Any], *, merge_repeated_keys: bool,
                         element: Callable[[msgspec.Raw], Any] | None = None) -> Any:
    """``{outer: {inner: [..]}}`` element by element, or :data:`FALLBACK`.

    ``element(raw)``: a fast decoder of one element's bytes that raises
    ``msgspec.MsgspecError`` or :class:`Mismatch` where it cannot promise the plain result; the element then goes through ``loads`` + ``struct.decode``. Any
    :class:`RMDecodeError` also returns FALLBACK, so the caller's plain path raises it as today.
    """
    if type(body) is not bytes or not _plain_utf8(body):
        return FALLBACK
    env_type = _ENVS.get((outer, inner))
    if env_type is None:
        env_type = _ENVS[(outer, inner)] = _envelope_types(outer, inner)
    try:
        env = _with_headroom(_HEADROOM, msgspec.json.decode, body, env_type)
    except (msgspec.MsgspecError, RecursionError):
        return FALLBACK
    wrap = getattr(env, "body")
    if wrap is None:
        return ()
    raw = getattr(wrap, "items")
    lead = bytes(memoryview(raw)[:1])
    if lead == b"n":
        return ()
    if lead != b"[" and lead != b"{":
        return FALLBACK  # a scalar where the list belongs: today's error
    if merge_repeated_keys and not _envelope_unique(body, raw, outer, inner):
        return FALLBACK
    try:
        parts = msgspec.json.decode(raw, type=list[msgspec.Raw]) if lead == b"[" else [raw]
    except (msgspec.MsgspecError, RecursionError):
        return FALLBACK
    where = f"{outer}.{inner}"
    out = []
    try:
        for i, part in enumerate(parts):
            w = f"{where}[{i}]"
            if element is not None:
                try:
                    out.append(element(part))
                    continue
                except (msgspec.MsgspecError, Mismatch, RecursionError):
                    pass
            # strict UTF-8 (checked above): the same text json.loads(bytes) would decode, faster
            doc = loads(bytes(part).decode(), merge_repeated_keys=merge_repeated_keys)
            if lead == b"{" and type(doc) is dict and not doc:
                return ()  # the RM's {} for an empty list
            out.append(struct.decode(doc, w))
    except RMDecodeError:
        return FALLBACK
    return tuple(out)

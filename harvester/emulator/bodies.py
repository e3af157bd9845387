"""Reading request bodies the way the RM's Jackson/JAXB stack does (captures/err-*).

A body Jackson cannot parse gives 400 WebApplicationException whose message embeds Jackson's
own wording and the 1-based line/column where it stopped, e.g.
`JsonEOFException: Unexpected end-of-input within/between Object entries\n at [Source:
(BufferedReader); line: 2, column: 1]`. `parse_json` reproduces the three recorded forms:
EOF where a value or field name is due, EOF where `,`/`}` is due (names the object's start
marker), and an unrecognized token.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from harvester.emulator.errors import RestError, unmarshal

_SOURCE = "[Source: (BufferedReader); line: {line}, column: {col}]"
_TOKEN = re.compile(r"[A-Za-z0-9_$+\-.]+")


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _at(text: str, offset: int) -> str:
    line, col = _position(text, offset)
    return _SOURCE.format(line=line, col=col)


def _jackson_message(text: str) -> str:
    """Jackson's message for an invalid document (called only when json.loads failed)."""
    i, n = 0, len(text)
    stack: list[tuple[str, int]] = []  # (container kind, offset of its start marker)
    expect = "value"  # value | key | colon | comma_or_end
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        ch = text[i]
        if expect in ("value", "key") and ch == '"':
            m = re.compile(r'"(?:[^"\\]|\\.)*"').match(text, i)
            if m is None:
                i = n
                break
            i = m.end()
            expect = "colon" if expect == "key" else "comma_or_end"
        elif expect == "value" and ch in "{[":
            stack.append((ch, i))
            i += 1
            expect = "key" if ch == "{" else "value"
        elif expect == "colon" and ch == ":":
            i += 1
            expect = "value"
        elif expect in ("comma_or_end", "key", "value") and ch in "}]" and stack:
            stack.pop()
            i += 1
            expect = "comma_or_end"
        elif expect == "comma_or_end" and ch == "," and stack:
            i += 1
            expect = "key" if stack[-1][0] == "{" else "value"
        elif expect == "value":
            m = _TOKEN.match(text, i)
            tok = m.group(0) if m else ch
            end = i + len(tok)
            if tok in ("true", "false", "null") or re.fullmatch(r"-?\d+(\.\d+)?([eE][+-]?\d+)?", tok):
                i = end
                expect = "comma_or_end"
                continue
            return ("com.fasterxml.jackson.core.JsonParseException: Unrecognized token '" + tok + "': was expecting "
                    "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at " + _at(text, end))
        else:
            return f"com.fasterxml.jackson.core.JsonParseException: Unexpected character ('{ch}')\n at " + _at(text, i + 1)
    if stack and stack[-1][0] == "{":
        if expect == "comma_or_end":
            start = _at(text, stack[-1][1]).rstrip("]").replace("[", "", 1)
            return ("com.fasterxml.jackson.core.io.JsonEOFException: Unexpected end-of-input: expected close marker for "
                    f"Object (start marker at [{start}])\n at " + _at(text, n))
        return ("com.fasterxml.jackson.core.io.JsonEOFException: Unexpected end-of-input within/between Object entries\n at "
                + _at(text, n))
    if stack:
        return ("com.fasterxml.jackson.core.io.JsonEOFException: Unexpected end-of-input: expected close marker for "
                "Array\n at " + _at(text, n))
    return "com.fasterxml.jackson.core.io.JsonEOFException: No content to map due to end-of-input\n at " + _at(text, n)


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or a RestError worded like the RM's (400 WebApplicationException)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise unmarshal(f"[javax.xml.stream.XMLStreamException: {_jackson_message(text)}]") from None


def parse_xml(raw: bytes) -> dict[str, Any]:
    """A small XML body as nested dicts of strings (the RM also accepts XML for writes)."""
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        raise unmarshal(f"[org.xml.sax.SAXParseException; {exc}]") from None

    def walk(el: ET.Element) -> Any:
        kids = list(el)
        if not kids:
            return (el.text or "").strip()
        return {k.tag: walk(k) for k in kids}

    return {root.tag: walk(root)}


def parse_body(raw: bytes, content_type: str) -> Any:
    if "xml" in content_type.lower():
        return parse_xml(raw)
    return parse_json(raw)


def as_int(value: Any, default: int = 0) -> int:
    """A JSON or XML number field (XML gives strings); non-numbers read as `default`."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return default
    return default


def ensure_object(body: Any) -> dict[str, Any]:
    """JAXB reads a non-object JSON body as an empty bean (every field unset)."""
    return body if isinstance(body, dict) else {}


__all__ = ["RestError", "as_int", "ensure_object", "parse_body", "parse_json", "parse_xml"]

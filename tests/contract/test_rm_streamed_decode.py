"""The memory-bounded decode of ``/nodes`` and ``/apps`` (rm_client/wire/streamed.py, issue 29)
gives exactly what the plain path gives (json parse of the whole body, then the field tables):
on every recorded capture, on every node object recorded anywhere, and on answers perturbed
at random into the RM's quirks and into malformed bodies (same model, or the same error:
class, message, JSON path, snippet).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rm_capture_index import load_index

from rm_client.endpoints import ENDPOINTS, decode_answer, match
from rm_client.errors import RMError
from rm_client.wire import streamed
from rm_client.wire._json import loads
from rm_client.wire.nodes import NODE
from rm_client.wire.nodes_typed import decode_node_raw

CAPTURES = load_index()
STREAMED = ("nodes", "apps")


def _plain(name: str) -> Any:
    """The endpoint as it was before issue 29: no streamed body decoder."""
    return dataclasses.replace(ENDPOINTS[name], decode_body=None)


def _outcome(endpoint: Any, body: bytes) -> Any:
    try:
        return ("ok", decode_answer(endpoint, 200, body))
    except RMError as err:
        return ("error", type(err).__name__, str(err), getattr(err, "where", None), getattr(err, "snippet", None))


def _same(name: str, body: bytes) -> None:
    assert _outcome(ENDPOINTS[name], body) == _outcome(_plain(name), body)


def test_the_list_endpoints_use_the_streamed_decoder() -> None:
    assert all(ENDPOINTS[n].decode_body is not None for n in STREAMED)


@pytest.mark.parametrize("capture", [c for c in CAPTURES if c.status < 300 and c.method == "GET"
                                     and (m := match("GET", c.path)) is not None and m[0].name in STREAMED],
                         ids=lambda c: c.name)
def test_every_recorded_list_answer_decodes_as_before(capture: Any) -> None:
    name = match("GET", capture.path)[0].name  # type: ignore[index]
    body = capture.body
    fast = ENDPOINTS[name].decode_body(body)  # type: ignore[misc]
    assert fast is not streamed.FALLBACK, "a recorded answer should not need the plain path"
    assert fast == _plain(name).decode(loads(body, merge_repeated_keys=ENDPOINTS[name].merge_repeated_keys))
    _same(name, body)


def _recorded_nodes() -> list[dict[str, Any]]:
    out = []
    for c in CAPTURES:
        if c.status >= 300 or not c.body_file.name.endswith(".json") or not c.body.strip():
            continue
        try:
            doc = json.loads(c.body)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("node"), dict):
            out.append(doc["node"])
        if isinstance(doc, dict) and isinstance(doc.get("nodes"), dict):
            nodes = doc["nodes"].get("node")
            out.extend(nodes if isinstance(nodes, list) else [nodes] if nodes else [])
    return out


NODES = _recorded_nodes()


def test_every_recorded_node_object_decodes_typed_as_plain() -> None:
    assert len(NODES) >= 10
    for node in NODES:
        raw = json.dumps(node).encode()
        assert decode_node_raw(msgspec.Raw(raw)) == NODE.decode(node, "n")


# --- random quirks and damage


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                     st.text(max_size=6), st.sampled_from(["12", " 7 ", "1e3", "true", "-1", "0"]),
                     st.just({}), st.just([]))


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, prefix + (i,))
    return out


def _mutate(doc: Any, path: tuple, how: str, value: Any) -> Any:
    if not path:
        return value if how == "set" else doc
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if how == "set":
        parent[last] = value
    elif how == "delete" and isinstance(parent, dict):
        del parent[last]
    elif how == "collapse" and isinstance(parent[last], list) and len(parent[last]) == 1:
        parent[last] = parent[last][0]
    elif how == "stringify" and isinstance(parent[last], int | float) and not isinstance(parent[last], bool):
        parent[last] = str(parent[last])
    elif how == "empty" and isinstance(parent[last], list | dict):
        parent[last] = {}
    return doc


def _template(name: str) -> dict[str, Any]:
    for c in CAPTURES:
        m = match("GET", c.path) if c.method == "GET" else None
        if m and m[0].name == name and c.status == 200 and len(c.body) > 500:
            return json.loads(c.body)
    raise AssertionError(name)


TEMPLATES = {n: _template(n) for n in STREAMED}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(STREAMED), data=st.data(),
       hows=st.lists(st.sampled_from(["set", "delete", "collapse", "stringify", "empty"]), min_size=1, max_size=3))
def test_random_quirks_and_damage_give_the_same_model_or_error(name: str, data: Any, hows: list[str]) -> None:
    doc = json.loads(json.dumps(TEMPLATES[name]))
    for how in hows:
        path = data.draw(st.sampled_from(_paths(doc)))
        doc = _mutate(doc, path, how, data.draw(_SCALARS))
    body = json.dumps(doc, separators=(",", ":")).encode()
    _same(name, body)
    # byte-level damage: truncation, a stray byte, a repeated key
    cut = data.draw(st.integers(0, len(body)))
    _same(name, body[:cut])
    at = data.draw(st.integers(0, len(body)))
    _same(name, body[:at] + data.draw(st.sampled_from([b"\xff", b"\x00", b",", b"}", b"NaN", b"\xc3\xa9"])) + body[at:])
    key = b'"id":' if name == "nodes" else b'"name":'
    _same(name, body.replace(key, key + b'"x","id":' if name == "nodes" else key + b'"x","name":', 1))


@pytest.mark.parametrize("body", [
    b"", b"   ", b"null", b"[]", b"{}", b'{"nodes":null}', b'{"nodes":{}}', b'{"nodes":{"node":{}}}',
    b'{"nodes":{"node":null}}', b'{"nodes":{"node":7}}', b'{"nodes":{"node":[7]}}', b'{"nodes":[]}',
    b'{"nodes":{"node":[]}} trailing', b'\xef\xbb\xbf{"nodes":{}}', b'{"nodes":{"node":[{"id":"\\ud800"}]}}',
    b'{"apps":{"app":[]},"apps":{"app":[]}}', b'{"apps":{"app":{},"app":{}}}', b'{"apps":{"app":{}}}',
    b'{"apps":{"app":[{"id":1}]}}', b'{"apps":{"app":[NaN]}}', '{"apps":{"app":[{"name":"\u00e9"}]}}'.encode(),
])
def test_edge_bodies(body: bytes) -> None:
    for name in STREAMED:
        _same(name, body)


def _at_stack_depth(frames: int, fn: Any) -> Any:
    return _at_stack_depth(frames - 1, fn) if frames else fn()


@pytest.mark.parametrize("name", STREAMED)
@pytest.mark.parametrize("stack", [0, 200])
def test_nesting_near_the_recursion_limit_gives_the_same_result_or_error(name: str, stack: int) -> None:
    """Both parsers count nesting against the recursion limit from the caller's stack depth:
    around that depth, the streamed path must still agree with the plain one (no
    RecursionError escaping, no body accepted that the plain path refuses)."""
    node = TEMPLATES["nodes"]["nodes"]["node"][0]
    limit = sys.getrecursionlimit()
    for depth in range(limit - 80 - stack, limit + 5 - stack):
        deep = "[" * depth + "]" * depth
        element = json.dumps(node)[:-1] if name == "nodes" else '{"id":"a"'
        body = (f'{{"{name}":{{"{name[:-1]}":[{element},"zz":{deep}}}]}}}}').encode()
        _at_stack_depth(stack, lambda: _same(name, body))  # noqa: B023

"""Node-label READ endpoints (captures ``get-node-labels``, ``get-node-to-labels``,
``label-mappings``, ``nodes-id-get-labels``; all recorded with labels disabled).

Recorded empty forms: ``{}`` (get-node-labels, nodes/{id}/get-labels),
``{"nodeToLabels":null}``, ``{"labelsToNodes":null}``. The non-empty forms follow the 3.3.6
DAOs (``NodeLabelsInfo`` = ``{"nodeLabelInfo":[{"name","exclusivity"}]}``;
``NodeToLabelsInfo``/``LabelsToNodesInfo`` are JAXB maps written as ``{"entry":[{"key",
"value"}]}``) and were NOT recorded live, so the decoders also accept the plain-object map
form and collapsed lists. Writes (add/remove/replace labels) answer 400 while
``yarn.node-labels.enabled=false`` and are not offered by the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rm_client.wire._json import Struct, dec_str, decode_list, encode_list, fbool, fstr, items, join, obj

__all__ = [
    "NodeLabel",
    "decode_labels_to_nodes",
    "decode_node_labels",
    "decode_node_to_labels",
    "encode_labels_to_nodes",
    "encode_node_labels",
    "encode_node_to_labels",
]


@dataclass(frozen=True, slots=True)
class NodeLabel:
    name: str
    exclusivity: bool = True


NODE_LABEL: Struct[NodeLabel] = Struct(NodeLabel, [fstr("name", "name"), fbool("exclusivity", "exclusivity", True, True)])


def decode_node_labels(doc: Any) -> tuple[NodeLabel, ...]:
    """``{"nodeLabelInfo":[..]}`` or ``{}`` (no labels)."""
    return decode_list(doc, None, "nodeLabelInfo", NODE_LABEL)


def encode_node_labels(labels: tuple[NodeLabel, ...] | list[NodeLabel]) -> dict[str, Any]:
    return encode_list(None, "nodeLabelInfo", labels, NODE_LABEL)


def _label_names(raw: Any, where: str) -> tuple[str, ...]:
    """A label set in any of its forms: NodeLabelsInfo object, list of names/objects, a name."""
    if type(raw) is str:
        return (raw,)
    if type(raw) is dict and "nodeLabelInfo" in raw:
        raw = raw["nodeLabelInfo"]
    names = []
    for i, x in enumerate(items(raw, where)):
        w = f"{where}[{i}]"
        names.append(NODE_LABEL.decode(x, w).name if type(x) is dict else dec_str(x, w, ""))
    return tuple(names)


def _map_entries(raw: Any, where: str) -> list[tuple[Any, Any, str]]:
    """(key, value, where) of a JAXB map in entry form or plain-object form."""
    if raw is None:
        return []
    d = obj(raw, where)
    if "entry" in d:
        w = join(where, "entry")
        out = []
        for i, e in enumerate(items(d["entry"], w)):
            we = f"{w}[{i}]"
            e = obj(e, we)
            out.append((e.get("key"), e.get("value"), we))
        return out
    return [(k, v, join(where, k)) for k, v in d.items()]


def decode_node_to_labels(doc: Any) -> dict[str, tuple[str, ...]]:
    """``{"nodeToLabels":null}`` (none) or a map node id -> label names."""
    out: dict[str, tuple[str, ...]] = {}
    for key, value, w in _map_entries(obj(doc, "").get("nodeToLabels"), "nodeToLabels"):
        out[dec_str(key, w, "key")] = _label_names(value, join(w, "value"))
    return out


def encode_node_to_labels(mapping: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    if not mapping:
        return {"nodeToLabels": None}
    entries = [
        {"key": node, "value": {"nodeLabelInfo": [{"name": n, "exclusivity": True} for n in names]}}
        for node, names in mapping.items()
    ]
    return {"nodeToLabels": {"entry": entries}}


def decode_labels_to_nodes(doc: Any) -> dict[str, tuple[str, ...]]:
    """``{"labelsToNodes":null}`` (none) or a map label -> node ids (``NodeIDsInfo.nodeId``)."""
    out: dict[str, tuple[str, ...]] = {}
    for key, value, w in _map_entries(obj(doc, "").get("labelsToNodes"), "labelsToNodes"):
        wk = join(w, "key")
        label = NODE_LABEL.decode(key, wk).name if type(key) is dict else dec_str(key, w, "key")
        wv = join(w, "value")
        if type(value) is dict:
            value = value.get("nodeId")
        if type(value) is str:
            value = [value]
        out[label] = tuple(dec_str(x, wv, str(i)) for i, x in enumerate(items(value, wv)))
    return out


def encode_labels_to_nodes(mapping: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    if not mapping:
        return {"labelsToNodes": None}
    entries = [
        {"key": {"name": label, "exclusivity": True}, "value": {"nodeId": list(nodes)}}
        for label, nodes in mapping.items()
    ]
    return {"labelsToNodes": {"entry": entries}}

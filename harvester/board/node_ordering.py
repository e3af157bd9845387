"""The RM plug-in's node orders as published by the node-ordering loop (board item).

One `NodeOrderings` value (the orders per job-length class, decisions/node_ordering.py, and
the queue → class map of `harvesting.node_ordering.queues`) with its JSON document, schema
harvester.node-ordering.v1 (advice/node_ordering_http.py serves it, docs/shim.md):

    {"schema": "harvester.node-ordering.v1",
     "version": 1795431979089,           // int64; the ETag; changes only when an order changes
     "generated_at_ms": 1795431979089,   // when this version was derived (the sidecar's clock)
     "guard_as_of_ms": 1795431975000,    // the guard decision it was derived from (null: none)
     "orderings": {"short":  {"node_ids": ["nm3:45454", ...], "reason": "..."},
                   "medium": {...}, "long": {...}},   // best first; [] = no advice
     "queues": {"root.etl": "long", ...}}             // harvesting.node_ordering.queues

`node_ids` are NodeManager ids `host:port` as the RM's REST /nodes and YARN's NodeId print
them. A new version is published only when an order or the queue map changes
(board/versioned_board.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from harvester.board import Board, Item
from harvester.board.versioned_board import Versioned, VersionedBoard
from harvester.decisions.node_ordering import NodeOrder
from harvester.models.job_history import JobType

SCHEMA = "harvester.node-ordering.v1"


@dataclass(frozen=True)
class NodeOrderings:
    """One published set of orders (the board's value)."""

    generated_at: float
    guard_as_of: float | None
    orders: Mapping[JobType, NodeOrder]
    queues: Mapping[str, JobType]

    def for_queue(self, queue: str) -> JobType | None:
        return self.queues.get(queue)


NODE_ORDERING: Item[Versioned[NodeOrderings] | None] = Item("yarn.node_ordering", None)
_SUBCLUSTER_ITEMS: dict[str, Item[Versioned[NodeOrderings] | None]] = {}


def subcluster_item(name: str) -> Item[Versioned[NodeOrderings] | None]:
    """The item of one sub-cluster's document (rm.clusters: its nodes only, as its RM names
    them, host:port); one Item object per name, as the board requires."""
    return _SUBCLUSTER_ITEMS.setdefault(name, Item(f"yarn.node_ordering.subcluster.{name}", None))


class NodeOrderingBoard(VersionedBoard[NodeOrderings]):
    """The node-ordering item of one `Board` (a fresh board if none is given); with `subcluster`,
    that sub-cluster's own document (harvester/subclusters.py)."""

    def __init__(self, board: Board | None = None, subcluster: str | None = None) -> None:
        super().__init__(board, NODE_ORDERING if subcluster is None else subcluster_item(subcluster))


def _ms(t: float | None) -> int | None:
    return None if t is None else int(round(t * 1000))


def document(value: NodeOrderings, version: int) -> dict:
    """The JSON document of the module docstring."""
    return {
        "schema": SCHEMA,
        "version": version,
        "generated_at_ms": _ms(value.generated_at),
        "guard_as_of_ms": _ms(value.guard_as_of),
        "orderings": {t.value: {"node_ids": list(o.node_ids), "reason": o.reason} for t, o in value.orders.items()},
        "queues": {q: t.value for q, t in sorted(value.queues.items())},
    }


def publish(board: VersionedBoard[NodeOrderings], value: NodeOrderings) -> Versioned[NodeOrderings]:
    """Publish; a new version only when an order or the queue map changed (versioned_board)."""
    content = (tuple((t.value, o.node_ids) for t, o in sorted(value.orders.items())), tuple(sorted(value.queues.items())))
    return board.publish(
        value, lambda v: (json.dumps(document(value, v), separators=(",", ":")) + "\n").encode(),
        content=content, first_version=_ms(value.generated_at) or 1,
    )

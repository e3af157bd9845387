"""`GET /v1/yarn/node-ordering`: the node orders the RM plug-in caches (JSON, ETag, long-poll).

The ResourceManager's multi-node lookup plug-ins (deploy/shim/resourcemanager, one class per
job-length class) share one cached copy of this document, refreshed with the long-poll of
`long_poll` (200 / 304 / 503 / 400, docs/shim.md). Schema harvester.node-ordering.v1:

    {"schema": "harvester.node-ordering.v1",
     "version": 1795431979089,           // int64; the ETag; changes only when an order changes
     "generated_at_ms": 1795431979089,   // when this version was derived (the sidecar's clock)
     "guard_as_of_ms": 1795431975000,    // the guard decision it was derived from (null: none)
     "orderings": {"short":  {"node_ids": ["nm3:45454", ...], "reason": "..."},
                   "medium": {...}, "long": {...}},   // best first; [] = no advice
     "queues": {"root.etl": "long", ...}}             // harvesting.node_ordering.queues

`node_ids` are NodeManager ids `host:port` as the RM's REST /nodes and YARN's NodeId print
them. The orders come from decisions/node_ordering.py; the same data answers gRPC
YarnAdvisor.GetNodeOrdering.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from harvester.advice.admin_http import Request, Response
from harvester.advice.long_poll import long_poll_route
from harvester.advice.versioned_board import Versioned, VersionedBoard
from harvester.decisions.node_ordering import NodeOrder
from harvester.models.job_history import JobType

SCHEMA = "harvester.node-ordering.v1"
PATH = "/v1/yarn/node-ordering"


@dataclass(frozen=True)
class NodeOrderings:
    """One published set of orders (the board's value)."""

    generated_at: float
    guard_as_of: float | None
    orders: Mapping[JobType, NodeOrder]
    queues: Mapping[str, JobType]

    def for_queue(self, queue: str) -> JobType | None:
        return self.queues.get(queue)


NodeOrderingBoard = VersionedBoard[NodeOrderings]


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


def publish(board: NodeOrderingBoard, value: NodeOrderings) -> Versioned[NodeOrderings]:
    """Publish; a new version only when an order or the queue map changed (versioned_board)."""
    content = (tuple((t.value, o.node_ids) for t, o in sorted(value.orders.items())), tuple(sorted(value.queues.items())))
    return board.publish(
        value, lambda v: (json.dumps(document(value, v), separators=(",", ":")) + "\n").encode(),
        content=content, first_version=_ms(value.generated_at) or 1,
    )


def node_ordering_route(board: NodeOrderingBoard, *, max_wait_s: float,
                        waiters: Callable[[int], None] = lambda delta: None) -> Callable[[Request], Response]:
    """The handler to register on the admin server at `PATH`."""
    return long_poll_route(
        board, max_wait_s=max_wait_s, waiters=waiters,
        not_ready={"error": "no node ordering yet: the node-ordering loop has not run",
                   "see": "/status (loops guard, node-ordering)"},
    )

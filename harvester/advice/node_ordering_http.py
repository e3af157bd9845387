"""`GET /v1/yarn/node-ordering`: the node orders the RM plug-in caches (JSON, ETag, long-poll).

The ResourceManager's multi-node lookup plug-ins (deploy/shim/resourcemanager, one class per
job-length class) share one cached copy of this document, refreshed with the long-poll of
`long_poll` (200 / 304 / 503 / 400, docs/shim.md). The document (schema
harvester.node-ordering.v1) and what it holds: board/node_ordering.py, which the node-ordering
loop publishes and this face reads; the same data answers gRPC YarnAdvisor.GetNodeOrdering.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from harvester.advice.admin_http import Request, Response
from harvester.advice.long_poll import WaitSlots, long_poll_route
from harvester.board.versioned_board import VersionedBoard
from harvester.board.node_ordering import NodeOrderings

PATH = "/v1/yarn/node-ordering"


def node_ordering_route(board: VersionedBoard[NodeOrderings], *, max_wait_s: float,
                        waiters: Callable[[int], None] = lambda delta: None,
                        slots: WaitSlots | None = None) -> Callable[[Request], Awaitable[Response]]:
    """The handler to register on the admin server at `PATH`."""
    return long_poll_route(
        board, max_wait_s=max_wait_s, waiters=waiters, slots=slots,
        not_ready={"error": "no node ordering yet: the node-ordering loop has not run",
                   "see": "/status (loops guard, node-ordering)"},
    )

"""`GET /v1/yarn/node-ordering`: the node orders the RM plug-in caches (JSON, ETag, long-poll).

The ResourceManager's multi-node lookup plug-ins (deploy/shim/resourcemanager, one class per
job-length class) share one cached copy of this document, refreshed with the long-poll of
`long_poll` (200 / 304 / 503 / 400, docs/shim.md). The document (schema
harvester.node-ordering.v1) and what it holds: board/node_ordering.py, which the node-ordering
loop publishes and this face reads; the same data answers gRPC YarnAdvisor.GetNodeOrdering.

Several ResourceManagers (`rm.clusters`, harvester/subclusters.py): an RM's plug-in identifies
itself only by the URL in its yarn-site.xml (`harvester.shim.resourcemanager.advice.url`), so
each RM names its sub-cluster there, `...?subcluster=<name>` (the plug-in keeps the query and
adds `&wait=`), and gets its sub-cluster's own document: its nodes only, as host:port, with
its own version. Without `rm.clusters` the URL without a parameter is unchanged (and
`?subcluster=default` is the same document); with them, a request naming no sub-cluster is a
400 that lists the names (a plug-in asking for nothing would otherwise get ids it never knows),
and an unknown name a 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from harvester.advice.admin_http import Request, Response
from harvester.advice.long_poll import WaitSlots, long_poll_route
from harvester.board.versioned_board import VersionedBoard
from harvester.board.node_ordering import NodeOrderings

PATH = "/v1/yarn/node-ordering"
PARAM = "subcluster"
DEFAULT = "default"  # harvester/subclusters.DEFAULT (not imported: the advice face stays light)


def node_ordering_route(board: VersionedBoard[NodeOrderings], *, max_wait_s: float,
                        waiters: Callable[[int], None] = lambda delta: None,
                        slots: WaitSlots | None = None,
                        subclusters: Mapping[str, VersionedBoard[NodeOrderings]] | None = None,
                        ) -> Callable[[Request], Awaitable[Response]]:
    """The handler to register on the admin server at `PATH`; `subclusters`: each sub-cluster's
    document (rm.clusters), chosen by `?subcluster=` (module docstring)."""
    not_ready = {"error": "no node ordering yet: the node-ordering loop has not run",
                 "see": "/status (loops guard, node-ordering)"}

    def route(b: VersionedBoard[NodeOrderings]) -> Callable[[Request], Awaitable[Response]]:
        return long_poll_route(b, max_wait_s=max_wait_s, waiters=waiters, slots=slots, not_ready=not_ready)

    whole = route(board)
    if not subclusters:
        async def single(req: Request) -> Response:
            name = (req.query.get(PARAM) or [None])[-1]
            if name is not None and name != DEFAULT:
                return Response.json(404, {"error": f"{PARAM}={name!r}: no such sub-cluster (this sidecar advises one "
                                                    f"cluster, {DEFAULT!r}: rm.clusters is not set)"})
            return await whole(req)
        return single

    per = {name: route(b) for name, b in subclusters.items()}
    names = sorted(per)

    async def handle(req: Request) -> Response:
        name = (req.query.get(PARAM) or [None])[-1]
        if name is None:
            return Response.json(400, {"error": f"name the RM's sub-cluster: {PATH}?{PARAM}=<name> (rm.clusters: "
                                                f"{', '.join(names)}; the plug-in's advice.url)", "subclusters": names})
        chosen = per.get(name)
        if chosen is None:
            return Response.json(404, {"error": f"{PARAM}={name!r}: no such sub-cluster (rm.clusters: {', '.join(names)})",
                                       "subclusters": names})
        return await chosen(req)

    return handle

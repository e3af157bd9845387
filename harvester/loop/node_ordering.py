"""Tick that derives the RM plug-in's node orders from the published harvesting state.

Every guard period, right behind the guard: read the harvesting view on the state board (the
guard's last decision, the classes' current state), order the nodes per job-length class with
Algorithm 1's ranking weights (decisions/node_ordering.py) and publish them as the board's
node-ordering item (board/node_ordering.py), which GET /v1/yarn/node-ordering (the RM
plug-in's long-poll) and gRPC GetNodeOrdering read. A new version is published only when an
order changes (board/versioned_board.py). With several sub-clusters (rm.clusters) each one's
orders are derived from its nodes alone (the classes' state is the whole estate's: Algorithm
1's class ranking) and published as its own document, ids as its RM names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from harvester.board.harvesting import HarvestingBoard
from harvester.board.node_ordering import NodeOrderings, publish
from harvester.board.versioned_board import VersionedBoard
from harvester.decisions.class_selection import Weights
from harvester.decisions.node_ordering import NodeOrder, order_all
from harvester.loop.runner import TickResult
from harvester.models.job_history import JobType
from harvester.observability.metrics import Metrics


def unqualified(orders: Mapping[JobType, NodeOrder], name: str) -> dict[JobType, NodeOrder]:
    """Sub-cluster `name`'s orders with its node ids as its RM names them (`name/host:port` ->
    `host:port`, harvester/subclusters.py); another sub-cluster's node is dropped."""
    prefix = name + "/"
    return {t: replace(o, node_ids=tuple(n[len(prefix):] for n in o.node_ids if n.startswith(prefix)))
            for t, o in orders.items()}


class PublishNodeOrdering:
    """`tick(now)`: order the nodes per job type and publish (module docstring)."""

    def __init__(self, harvesting: HarvestingBoard, orderings: VersionedBoard[NodeOrderings], metrics: Metrics, *,
                 weights: Weights, queues: Mapping[str, JobType], stale_after_s: float,
                 subclusters: Mapping[str, VersionedBoard[NodeOrderings]] | None = None) -> None:
        self._subclusters = dict(subclusters or {})  # rm.clusters: each RM's own document
        self._harvesting = harvesting
        self._metrics = metrics
        self._orderings = orderings
        self._weights = weights
        self._queues = dict(queues)
        self._stale_after_s = stale_after_s

    def tick(self, now: float) -> TickResult:
        view = self._harvesting.view()
        decision = view.guard
        orders = order_all(
            view.classes, None if decision is None else decision.nodes, self._weights,
            decision_age_s=None if decision is None else now - decision.as_of, stale_after_s=self._stale_after_s,
        )
        pub = publish(self._orderings, NodeOrderings(now, None if decision is None else decision.as_of, orders, self._queues))
        for name, board in self._subclusters.items():
            prefix = name + "/"
            mine = order_all(
                view.classes, None if decision is None else [v for v in decision.nodes if v.node_id.startswith(prefix)],
                self._weights, decision_age_s=None if decision is None else now - decision.as_of,
                stale_after_s=self._stale_after_s,
            )
            publish(board, NodeOrderings(now, None if decision is None else decision.as_of, unqualified(mine, name),
                                         self._queues))
        advised = {t.value: len(o.node_ids) for t, o in orders.items()}
        self._metrics.record_node_ordering(pub.version, advised)
        return TickResult({"version": pub.version, **{f"advised_{t}": n for t, n in advised.items()}})

"""Tick that derives the RM plug-in's node orders from the published harvesting state.

Every guard period: read the current `AdvisorView` (the guard's last decision, the classes'
current state, Algorithm 1's ranking weights), order the nodes per job-length class
(decisions/node_ordering.py) and publish them on the node-ordering board, which GET
/v1/yarn/node-ordering (the RM plug-in's long-poll) and gRPC GetNodeOrdering read. A new
version is published only when an order changes (advice/versioned_board.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from harvester.advice.harvesting_state import HarvestingState
from harvester.advice.node_ordering_http import NodeOrderingBoard, NodeOrderings, publish
from harvester.decisions.node_ordering import order_all
from harvester.loop.runner import TickResult
from harvester.models.job_history import JobType
from harvester.observability.metrics import Metrics


class PublishNodeOrdering:
    """`tick(now)`: order the nodes per job type and publish (module docstring)."""

    def __init__(self, state: HarvestingState, board: NodeOrderingBoard, metrics: Metrics, *,
                 queues: Mapping[str, JobType], stale_after_s: float) -> None:
        self._state = state
        self._metrics = metrics
        self._board = board
        self._queues = dict(queues)
        self._stale_after_s = stale_after_s

    def __call__(self, now: float) -> TickResult:
        view = self._state.view()
        decision = view.guard
        orders = order_all(
            view.classes, None if decision is None else decision.nodes, view.selection.weights,
            decision_age_s=None if decision is None else now - decision.as_of, stale_after_s=self._stale_after_s,
        )
        pub = publish(self._board, NodeOrderings(now, None if decision is None else decision.as_of, orders, self._queues))
        advised = {t.value: len(o.node_ids) for t, o in orders.items()}
        self._metrics.record_node_ordering(pub.version, advised)
        return TickResult({"version": pub.version, **{f"advised_{t}": n for t, n in advised.items()}})

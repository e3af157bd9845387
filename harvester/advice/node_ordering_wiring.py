"""The node-ordering face's parts, built from settings for the composition root to wire.

    orderings = build_node_ordering(harvesting_settings, state, metrics)
    loops.append(ControlLoop("node-ordering", orderings.interval_s, orderings.tick, clock, metrics))
    yarn_advisor_service(state, metrics, orderings=orderings.board)     # gRPC GetNodeOrdering
    admin.route(orderings.path, orderings.route)                         # GET /v1/yarn/node-ordering
    ...; orderings.close()                                               # on stop: wakes long-polls

The loop runs once per guard period, right behind the guard whose decision it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harvester.advice.admin_http import Route
from harvester.advice.harvesting_state import HarvestingState
from harvester.advice.node_ordering_http import PATH, NodeOrderingBoard, node_ordering_route
from harvester.advice.versioned_board import VersionedBoard
from harvester.config_harvesting import HarvestingSettings
from harvester.loop.node_ordering import PublishNodeOrdering
from harvester.loop.runner import TickResult
from harvester.models.job_history import JobType
from harvester.observability.metrics import Metrics


@dataclass
class NodeOrderingComponents:
    board: NodeOrderingBoard
    tick: Callable[[float], TickResult]
    interval_s: float
    path: str
    route: Route
    close: Callable[[], None]


def build_node_ordering(h: HarvestingSettings, state: HarvestingState, metrics: Metrics) -> NodeOrderingComponents:
    s = h.node_ordering
    board: NodeOrderingBoard = VersionedBoard()
    tick = PublishNodeOrdering(state, board, metrics, queues={q: JobType(t) for q, t in s.queues.items()},
                               stale_after_s=s.stale_after_s)
    route = node_ordering_route(board, max_wait_s=s.long_poll_max_s,
                                waiters=lambda delta: metrics.record_advice_waiters("node_ordering", delta))
    return NodeOrderingComponents(board, tick, h.control_period_s, PATH, route, board.close)

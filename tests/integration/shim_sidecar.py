"""A sidecar advice face for the shim's integration tests, run as its own process (so that a
test can kill it by pid mid-stream): Harvester's real HTTP routes — the placement-table and
node-ordering long-polls (harvester/advice/long_poll.py) — serving documents the test built.

    python shim_sidecar.py --port N [--table TABLE.json] [--ordering ORDERINGS.json]

TABLE.json is `PlacementTable.to_json()`; ORDERINGS.json is {"queues": {...}, "orders":
{"short"|"medium"|"long": [node ids]}}. Prints "ready" once serving; runs until killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.advice.hdfs_http import PATH as TABLE_PATH, placement_table_route
from harvester.advice.node_ordering_http import PATH as ORDERING_PATH, node_ordering_route
from harvester.board.hdfs import PlacementBoard
from harvester.board.node_ordering import NodeOrderings, publish
from harvester.board.versioned_board import VersionedBoard
from harvester.decisions.node_ordering import NodeOrder
from harvester.models.job_history import JobType
from harvester.observability.metrics import Metrics
from hdfs_placement import PlacementTable


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--table")
    ap.add_argument("--ordering")
    args = ap.parse_args(argv)
    admin = AdminServer(f"127.0.0.1:{args.port}")
    if args.table:
        board = PlacementBoard()
        with open(args.table) as f:
            board.publish(PlacementTable.from_json(json.load(f)))
        admin.route(TABLE_PATH, placement_table_route(board, Metrics(CollectorRegistry()), max_wait_s=30))
    if args.ordering:
        with open(args.ordering) as f:
            doc = json.load(f)
        orders = {t: NodeOrder(t, tuple(doc["orders"].get(t.value, ())), "set by the integration test") for t in JobType}
        boards: VersionedBoard[NodeOrderings] = VersionedBoard()
        publish(boards, NodeOrderings(time.time(), time.time(), orders, {q: JobType(t) for q, t in doc["queues"].items()}))
        admin.route(ORDERING_PATH, node_ordering_route(boards, max_wait_s=30))
    admin.start()
    print("ready", flush=True)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A sidecar with every gRPC service answering (embedded cluster, HDFS-H on a fake NameNode,
loops run once on a SimClock) and a channel to it: what the gRPC robustness tests probe."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from nn_fakes import DN, FakeNameNode, info_doc
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import parse_settings

T0 = 1_795_430_000.0


@contextmanager
def advised_channel(advice_process: bool = False) -> Iterator[grpc.Channel]:
    """`advice_process`: served as `server.grpc_advice_process: true` serves it (advice/advice_process.py);
    the channel is handed over once the advice process holds the loops' classes."""
    nn = FakeNameNode(info_doc([DN(f"web-{i}", f"10.0.0.{i}") for i in range(3)]))
    settings = parse_settings({"server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0",
                                          "grpc_advice_process": advice_process},
                               "embedded": {"listen": "127.0.0.1:0"}, "store": {"backend": "memory"},
                               "hdfs": {"enabled": True, "namenode_urls": [nn.url]}}, environ={})
    app = Harvester(settings, clock=SimClock(T0), registry=CollectorRegistry())
    app.start(run_loops=False)
    for name in ("refit", "telemetry", "guard", "node-ordering", "hdfs-poll", "hdfs-refit"):
        app.loop(name).run_once()
    ch = grpc.insecure_channel(app.grpc.address)
    if advice_process and not app.grpc.sync():  # type: ignore[union-attr]
        raise TimeoutError("the advice process did not take the board's state")
    try:
        yield ch
    finally:
        ch.close()
        app.stop()
        nn.close()


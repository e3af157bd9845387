"""`harvester hdfs datanodes|table|choose` (harvester/cli_hdfs.py) against real servers on loopback."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.advice.grpc_server import GrpcServer
from harvester.board.hdfs import PlacementBoard
from harvester.advice.hdfs_grpc import hdfs_service
from harvester.advice.hdfs_http import PATH, placement_table_route
from harvester.cli_hdfs import register
from harvester.observability.metrics import Metrics
from hdfs_tables import nine_cell_table
from nn_fakes import DN, FakeNameNode, info_doc


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="harvester")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_datanodes_shows_the_tenant_each_rule_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nn = FakeNameNode(info_doc([DN("web-1", "10.0.0.1", rack="/r1"), DN("misc-9", "10.0.0.9")]))
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"hdfs:\n  namenode_urls: [{nn.url}]\nharvesting:\n  tenants:\n"
                   "    - {tenant: web, environment: frontend, hostname_pattern: '^web-'}\n  unmatched_nodes: ignore\n")
    try:
        assert run(["hdfs", "datanodes", "--config", str(cfg), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [(d["hostname"], d["tenant"], d["environment"]) for d in doc["datanodes"]] == [
            ("web-1", "web", "frontend"), ("misc-9", "(no rule: own tenant, outside the grid)", "(no rule: own tenant, outside the grid)")]
        assert run(["hdfs", "datanodes", "--nn-url", nn.url]) == 0
        out = capsys.readouterr().out
        assert "2 live, 0 dead DataNodes" in out and "10.0.0.1:9866" in out
    finally:
        nn.close()


def test_datanodes_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["hdfs", "datanodes"]) == 2
    assert "no NameNode" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("hdfs:\n  bogus: 1\n")
    assert run(["hdfs", "datanodes", "--config", str(bad)]) == 2
    assert "hdfs.bogus: unknown key" in capsys.readouterr().err
    assert run(["hdfs", "datanodes", "--nn-url", "http://127.0.0.1:9"]) == 1


def test_table_and_choose_against_a_running_sidecar(capsys: pytest.CaptureFixture[str]) -> None:
    board = PlacementBoard()
    board.publish(nine_cell_table(12, busy=frozenset({"10.1.0.0:9866"})))
    metrics = Metrics(CollectorRegistry())
    admin = AdminServer("127.0.0.1:0")
    admin.route(PATH, placement_table_route(board, metrics, max_wait_s=1))
    grpc_server = GrpcServer("127.0.0.1:0", metrics, [hdfs_service(board, metrics, default_block_size=1, max_watch_streams=1)])
    admin.start()
    grpc_server.start()
    try:
        assert run(["hdfs", "table", "--url", f"http://{admin.address}"]) == 0
        out = capsys.readouterr().out
        assert "placement table version 12 (grid 1)" in out and "18 DataNodes" in out and "busy" in out
        assert run(["hdfs", "table", "--url", f"http://{admin.address}", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["version"] == 12
        assert run(["hdfs", "choose", "--grpc", grpc_server.address, "--writer", "dn110", "--seed", "3"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("table version 12: 3 of 3 targets") and out.splitlines()[1].startswith("10.1.4.0:9866")
        assert run(["hdfs", "choose", "--grpc", grpc_server.address, "--replication", "0"]) == 2
        assert "INVALID_ARGUMENT" in capsys.readouterr().err
    finally:
        grpc_server.stop(0.2)
        admin.stop()

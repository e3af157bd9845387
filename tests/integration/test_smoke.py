"""Smoke test of a live Hadoop 3.3.6 ResourceManager against the recorded captures.

The live RM must answer /ws/v1/cluster/info and /ws/v1/cluster/nodes with the same fields, of
the same JSON types, as the real 3.3.6 RM recorded in
../shared/fixtures/yarn-3.3.6/captures/{info,nodes}.json, and list at least one RUNNING
NodeManager. Plain `requests` on purpose: this checks the cluster, not our client.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import requests

pytestmark = pytest.mark.integration

JSON = {"Accept": "application/json"}


def _get(rm_url: str, path: str) -> Any:
    resp = requests.get(f"{rm_url}{path}", headers=JSON, timeout=10)
    assert resp.status_code == 200, f"GET {path}: HTTP {resp.status_code}: {resp.text[:300]}"
    assert resp.headers.get("Content-Type", "").startswith("application/json"), resp.headers.get("Content-Type")
    return resp.json()


def _kind(value: Any) -> str:
    """JSON type, with int and float as one kind (Jackson may print 0.0 for a float that is 0)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "object", list: "array", type(None): "null"}[type(value)]


def _shape_mismatches(recorded: Any, live: Any, where: str = "") -> list[str]:
    """Every place where `live` lacks a field of `recorded` or has it with another JSON type."""
    if _kind(recorded) != _kind(live):
        return [f"{where or '<root>'}: recorded {_kind(recorded)}, live {_kind(live)}"]
    problems: list[str] = []
    if isinstance(recorded, dict):
        for key, value in recorded.items():
            if key not in live:
                problems.append(f"{where}.{key}: missing")
            else:
                problems.extend(_shape_mismatches(value, live[key], f"{where}.{key}"))
    elif isinstance(recorded, list) and recorded and live:
        problems.extend(_shape_mismatches(recorded[0], live[0], f"{where}[0]"))
    return problems


def _node_list(nodes_body: dict[str, Any]) -> list[dict[str, Any]]:
    node = (nodes_body.get("nodes") or {}).get("node") or []
    # Tolerate the one-element collapse some RM answers use (fixtures README, reservations).
    return [node] if isinstance(node, dict) else list(node)


@pytest.fixture(scope="module")
def captures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "yarn-3.3.6" / "captures"


def test_cluster_info_is_an_active_3_3_rm(rm_url: str, captures: Path) -> None:
    recorded = json.loads((captures / "info.json").read_text())
    body = _get(rm_url, "/ws/v1/cluster/info")

    assert _shape_mismatches(recorded, body) == []
    info = body["clusterInfo"]
    assert info["haState"] == "ACTIVE"
    assert info["state"] == "STARTED"
    assert info["resourceManagerVersion"].startswith("3.3"), info["resourceManagerVersion"]
    assert info["hadoopVersion"].startswith("3.3"), info["hadoopVersion"]
    assert info["startedOn"] > 1_500_000_000_000  # epoch milliseconds, not seconds


def test_nodes_lists_a_running_nodemanager_shaped_like_the_capture(rm_url: str, captures: Path) -> None:
    recorded_node = _node_list(json.loads((captures / "nodes.json").read_text()))[0]
    nodes = _node_list(_get(rm_url, "/ws/v1/cluster/nodes"))

    running = [n for n in nodes if n.get("state") == "RUNNING"]
    assert running, f"no RUNNING NodeManager: {[(n.get('id'), n.get('state')) for n in nodes]}"
    for node in running:
        assert _shape_mismatches(recorded_node, node, node["id"]) == []
        # Node ids are host:port (e.g. localhost:45454 in the captures, nodemanager:45454 in compose).
        assert re.fullmatch(r"[^:\s]+:\d+", node["id"]), node["id"]
        assert node["version"].startswith("3.3"), node["version"]
        total = node["totalResource"]
        assert total["memory"] > 0 and total["vCores"] > 0, total
        util = node["resourceUtilization"]
        # Units per the fixtures README: CPU in cores/vcores (non-negative), memory in MB.
        assert util["nodeCPUUsage"] >= 0 and util["containersCPUUsage"] >= 0, util
        assert util["nodePhysicalMemoryMB"] >= 0, util

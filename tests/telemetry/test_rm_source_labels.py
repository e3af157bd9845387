"""YARN node labels reach NodeSample (Phoenix node attributes; fixtures README: labels yes,
node attributes no). The capture has labels disabled; the labelled variant adds the
`nodeLabels` array 3.3.6's NodeInfo serializes when labels are enabled."""

from __future__ import annotations

import json
from pathlib import Path

from rm_fakes import Reply, ScriptedRM

from harvester.telemetry.rm import RMTelemetrySource
from rm_client import RMClient, RMClientConfig


def _poll(body: bytes):
    server = ScriptedRM()
    server.script("GET", "/ws/v1/cluster/nodes", Reply(body=body))
    try:
        with RMClient(RMClientConfig(urls=(server.url,), max_retries=0), sleep=lambda s: None) as rm:
            return RMTelemetrySource(rm).poll(now=1.0)
    finally:
        server.close()


def test_labels_disabled_means_no_labels(fixtures_dir: Path) -> None:
    snap = _poll((fixtures_dir / "yarn-3.3.6" / "captures" / "nodes-running.json").read_bytes())
    assert snap.nodes and all(n.labels == () for n in snap.nodes)


def test_node_labels_become_sample_labels(fixtures_dir: Path) -> None:
    doc = json.loads((fixtures_dir / "yarn-3.3.6" / "captures" / "nodes-running.json").read_bytes())
    doc["nodes"]["node"][0]["nodeLabels"] = ["gpu", "ssd"]
    snap = _poll(json.dumps(doc).encode())
    first = doc["nodes"]["node"][0]["id"]
    assert snap.node(first).labels == ("gpu", "ssd")

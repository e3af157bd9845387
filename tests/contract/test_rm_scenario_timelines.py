"""The recorded scenario timelines (thousands of real RM answers over time) through the
decoders, and the CPU-unit conversion checked against scenarios/cpu-burn."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from typing import Any

import pytest
from rm_capture_index import SCENARIOS

from rm_client import errors
from rm_client.endpoints import match
from rm_client.units import containers_vcores_to_physical_cores, host_cpu_breakdown
from rm_client.wire.nodes import decode_nodes

SCENARIO_NAMES = sorted(p.name for p in SCENARIOS.iterdir() if (p / "timeline.jsonl").exists())


@cache
def _timeline(name: str) -> tuple[dict[str, Any], ...]:
    lines = (SCENARIOS / name / "timeline.jsonl").read_text().splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def test_every_scenario_of_the_index_is_present() -> None:
    listed = set(re.findall(r"^\| ([a-z0-9-]+)/ \|", (SCENARIOS / "INDEX.md").read_text(), re.MULTILINE))
    assert len(listed) >= 11 and set(SCENARIO_NAMES) == listed


def test_cpu_contention_non_yarn_cpu_from_all_nms() -> None:
    """scenarios/cpu-contention, 4 YARN burners + 2 outside (64-77 s): nodeCPUUsage is saturated
    (2.0) and cannot show the oversubscription; non-YARN CPU = node - sum over BOTH NMs of
    containersCPUUsage x 2/8 (README: 0.72 cores; the two outside burners used 0.64)."""
    samples = _nodes_at("cpu-contention", 64_000, 77_000)
    assert len(samples) > 8
    for _, nodes in samples:
        h = host_cpu_breakdown(nodes, nm_vcores=8, host_physical_cores=2)["localhost"]
        assert h.total == pytest.approx(2.0, abs=0.01)
        assert 0.55 <= h.primary <= 0.9 and 1.1 <= h.containers <= 1.45


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_rm_answer_of_the_scenario_decodes(name: str) -> None:
    seen: Counter[str] = Counter()
    for rec in _timeline(name):
        path = rec["path"]
        if not path.startswith("/ws/v1/cluster"):
            assert path.startswith("http://"), path  # NodeManager calls, not the RM
            continue
        found = match(rec["method"], path)
        assert found is not None, f"{rec['method']} {path}"
        ep, _ = found
        body = rec["body"]
        if rec["status"] >= 300:
            err = errors.error_for_response(method=rec["method"], path=path, status=rec["status"],
                                            body=json.dumps(body) if isinstance(body, dict) else str(body))
            assert err.status == rec["status"] and err.remote_exception
            seen["error"] += 1
            continue
        if ep.decode is None:
            assert body in (None, "", {}), (path, body)
        else:
            assert ep.decode(body) is not None
        seen[ep.name] += 1
    assert sum(seen.values()) > 0


def _nodes_at(name: str, t_from: int, t_to: int) -> list[tuple[int, Any]]:
    return [(r["t_ms"], decode_nodes(r["body"])) for r in _timeline(name)
            if r["path"] == "/ws/v1/cluster/nodes" and t_from <= r["t_ms"] <= t_to]


def test_cpu_burn_units_outside_yarn_is_primary_load() -> None:
    """Phase A (two busy processes outside YARN, 30-75 s): the host's 2 cores are busy, no
    container CPU, so the whole load is primary (non-YARN)."""
    samples = _nodes_at("cpu-burn", 30_000, 75_000)
    assert len(samples) > 30
    for _, nodes in samples:
        hosts = host_cpu_breakdown(nodes, nm_vcores=8, host_physical_cores=2)
        h = hosts["localhost"]
        assert h.total > 1.8 and h.containers < 0.05 and h.primary > 1.75
        # both NMs report the whole host, in physical cores
        assert all(abs(n.resource_utilization.node_cpu_cores - h.total) < 0.5 for n in nodes)


def test_cpu_burn_units_containers_vcores_convert_to_host_cores() -> None:
    """Phase B (two busy containers, 155-200 s): each NM reports ~3.8 VCORES for one busy
    container (8 vcores / 2 cores scaling); converted to physical cores the two NMs add up
    to the host's ~2.0 busy cores, leaving almost no primary load."""
    samples = _nodes_at("cpu-burn", 155_000, 200_000)
    assert len(samples) > 30
    for _, nodes in samples:
        per_nm = [n.resource_utilization.containers_cpu_vcores for n in nodes]
        assert all(3.5 < v < 4.0 for v in per_nm)  # more vcores than the host has cores
        phys = [containers_vcores_to_physical_cores(v, nm_vcores=8, host_physical_cores=2) for v in per_nm]
        assert all(0.87 < p < 1.0 for p in phys)
        h = host_cpu_breakdown(nodes, nm_vcores={n.id: 8 for n in nodes}, host_physical_cores=None)["localhost"]
        assert h.physical_cores == 2.0  # estimated from cpuUtilization
        assert abs(h.containers - h.total) < 0.2 and h.primary < 0.2

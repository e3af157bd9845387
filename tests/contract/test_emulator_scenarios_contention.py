"""The emulator reproduces scenarios/cpu-contention: an oversubscribed host's cores are shared per
runnable process, so `containersCPUUsage` falls under contention while `nodeCPUUsage` stays at the
host's core count (values compared with the recording, phase by phase).

The recording: a DS app with 4 busy-loop workers (2 per NM, one 2-core host), then 1 and 2
busy loops outside YARN. The emulated host's idle load is the recording's own idle baseline
(nodeCPUUsage before the app started); the outside burners are `Workload.burn` at their
recorded start/stop times; placement and timing follow the RM log (heartbeats, acceptance,
AM start-up).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest
from emu_timeline import Exchange, accepted, am_startups, as_list, field, heartbeats, load, replay, start_epoch
from emu_world import N1, N2, World

from harvester.domain import Resources

CLUSTER = 1795504076245
NAME = "cpu-contention"
# phases of the README table (s after the start, the stable part of each)
PHASES = {"4 YARN": (23.0, 37.0), "4 YARN + 1 outside": (44.0, 57.0), "4 YARN + 2 outside": (64.0, 77.0),
          "4 YARN + 1 outside again": (84.0, 97.0)}


def _nodes(doc: Any) -> dict[str, Any]:
    return {n.get("id"): n.get("resourceUtilization") for n in as_list(field(doc, "nodes", "node"))}


@pytest.fixture(scope="module")
def contention(fixtures_dir: Path) -> list[Exchange]:
    scenario = fixtures_dir / "yarn-3.3.6" / "scenarios" / NAME
    rows, events = load(scenario)
    base = start_epoch(events)
    idle = [sum(u.get("nodeCPUUsage") for u in _nodes(r["body"]).values()) / 2 for r in rows
            if r["path"] == "/ws/v1/cluster/nodes" and r["t_ms"] < 10_000]
    world = World(CLUSTER, n2_web_port=8044)
    for node, at in heartbeats(scenario).items():
        world.work.pin_heartbeat(node, at)
    (app, t_acc), = accepted(scenario).items()
    startup = am_startups(scenario).get(app)
    outside = {e["pid"]: e["t_ms"] / 1000 for e in events if e["event"] == "outside_burner_start"}
    stops = {e["pid"]: e["t_ms"] / 1000 for e in events if e["event"] == "outside_burner_killed"}

    def setup(w: World) -> None:
        w.work.set_primary(N1, statistics.mean(idle))  # the host's daemons, as recorded at idle
        for pid, start in outside.items():  # `sh -c 'while :; do :; done'` outside YARN: 1 core wanted
            w.work.burn(N1, 1.0, base + start, base + stops[pid])

    def ds(w: World) -> None:  # `timeout 90 sh -c 'while :; do :; done' || true` in 4 x 1024 MB / 1 vcore
        w.work.distributed_shell(4, Resources(1024, 1), duration_s=90.0, cpu_cores=1.0, am_startup_s=startup)

    try:
        return list(replay(world, rows, base, [(0.0, setup), (t_acc - base, ds)]))
    finally:
        world.close()


def _series(exchanges: list[Exchange], emulated: bool) -> list[tuple[float, dict[str, Any]]]:
    return [(ex.t, _nodes(ex.emu() if emulated else ex.rec())) for ex in exchanges
            if ex.method == "GET" and ex.path == "/ws/v1/cluster/nodes"]


def _mean(series: list[tuple[float, dict[str, Any]]], lo: float, hi: float, node: str, key: str) -> float:
    return statistics.mean(u[node].get(key) for t, u in series if lo <= t <= hi)


@pytest.mark.parametrize("phase", PHASES)
def test_containers_get_their_fair_share_of_the_host(phase: str, contention: list[Exchange]) -> None:
    lo, hi = PHASES[phase]
    rec, emu = _series(contention, False), _series(contention, True)
    for node in (N1, N2):
        want = _mean(rec, lo, hi, node, "containersCPUUsage")
        got = _mean(emu, lo, hi, node, "containersCPUUsage")
        assert abs(got - want) <= 0.25, (phase, node, got, want)
        assert all(u[node].get("nodeCPUUsage") == pytest.approx(2.0, abs=0.02) for t, u in emu if lo <= t <= hi)


def test_non_yarn_cpu_is_node_minus_all_containers_in_cores(contention: list[Exchange]) -> None:
    """README: non-YARN CPU = nodeCPUUsage - (sum over all NMs of containersCPUUsage) x 2/8."""
    rec, emu = _series(contention, False), _series(contention, True)
    for lo, hi in PHASES.values():
        def outside(series: list[tuple[float, dict[str, Any]]]) -> float:
            return statistics.mean(u[N1].get("nodeCPUUsage") - (u[N1].get("containersCPUUsage") + u[N2].get(
                "containersCPUUsage")) * 2 / 8 for t, u in series if lo <= t <= hi)
        assert abs(outside(emu) - outside(rec)) <= 0.15, (lo, outside(emu), outside(rec))

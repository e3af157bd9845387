"""The guard loop at tick level, with known inputs: fakes for the RM view and the actuator.

The decision itself is unit-tested in tests/decisions; here the LOOP must turn it into (or hold
back) actions: a spike kills youngest first and escalates, stale telemetry and an unreachable
RM send nothing, actuation failures come back as data, a dry run sends nothing.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from harvester.actuators.recording import RecordingActuator
from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.clock import SimClock
from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.kills import KillPhase
from harvester.decisions.strategy import guard_strategy
from harvester.domain import Action, ContainerInfo, KillContainer, NodeSample, Resources, SetNodeCapacity
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.guard import GuardTick
from harvester.loop.harvest_nodes import NodeRegistry
from harvester.loop.record_telemetry import RecordTelemetry
from harvester.observability.metrics import Metrics
from harvester.telemetry.memory import InMemoryTelemetrySource

from harvesting_builders import container, sample

T0 = 1_800_000_000.0
N = "n1:8041"


class Rig:
    """Telemetry (in-memory source) → registry → guard → recording actuator, on a SimClock."""

    def __init__(self, *, mechanism: str = "signals", actuate: bool = True, fail: Any = None) -> None:
        self.clock = SimClock(T0)
        self.source = InMemoryTelemetrySource()
        self.store, self.metrics = SqliteHistoryStore(":memory:"), Metrics(CollectorRegistry())
        h = HarvestingSettings.model_validate({
            "tenants": [{"tenant": "web", "hostname_pattern": "."}], "node_resources": {"physical_cores": 16},
            # the pre-issue-16 kill rule (restore the whole reserve): the sequences below follow it
            "guard": {"kill_mechanism": mechanism, "escalation_delay_s": 10, "kill_when": "reserve_used"},
        })
        self.registry = NodeRegistry(self.store, h)
        self.telemetry = RecordTelemetry(self.source, self.store, self.metrics, observers=(self.registry.observe,))
        self.state = HarvestingBoard(Board())
        self.actuator = RecordingActuator(fail=fail, clock_now=self.clock.now)
        self.guard = GuardTick(self.telemetry.latest, self.registry, self.state, self.actuator if actuate else None,
                               self.metrics, guard_strategy(h, telemetry_stale_after_s=30.0))

    def observe(self, node: NodeSample, containers: tuple[ContainerInfo, ...] = ()) -> None:
        self.source.set([node], containers)
        self.telemetry.tick(self.clock.now())

    def tick(self) -> dict[str, Any]:
        return dict(self.guard.tick(self.clock.now()).summary)

    def metric(self, name: str, **labels: str) -> float | None:
        return self.metrics.registry.get_sample_value(name, labels)


def _busy(node_cpu: float, used: Resources = Resources(40960, 10), total: Resources = Resources(65536, 16)) -> NodeSample:
    return sample(N, total=total, used=used, node_cpu=node_cpu, containers_vcores=0.0)


CONTAINERS = (
    container("am", N, vcores=1, memory_mb=4096, started_at=T0 - 900, is_am=True),
    container("c1", N, vcores=3, memory_mb=12288, started_at=T0 - 800),
    container("c2", N, vcores=3, memory_mb=12288, started_at=T0 - 500),
    container("c3", N, vcores=3, memory_mb=12288, started_at=T0 - 100),
)


def _kills(actions: list[Action]) -> list[tuple[str, bool]]:
    return [(a.container_id, a.graceful) for a in actions if isinstance(a, KillContainer)]


def test_a_spike_kills_youngest_first_then_escalates_and_reconciles() -> None:
    rig = Rig()
    rig.observe(_busy(node_cpu=1.0), CONTAINERS)          # first sight: baseline 16 vcores; 11 vcores ≥ 10 held
    rig.tick()
    assert _kills(rig.actuator.actions) == []
    rig.actuator.batches.clear()
    rig.clock.advance(5)
    # primary spikes to 6 cores: 16 − 6 − reserve 3.2 (cold start 0.2 × 16) = 6.8 cores → 6 vcores < 10 allocated
    rig.observe(_busy(node_cpu=6.0), CONTAINERS)
    summary = rig.tick()
    assert summary["sent"] == len(rig.actuator.actions) > 0
    assert _kills(rig.actuator.actions) == [("c3", True), ("c2", True)], "youngest first, AM spared, just enough"
    cut = [a for a in rig.actuator.actions if isinstance(a, SetNodeCapacity)]
    assert cut and cut[0].resources.vcores == 6 and cut[0].overcommit_timeout_ms == -1
    assert rig.metric("harvester_harvest_kills_total", reason="signal_graceful") == 2
    # the same snapshot is not acted on twice
    rig.clock.advance(5)
    assert rig.tick()["acted"] is False and len(rig.actuator.batches) == 1
    # still listed 10 s after SIGTERM: SIGKILL
    rig.clock.advance(6)
    rig.observe(_busy(node_cpu=6.0, total=Resources(65536, 6)), CONTAINERS)
    rig.tick()
    assert _kills(rig.actuator.batches[-1][1]) == [("c3", False), ("c2", False)]
    # gone from the RM: the kills end GONE
    rig.clock.advance(5)
    rig.observe(_busy(node_cpu=6.0, used=Resources(16384, 4), total=Resources(65536, 6)), CONTAINERS[:2])
    rig.tick()
    status = rig.guard.status()
    assert status.kills == () and {k.container_id: k.phase for k in status.finished_kills} == {
        "c3": KillPhase.GONE, "c2": KillPhase.GONE}
    assert [p for p, _, _ in status.finished_kills[0].history] == [KillPhase.GRACEFUL, KillPhase.FORCEFUL, KillPhase.GONE]


def test_stale_telemetry_sends_nothing() -> None:
    rig = Rig()
    rig.observe(_busy(node_cpu=2.0), CONTAINERS)
    rig.tick()
    rig.actuator.batches.clear()
    rig.clock.advance(31)                                  # no poll for longer than stale_after_s
    summary = rig.tick()
    assert summary["acted"] is True and summary["actions"] == 0 and rig.actuator.batches == []
    views = rig.state.view().guard.nodes
    assert [v.outcome for v in views] == ["stale:snapshot"] and "no kill" in views[0].reason
    assert rig.metric("harvester_telemetry_age_seconds") == 31.0


def test_rm_down_means_no_kill_even_if_the_primary_spiked() -> None:
    rig = Rig(mechanism="rm_overcommit")
    rig.observe(_busy(node_cpu=2.0), CONTAINERS)
    rig.tick()
    rig.actuator.batches.clear()
    rig.source.set([_busy(node_cpu=15.0)], CONTAINERS)     # the spike the RM would report ...
    rig.source.fail_with("connection refused")             # ... if it answered
    for _ in range(12):
        rig.clock.advance(5)
        try:
            rig.telemetry(rig.clock.now())
        except Exception:  # noqa: BLE001 - a failed poll is what this test is about
            pass
        rig.tick()
    assert rig.actuator.actions == [], "nothing is sent on an old view of the cluster"
    assert rig.state.view().guard.nodes[0].outcome == "stale:snapshot"


def test_actuation_failures_come_back_as_data_on_the_next_tick() -> None:
    rig = Rig(fail=lambda a: "HTTP 500 from the RM" if isinstance(a, KillContainer) and not a.graceful else None)
    rig.observe(_busy(node_cpu=1.0), CONTAINERS)
    rig.tick()
    rig.clock.advance(5)
    rig.observe(_busy(node_cpu=6.0), CONTAINERS)
    rig.tick()                                             # SIGTERMs sent
    rig.clock.advance(11)
    rig.observe(_busy(node_cpu=6.0), CONTAINERS)
    rig.tick()                                             # SIGKILLs fail inside the actuator ...
    assert {k.phase for k in rig.guard.status().kills} == {KillPhase.GRACEFUL}
    rig.clock.advance(5)
    rig.tick()                                             # ... and are reported at the next tick
    status = rig.guard.status()
    assert status.kills == ()
    assert {k.container_id: k.phase for k in status.finished_kills} == {"c3": KillPhase.FAILED, "c2": KillPhase.FAILED}
    assert sum(e.fate.startswith("failed: HTTP 500") for e in status.recent) == 2
    assert rig.metric("harvester_harvest_action_errors_total", action="kill") == 2


def test_a_failed_capacity_update_is_decided_again_from_the_next_observation() -> None:
    rig = Rig(fail=lambda a: "connection refused" if isinstance(a, SetNodeCapacity) else None)
    rig.observe(_busy(node_cpu=1.0, used=Resources(0, 0)), ())
    rig.tick()                                             # 16 → 11 vcores: refused
    rig.clock.advance(5)
    rig.observe(_busy(node_cpu=1.0, used=Resources(0, 0)), ())
    rig.tick()
    sent = [a for _, batch in rig.actuator.batches for a in batch]
    assert sent == [] and rig.metric("harvester_harvest_action_errors_total", action="set_capacity") == 1
    # it is decided again from the new observation (not a blind retry), and fails again
    assert [e.fate for e in rig.guard.status().recent].count("not sent") == 2


def test_a_dry_run_decides_and_sends_nothing() -> None:
    rig = Rig(actuate=False)
    rig.observe(_busy(node_cpu=6.0), CONTAINERS)
    summary = rig.tick()
    assert summary["actions"] > 0 and summary["sent"] == 0 and rig.actuator.batches == []
    assert {e.fate for e in rig.guard.status().recent} == {"would send"}
    outcomes = {v.outcome for v in rig.state.view().guard.nodes}
    assert outcomes and all(not o.startswith("sent:") for o in outcomes), outcomes
    assert any(o.startswith("would_send:") for o in outcomes), outcomes
    assert rig.metric("harvester_harvest_node_vcores", node=N) == 6
    assert rig.metric("harvester_harvest_decision_duration_seconds_count", decision="guard") == 1


def test_a_dry_run_counts_a_kill_once_while_the_spike_lasts() -> None:
    rig = Rig(actuate=False)
    counts = []
    for _ in range(3):  # the same spike, seen anew each tick: the same kills are decided again
        rig.observe(_busy(node_cpu=6.0), CONTAINERS)
        assert rig.tick()["actions"] > 0
        counts.append(rig.metric("harvester_harvest_kills_total", reason="signal_graceful"))
        rig.clock.advance(5)
    assert counts[0] and counts[0] > 0 and counts == [counts[0]] * 3
    rig.observe(_busy(node_cpu=0.0), CONTAINERS)  # the spike ends, then comes back: a new kill
    rig.tick()
    rig.clock.advance(5)
    rig.observe(_busy(node_cpu=6.0), CONTAINERS)
    rig.tick()
    assert rig.metric("harvester_harvest_kills_total", reason="signal_graceful") == 2 * counts[0]

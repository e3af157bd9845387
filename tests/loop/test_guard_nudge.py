"""Nudges go out through the guard's tick, from the guard's own data, so the guard and Morpheus
never post disagreeing node resources (loop/guard.py, loop/nudge.py, decisions/nudge.py)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from harvester.actuators.recording import RecordingActuator
from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.clock import SimClock
from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.strategy import guard_strategy
from harvester.domain import NodeSample, Resources, SetNodeCapacity
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.guard import GuardTick
from harvester.loop.harvest_nodes import NodeRegistry
from harvester.loop.nudge import NudgeChannel
from harvester.loop.record_telemetry import RecordTelemetry
from harvester.observability.metrics import Metrics
from harvester.telemetry.memory import InMemoryTelemetrySource

from harvesting_builders import sample

T0 = 1_800_000_000.0
N = "n1:8041"
FULL = Resources(65536, 16)


class Rig:
    def __init__(self, *, harvest: bool, actuate: bool = True, fail: bool = False) -> None:
        self.clock = SimClock(T0)
        self.source = InMemoryTelemetrySource()
        store, self.metrics = SqliteHistoryStore(":memory:"), Metrics(CollectorRegistry())
        h = HarvestingSettings.model_validate({
            "tenants": [{"tenant": "web", "hostname_pattern": "." if harvest else "^nothing-matches$"}],
            "unmatched_nodes": "ignore", "node_resources": {"physical_cores": 16}})
        self.registry = NodeRegistry(store, h)
        self.telemetry = RecordTelemetry(self.source, store, self.metrics, observers=(self.registry.observe,))
        self.actuator = RecordingActuator(fail=(lambda a: "HTTP 500") if fail else None, clock_now=self.clock.now)
        self.outcomes: list = []  # type: ignore[type-arg]
        self.nudges = NudgeChannel(self.actuator, on_outcome=self.outcomes.append)
        self.board = HarvestingBoard(Board())
        self.guard = GuardTick(self.telemetry.latest, self.registry, self.board,
                               self.actuator if actuate else None, self.metrics,
                               guard_strategy(h, telemetry_stale_after_s=30.0), nudges=self.nudges)

    def observe(self, node: NodeSample) -> None:
        self.source.set([node], ())
        self.telemetry.tick(self.clock.now())

    def tick(self) -> None:
        self.guard.tick(self.clock.now())


def node(cpu: float, total: Resources = FULL) -> NodeSample:
    return sample(N, t=T0, total=total, used=Resources(8192, 2), node_cpu=cpu, containers_vcores=0.0)


def test_without_a_guard_change_one_node_is_re_posted_unchanged_through_the_same_actuator() -> None:
    rig = Rig(harvest=False)
    rig.observe(node(2.0))
    rig.nudges.request(["activation of r_1 at 1.0"], T0)
    rig.tick()
    (a,) = rig.actuator.actions
    assert isinstance(a, SetNodeCapacity) and (a.node_id, a.resources, a.overcommit_timeout_ms) == (N, FULL, -1)
    assert rig.nudges.pending() is None and rig.outcomes[-1].done and rig.outcomes[-1].node_id == N
    entry = rig.board.guard_status().recent[-1]
    assert entry.kind == "nudge" and entry.fate == "sent" and "activation of r_1" in entry.reason
    rig.clock.advance(1)
    rig.tick()
    assert len(rig.actuator.actions) == 1, "one nudge per request"


def test_the_guards_own_capacity_update_is_the_nudge_and_later_nudges_repost_what_it_pushed() -> None:
    rig = Rig(harvest=True)
    rig.observe(node(8.0))                      # a busier primary: the guard cuts the capacity (no kill)
    rig.nudges.request(["stage 1->2 of r_1 at 2.0"], T0)
    rig.tick()
    (cut,) = rig.actuator.actions
    assert isinstance(cut, SetNodeCapacity) and cut.resources != FULL and not cut.stimulus_id.startswith("nudge")
    assert rig.outcomes[-1].done and rig.outcomes[-1].node_id is None and "covered by the guard's own update" in rig.outcomes[-1].note
    rig.clock.advance(5)
    rig.observe(node(8.0, total=cut.resources))  # the RM shows the guard's push: nothing more to cut
    rig.nudges.request(["update of r_1"], rig.clock.now())
    rig.tick()
    (nudge,) = [a for a in rig.actuator.actions if a.stimulus_id.startswith("nudge")]
    assert nudge.resources == cut.resources and "the guard's last push" in nudge.reason, "never the NM's full size"


def test_stale_telemetry_defers_the_nudge_until_it_is_fresh() -> None:
    rig = Rig(harvest=False)
    rig.observe(node(2.0))
    rig.clock.advance(60)
    rig.nudges.request(["window end of r_1 at 60.0"], rig.clock.now())
    for _ in range(3):
        rig.tick()
        rig.clock.advance(1)
    assert rig.actuator.actions == [] and [o.note for o in rig.outcomes] == ["deferred: the guard's telemetry is stale"]
    rig.source.set([sample(N, t=rig.clock.now(), total=FULL, node_cpu=2.0, containers_vcores=0.0)], ())
    rig.telemetry.tick(rig.clock.now())
    rig.tick()
    assert len(rig.actuator.actions) == 1 and rig.outcomes[-1].done


def test_a_dry_run_guard_sends_nudges_through_the_channels_actuator() -> None:
    rig = Rig(harvest=True, actuate=False)
    rig.observe(node(2.0))
    rig.nudges.request(["activation of r_1 at 1.0"], T0)
    rig.tick()
    (a,) = rig.actuator.actions
    assert a.stimulus_id.startswith("nudge") and a.resources == FULL, "the guard itself sent nothing"


def test_a_failed_nudge_stays_pending_and_does_not_disturb_the_guards_push_record() -> None:
    rig = Rig(harvest=False, fail=True)
    rig.observe(node(2.0))
    rig.nudges.request(["activation of r_1 at 1.0"], T0)
    rig.tick()
    assert rig.nudges.pending() is not None and "was not sent" in rig.outcomes[-1].note
    rig.clock.advance(1)
    rig.tick()  # the actuator's error comes back as data; the guard's own bookkeeping is untouched
    assert rig.board.guard_status().recent[-1].kind == "nudge"

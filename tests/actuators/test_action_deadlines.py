"""Every action has a deadline (DESIGN.md principle 16; issue 15 finding 1: a kill reached the RM
82-117 s after its data, the same cut was sent four times, an applied update was logged
"failed"). A fake RM over real HTTP that is slow: no action is sent past its deadline, a
kill-bearing cut is sent once, outcomes are what the RM reported."""

from __future__ import annotations

import threading
from typing import Iterator

import pytest
from prometheus_client import CollectorRegistry
from rm_fakes import RecordingAdapter, Reply, ScriptedRM, recording_session

from harvester.actuators.deadline import ActionBudget
from harvester.actuators.rm import RMActuator
from harvester.clock import RealClock, ScaledClock, SimClock
from harvester.domain import KillContainer, Resources, SetNodeCapacity
from harvester.observability.metrics import Metrics
from rm_client import RMClient, RMClientConfig

ROOT = "/ws/v1/cluster"
T0 = 1_800_000_000.0
NODES = [f"nm{i}:45454" for i in range(4)]
NODE_ANSWER = b'{"resourceInfo":{"memory":8192,"vCores":8}}'


def cut(node: str, data_at: float | None) -> SetNodeCapacity:
    return SetNodeCapacity(node_id=node, resources=Resources(8192, 1), overcommit_timeout_ms=0,
                           reason="primary spike: cut below allocation", data_at=data_at)


def outcomes(metrics: Metrics) -> dict[tuple[str, str], float]:
    return {(s.labels["action"], s.labels["outcome"]): s.value for m in metrics.action_outcomes.collect()
            for s in m.samples if s.name.endswith("_total")}


class SlowRM:
    """A fake RM over real HTTP whose every request costs `cost_s` of the test clock, recording
    the clock time each request ARRIVED at."""

    def __init__(self, clock: SimClock, cost_s: float) -> None:
        self.clock = clock
        self.arrivals: list[tuple[str, float]] = []
        self._lock = threading.Lock()

        def on_request(seen) -> None:  # noqa: ANN001
            with self._lock:
                self.arrivals.append((seen.path, clock.now()))
                clock.advance(cost_s)

        self.rm = ScriptedRM(on_request=on_request)
        for n in NODES:
            self.rm.script("POST", f"{ROOT}/nodes/{n}/resource", Reply(200, NODE_ANSWER))


@pytest.fixture()
def slow_rm() -> Iterator[SlowRM]:
    s = SlowRM(SimClock(T0), cost_s=10.0)
    yield s
    s.rm.close()


def test_no_action_is_sent_past_its_deadline_when_the_rm_is_slow(slow_rm: SlowRM) -> None:
    clock, metrics = slow_rm.clock, Metrics(CollectorRegistry())
    client = RMClient(RMClientConfig(urls=(slow_rm.rm.url,), max_retries=3))
    act = RMActuator(client, clock, stale_after_s=15.0, budget_s=300.0, metrics=metrics)
    batch = [cut(n, data_at=T0) for n in NODES]
    sent = act.apply(batch, "guard-1")
    # each request costs 10 s: sent at T0 and T0+10; at T0+20 the data is 20 s old > 15 s
    assert sent == batch[:2]
    assert all(at <= T0 + 15.0 for _, at in slow_rm.arrivals), slow_rm.arrivals
    assert [p for p, _ in slow_rm.arrivals] == [f"{ROOT}/nodes/{n}/resource" for n in NODES[:2]]
    errors = act.poll_errors()
    assert [(e.action, e.outcome) for e in errors] == [(batch[2], "dropped"), (batch[3], "dropped")]
    assert "20.0s old at sending > staleness limit 15s" in errors[0].error
    assert outcomes(metrics) == {("set_capacity", "sent"): 2, ("set_capacity", "dropped"): 2}


def test_the_tick_budget_bounds_a_batch_even_with_fresh_data(slow_rm: SlowRM) -> None:
    client = RMClient(RMClientConfig(urls=(slow_rm.rm.url,)))
    act = RMActuator(client, slow_rm.clock, stale_after_s=60.0, budget_s=5.0)
    sent = act.apply([cut(n, data_at=T0) for n in NODES], "guard-1")
    assert len(sent) == 1 and len(slow_rm.arrivals) == 1, "the first call spent the 5 s period"
    assert {e.details["why"] for e in act.poll_errors()} == {"budget"}


def test_an_action_without_a_data_time_is_never_sent(slow_rm: SlowRM) -> None:
    act = RMActuator(RMClient(RMClientConfig(urls=(slow_rm.rm.url,))), slow_rm.clock, stale_after_s=15, budget_s=5)
    assert act.apply([cut(NODES[0], data_at=None)], "guard-1") == []
    assert slow_rm.arrivals == [] and act.poll_errors()[0].outcome == "dropped"


def test_a_kill_bearing_cut_is_sent_once_and_an_rm_that_answers_too_late_is_unknown_not_failed() -> None:
    """Real time: the RM applies the update but answers after 3 s; the tick's budget is 0.4 s."""
    rm = ScriptedRM()
    try:
        for n in NODES:
            rm.script("POST", f"{ROOT}/nodes/{n}/resource", Reply(200, NODE_ANSWER, delay_s=3.0))
        client = RMClient(RMClientConfig(urls=(rm.url,), read_timeout_s=10.0, max_retries=3))
        clock = RealClock()
        act = RMActuator(client, clock, stale_after_s=15.0, budget_s=0.4)
        batch = [cut(n, data_at=clock.now()) for n in NODES]
        sent = act.apply(batch, "guard-1")
        assert sent == batch[:1], "it may have been applied: it counts as sent"
        assert [s.path for s in rm.seen] == [f"{ROOT}/nodes/{NODES[0]}/resource"], "never repeated"
        errors = act.poll_errors()
        assert errors[0].action == batch[0] and errors[0].outcome == "unknown"
        assert errors[0].details["error_class"] == "RMTimeoutError"
        assert [e.outcome for e in errors[1:]] == ["dropped"] * 3
    finally:
        rm.close()


def test_the_request_timeout_is_the_time_left() -> None:
    adapter = RecordingAdapter(Reply(200, NODE_ANSWER))
    client = RMClient(RMClientConfig(urls=("http://rm:8088",), connect_timeout_s=3, read_timeout_s=10),
                      recording_session(adapter))
    clock = SimClock(T0)
    act = RMActuator(client, clock, stale_after_s=15.0, budget_s=5.0)
    act.apply([cut(NODES[0], data_at=T0 - 12.0)], "guard-1")  # 3 s of data life left < the 5 s budget
    connect, read = adapter.calls[0]["timeout"]
    assert 0 < connect <= 3.0 and 0 < read <= 3.0


@pytest.mark.parametrize("error_reply, outcome", [
    (Reply(400, b'{"RemoteException":{"exception":"BadRequestException","message":"no"}}'), "failed"),
    (Reply(500, b'{"RemoteException":{"exception":"WebApplicationException","message":"x"}}'), "failed"),
    (Reply(503, b"proxy: upstream timed out"), "unknown"),
    (Reply(200, b"<html>not json</html>"), "unknown"),
])
def test_outcomes_are_recorded_as_the_rm_reports_them(error_reply: Reply, outcome: str) -> None:
    rm = ScriptedRM()
    try:
        rm.script("POST", f"{ROOT}/nodes/{NODES[0]}/resource", error_reply)
        clock = SimClock(T0)
        act = RMActuator(RMClient(RMClientConfig(urls=(rm.url,), max_retries=3)), clock, stale_after_s=15, budget_s=5)
        act.apply([cut(NODES[0], data_at=T0)], "guard-1")
        (err,) = act.poll_errors()
        assert err.outcome == outcome and len(rm.seen) == 1
    finally:
        rm.close()


def test_a_scaled_clock_budget_becomes_real_seconds() -> None:
    clock = ScaledClock(60.0, start=T0)
    verdict = ActionBudget(clock, stale_after_s=30.0, budget_s=6.0).check(cut(NODES[0], data_at=clock.now()))
    assert verdict.drop is None and verdict.timeout_s <= 6.0 / 60.0

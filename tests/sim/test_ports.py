"""SimActuator: actions applied to the model, failures returned as data (the Actuator contract)."""

from __future__ import annotations

from simrig import job, make_rig  # type: ignore[import-not-found]
from harvester.domain import Action, KillContainer, Resources, SetNodeCapacity
from harvester.sim.ports import SimActuator


class Unknown(Action):
    pass


def test_actuator_applies_and_reports_failures_on_the_next_poll() -> None:
    rig = make_rig(nodes=2, params={"reserve_fraction": 0.0})
    rig.primary(0.0, [0.0, 0.0])
    rig.submit(job("A", 0.0, [100, 100, 100]))
    rig.run(10.0)
    act = SimActuator(rig.substrate, rig.clock)
    victim = next(iter(rig.model.containers))
    actions: list[Action] = [
        KillContainer(container_id=victim, node_id="n0:8041", reason="t"),
        KillContainer(container_id=victim, node_id="n0:8041", reason="again"),
        SetNodeCapacity(node_id="n1:8041", resources=Resources(4096, 1), overcommit_timeout_ms=0, reason="t"),
        SetNodeCapacity(node_id="nope:1", resources=Resources(1, 1), reason="t"),
        SetNodeCapacity(node_id="n0:8041", resources=Resources(-1, 1), reason="t"),
        Unknown(reason="t"),
    ]
    sent = act.apply(actions, "r1")
    assert sent == [actions[0], actions[2]]
    errors = act.poll_errors()
    assert [e.action for e in errors] == [actions[1], actions[3], actions[4], actions[5]]
    assert "not running" in errors[0].error and "unknown node" in errors[1].error and "negative" in errors[2].error
    assert all(e.details == {"request_id": "r1"} and e.time == 10.0 for e in errors)
    assert act.poll_errors() == []
    assert rig.stats.kills["controller"] == 1
    assert rig.model.capacity(1) == Resources(4096, 1)
    rig.run(10.0)  # the RM deadline (0 ms) runs at the same time
    assert rig.model.allocated(1).vcores <= 1
    rig.run(1000.0)
    assert rig.record("A").finish_s is not None, "killed tasks re-ran"

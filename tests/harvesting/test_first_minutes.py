"""Issue 25, the guard's first minute, end to end: the embedded default (`make run`) with every loop
ticking as its thread would (on a SimClock), the demo cluster served over real HTTP.

Seen live before the fix: the guard's first tick read the first poll — CPU 0.0 on every node (a
first-heartbeat zero: unknown) and usedResource 0 (the RM had not allocated the demo's apps yet) —
and froze every node at that "allocation", <0 MB, 0 vc>; containers allocated meanwhile left the
nodes over-committed (TOTAL 0, negative AVAIL) for a minute, and the RM refused the demo's
Morpheus reservations ("largest gang … exceed the capacity available"), never tried again."""

from __future__ import annotations

from pathlib import Path

from harvester.decisions.reservation_lifecycle import HELD, ReservationState
from harvester.emulator.demo_recurring import DEMO_JOBS
from rm_client import Resource, RMClient, RMClientConfig

from embedded_sidecar import embedded_sidecar, run_loops

GANG = ("java.lang.Exception: The size of the largest gang in the reservation definition")


def test_no_node_goes_below_its_allocation_and_the_demo_reservations_are_accepted(tmp_path: Path) -> None:
    with embedded_sidecar(tmp_path / "h.db") as app, \
            RMClient(RMClientConfig(urls=(app.embedded.url,))) as rm:  # type: ignore[union-attr]
        seen: list[tuple[float, str, int, int, int, int]] = []

        def after(name: str) -> None:
            if name == "guard":  # what `harvester rm nodes` shows after each guard period
                for n in rm.list_nodes():
                    assert n.total_resource is not None and n.used_resource is not None
                    seen.append((app.clock.now(), n.id, n.total_resource.memory_mb, n.total_resource.vcores,
                                 n.used_resource.memory_mb, n.used_resource.vcores))

        ticks = run_loops(app, 4 * 60.0, after=after)  # every demo window is within renew_lead_s by then
        assert ticks["guard"] >= 36 and ticks["telemetry"] >= 18
        over = [s for s in seen if s[4] > s[2] or s[5] > s[3]]
        assert not over, f"capacity below the allocation the RM reports: {over[:5]}"
        zero = [s for s in seen if s[3] == 0]
        assert not zero, f"nodes set to 0 vcores: {zero[:5]}"
        guard = app.guard.status()
        assert not [e for e in guard.recent if "freeze" in e.reason], "no freeze in the first minutes"
        held = {r.job: r for r in app.control.morpheus.reservations().records if r.state in HELD}
        assert set(held) >= {j.name for j in DEMO_JOBS}, app.control.morpheus.reservations().records
        assert all(r.reservation_id for r in held.values())
        assert not [r for r in app.control.morpheus.reservations().records if r.state is ReservationState.REJECTED]


def test_a_reservation_refused_for_lack_of_capacity_is_accepted_once_capacity_is_back(tmp_path: Path) -> None:
    """The RM's own refusal (the emulator's ReservationInputValidator gang check, as recorded), retried
    by the Morpheus loop at its next ticks once the nodes have their capacity again. LowCost's plan
    is made at full capacity (no window within the 60 s lead yet); then the nodes are cut to 0."""
    lead = 60.0
    with embedded_sidecar(tmp_path / "h.db", {"harvesting": {"actuate": False},
                                              "morpheus": {"reservations": {"renew_lead_s": lead}}}) as app, \
            RMClient(RMClientConfig(urls=(app.embedded.url,))) as rm:  # type: ignore[union-attr]
        assert app.loop("morpheus-refit").run_once() is not None
        loop = app.loop("morpheus-reservations")
        assert loop.run_once().summary["actions"] == 0  # type: ignore[union-attr]
        nodes = [n.id for n in rm.list_nodes()]
        for node in nodes:  # as the old first-minute freeze left them
            rm.update_node_resource(node, Resource(0, 0), -1, allow_zero=True)
        period = app.morpheus_settings.reservations.control_period_s
        waiting: list = []  # type: ignore[type-arg]
        for _ in range(int(600 / period)):  # until a window comes within the lead and is submitted
            app.clock.advance(period)  # type: ignore[attr-defined]
            assert loop.run_once() is not None
            waiting = [r for r in app.control.morpheus.reservations().records if r.refusals]
            if waiting:
                break
        assert waiting and all(r.state is ReservationState.PLANNED and GANG in r.last_error for r in waiting), waiting
        for node in nodes:
            rm.update_node_resource(node, Resource(16384, 16), -1)
        for _ in range(2):  # the first retry comes one control period after the refusal
            app.clock.advance(period)  # type: ignore[attr-defined]
            assert loop.run_once() is not None
        after = {r.key: r for r in app.control.morpheus.reservations().records}
        assert all(after[r.key].state in HELD and after[r.key].reservation_id for r in waiting), after
        assert any(a.reason.startswith("retry 1: the RM refused it for lack of capacity")
                   for a in app.control.morpheus.reservations().actions)

"""The live reservation actuator and read side against the emulated 3.3.6 RM over HTTP
(actuators/reservations.py, telemetry/rm_reservations.py): recorded forms and answers."""

from __future__ import annotations

from typing import Iterator

import pytest

from harvester.actuators.reservations import RMReservationActuator, definition_of
from harvester.decisions.reservation_actions import (
    DeleteReservation, Outcome, SubmitReservation, UpdateReservation, spec_from_steps,
)
from harvester.domain import Resources
from harvester.telemetry.rm_reservations import RMReservationView, spec_of
from harvester.telemetry.source import TelemetryError
from rm_client import Interpreter, RMClient, RMClientConfig

from emu_cluster import EmuCluster

C = Resources(1024, 1)


@pytest.fixture()
def cluster() -> Iterator[EmuCluster]:
    with EmuCluster() as c:
        yield c


def spec(c: EmuCluster, alloc: tuple[int, ...] = (2, 2, 4), start_in_s: int = 120, name: str = "hv|etl|0"):  # type: ignore[no-untyped-def]
    return spec_from_steps(name, int((c.clock.now() + start_in_s) * 1000), alloc, 60_000, C)


def test_the_definition_is_the_recorded_wire_form(cluster: EmuCluster) -> None:
    d = definition_of(spec(cluster))
    assert d.interpreter is Interpreter.R_ORDER_NO_GAP and d.recurrence_period_ms == 0
    assert [(r.num_containers, r.min_concurrency, r.duration_ms) for r in d.requests] == [(2, 2, 120_000), (4, 4, 60_000)]
    assert spec_of(d) == spec(cluster), "the read side decodes what the write side sent"


def test_submit_update_delete_and_the_list_agree(cluster: EmuCluster) -> None:
    act = RMReservationActuator(cluster.client, cluster.clock.now)
    view = RMReservationView(cluster.client)
    s = spec(cluster)
    (res,) = act.apply([SubmitReservation(key="etl@0", as_of=cluster.clock.now(), queue="root.default", spec=s,
                                          reason="renew")], "t1")
    assert res.outcome is Outcome.SENT and res.reservation_id and res.reservation_id.startswith("reservation_")
    (listed,) = view.list("root.default")
    assert listed.reservation_id == res.reservation_id and listed.name == "hv|etl|0" and listed.spec.equivalent(s)
    bigger = spec(cluster, (2, 2, 6))
    (up,) = act.apply([UpdateReservation(key="etl@0", as_of=cluster.clock.now(), reservation_id=res.reservation_id,
                                         spec=bigger, reason="dra")], "t2")
    assert up.outcome is Outcome.SENT and view.list("root.default")[0].spec.equivalent(bigger)
    (gone,) = act.apply([DeleteReservation(key="etl@0", as_of=cluster.clock.now(), reservation_id=res.reservation_id,
                                           reason="end")], "t3")
    assert gone.outcome is Outcome.SENT and view.list("root.default") == []
    (again,) = act.apply([DeleteReservation(key="etl@0", as_of=cluster.clock.now(), reservation_id=res.reservation_id,
                                            reason="end")], "t4")
    assert again.outcome is Outcome.REFUSED and again.remote_exception == "IllegalArgumentException"
    assert again.error == f"The specified Reservation with ID {res.reservation_id} does not exist in the plan"


def test_refusals_keep_the_rms_words_and_stale_actions_are_dropped(cluster: EmuCluster) -> None:
    act = RMReservationActuator(cluster.client, cluster.clock.now, stale_after_s=30)
    huge = spec(cluster, (20,))  # a gang of 20 x 1024 MB > the 16384 MB plan (captures err-reservation-submit-gang-...)
    now = cluster.clock.now()
    stale = SubmitReservation(key="b@0", as_of=now - 31, queue="root.default", spec=spec(cluster), reason="old data")
    bad, dropped = act.apply([SubmitReservation(key="a@0", as_of=now, queue="root.default", spec=huge, reason="r"),
                              stale], "t")
    assert bad.outcome is Outcome.REFUSED and "exceed the capacity available" in bad.error and bad.reservation_id
    assert dropped.outcome is Outcome.DROPPED and dropped.reservation_id is None and "31.0s old > 30s" in dropped.error
    assert RMReservationView(cluster.client).list("root.default") == []
    past = spec(cluster, start_in_s=-600)
    (late,) = act.apply([SubmitReservation(key="c@0", as_of=now, queue="root.default", spec=past, reason="r")], "t")
    assert late.outcome is Outcome.REFUSED and "is the past" in late.error


def test_an_unreachable_rm_is_a_failure_of_unknown_effect_and_reads_raise() -> None:
    dead = RMClient(RMClientConfig(urls=("http://127.0.0.1:9",), max_retries=0, connect_timeout_s=0.5))
    act = RMReservationActuator(dead, lambda: 0.0)
    (res,) = act.apply([DeleteReservation(key="k", as_of=0.0, reservation_id="reservation_1_0001", reason="r")], "t")
    assert res.outcome is Outcome.FAILED and res.error
    with pytest.raises(TelemetryError, match="reservation list"):
        RMReservationView(dead).list("root.default")


def test_plan_capacity_and_demands(cluster: EmuCluster) -> None:
    view = RMReservationView(cluster.client, normalize=lambda n: n.split("-2026")[0])
    assert view.plan_capacity("root.default") == Resources(16384, 16), "root.default holds 100 % of two 8 GB NMs"
    with pytest.raises(TelemetryError, match="no queue root.nope"):
        view.plan_capacity("root.nope")
    app = cluster.work.distributed_shell(20, Resources(1024, 1), duration_s=None, name="etl-20261124")
    cluster.advance(20)
    (d,) = view.demands().values()
    held = cluster.client.get_app(app.app_id)
    assert d.job == "etl" and d.apps == (app.app_id,) and d.used == Resources(held.allocated_mb, held.allocated_vcores)
    assert d.pending.memory_mb > 0 and d.used.memory_mb + d.pending.memory_mb == 1024 + 20 * 1024, \
        "the AM (512 MB normalized to the 1024 MB minimum) + every worker, held or asked for"

"""harvester.v1.SloAdvisor over a real loopback gRPC server (advice/slo_advisor.py): the SLOs and
reservations Morpheus publishes; Jockey's method and a disabled Morpheus answer UNIMPLEMENTED."""

from __future__ import annotations

from typing import Iterator

import grpc
import pytest
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.config import parse_settings
from harvester.v1 import slo_pb2, slo_pb2_grpc

from emu_cluster import EmuCluster
from morpheus_rig import JOB, PERIOD, Rig


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    r = Rig()
    try:
        r.step(25)  # planned, the next window submitted
        yield r
    finally:
        r.close()


def stub(app: Harvester) -> slo_pb2_grpc.SloAdvisorStub:
    return slo_pb2_grpc.SloAdvisorStub(grpc.insecure_channel(app.grpc.address))


def test_list_and_get_slos(rig: Rig) -> None:
    s = stub(rig.app)
    for queue in ("", "root.default", "default"):
        (slo,) = s.ListSlos(slo_pb2.ListSlosRequest(queue=queue), timeout=5).slos
        assert slo.job_name == JOB.name
    assert list(s.ListSlos(slo_pb2.ListSlosRequest(queue="root.other"), timeout=5).slos) == []
    slo = s.GetSlo(slo_pb2.GetSloRequest(job_name=JOB.name), timeout=5)
    assert slo.period_s == PERIOD and slo.actionable and slo.planned and slo.state == "PROPOSED"
    assert 260 < slo.deadline_offset_s < 280 and 5 < slo.earliest_offset_s < 15 and slo.violation_rate == 0.0
    assert slo.reason.startswith("d = p50 of 12 first output reads") and slo.inferred_from == slo.reason
    assert slo.plan_reason.startswith("LowCost: steps 1..3") and slo.reservation_state == "SCHEDULED"
    (step,) = slo.skyline
    assert (step.offset_s, step.duration_s, step.resources.memory_mb, step.resources.vcores) == (0.0, 180.0, 3072, 3)
    for name, code in (("", grpc.StatusCode.INVALID_ARGUMENT), ("nope", grpc.StatusCode.NOT_FOUND)):
        with pytest.raises(grpc.RpcError) as err:
            s.GetSlo(slo_pb2.GetSloRequest(job_name=name), timeout=5)
        assert err.value.code() is code


def test_list_reservations_and_jockeys_method(rig: Rig) -> None:
    s = stub(rig.app)
    (r,) = s.ListReservations(slo_pb2.ListReservationsRequest(queue="root.default"), timeout=5).reservations
    slo = s.GetSlo(slo_pb2.GetSloRequest(job_name=JOB.name), timeout=5)
    assert r.reservation_id == slo.reservation_id and r.job_name == JOB.name and r.state == "SCHEDULED"
    assert r.queue == "root.default" and r.recurrence_ms == 0 and r.reason == "listed by the RM"
    assert r.deadline.ToSeconds() - r.arrival.ToSeconds() == 180
    (a,) = r.allocations
    assert (a.offset_s, a.duration_s, a.resources.memory_mb) == (0.0, 180.0, 3072)
    with pytest.raises(grpc.RpcError) as err:
        s.GetDeadlineControl(slo_pb2.GetDeadlineControlRequest(app_id="application_1_0001"), timeout=5)
    assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED and "Jockey" in err.value.details()


def test_disabled_morpheus_answers_unimplemented_saying_how_to_enable_it() -> None:
    with EmuCluster() as c:
        settings = parse_settings({
            "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
            "store": {"backend": "memory"}, "cluster": {"source": "rm"}, "rm": {"urls": [c.url]}}, environ={})
        app = Harvester(settings, clock=c.clock, registry=CollectorRegistry())
        app.start(run_loops=False)
        try:
            assert app.morpheus_settings.enabled is False, "off for a real RM by default"
            assert not any(loop.name.startswith("morpheus") for loop in app.loops)
            with pytest.raises(grpc.RpcError) as err:
                stub(app).ListSlos(slo_pb2.ListSlosRequest(), timeout=5)
            assert err.value.code() is grpc.StatusCode.UNIMPLEMENTED
            assert "Morpheus is disabled: set morpheus.enabled: true" in err.value.details()
        finally:
            app.stop()

"""Behaviour of the emulated RM driven directly and over HTTP (harvester/emulator)."""

from __future__ import annotations

import time

import pytest
import requests

from harvester.clock import ScaledClock, SimClock
from harvester.domain import Resources as R
from harvester.emulator import AmKind, AppSpec, Emulator, EmulatorConfig, EmulatorServer, Workload
from harvester.emulator.lifecycle import AppState

T0 = 1_795_430_000.0
N1, N2 = "localhost:45454", "localhost:45455"


@pytest.fixture()
def rig() -> tuple[SimClock, Emulator, Workload]:
    clock = SimClock(start=T0)
    emu = Emulator(clock, EmulatorConfig(cluster_ts_ms=int(T0 * 1000)))
    w = Workload(emu)
    w.add_nodes([N1, N2], R(8192, 8), physical_cores=2)
    return clock, emu, w


def step(clock: SimClock, emu: Emulator, seconds: float) -> None:
    clock.advance(seconds)
    emu.sync()


def test_workers_start_one_per_node_heartbeat_after_the_am_registers(rig) -> None:  # type: ignore[no-untyped-def]
    clock, emu, w = rig
    w.update_node(N2, 512, 1)  # nothing fits on N2: everything lands on N1
    app = w.distributed_shell(4, R(1024, 1), duration_s=60)
    seen = []
    for _ in range(10):
        step(clock, emu, 1.0)
        seen.append(len(w.containers(app.app_id)))
    assert app.state is AppState.RUNNING and seen[-1] == 5
    assert all(b - a <= 1 for a, b in zip(seen, seen[1:]))  # one container per heartbeat on one node


def test_negative_capacity_is_reported_as_sent_and_kills_like_zero(rig) -> None:  # type: ignore[no-untyped-def]
    clock, emu, w = rig
    w.update_node(N2, 512, 1)
    app = w.distributed_shell(2, R(1024, 1))
    step(clock, emu, 10.0)
    n1 = emu.node_index(N1)
    w.update_node(N1, -5, -1, overcommit_timeout_ms=0)
    step(clock, emu, 0.1)
    assert (emu.declared_mem[n1], emu.declared_vc[n1]) == (-5, -1)  # what the RM shows
    assert emu.model.capacity(n1) == R(0, 0)                        # what the shared model holds
    live = [emu.containers[c] for c in w.containers(app.app_id)]
    assert [c.is_am for c in live] == [True]                         # only the AM survives


def test_ds_does_not_replace_but_mapreduce_reruns_preempted_work(rig) -> None:  # type: ignore[no-untyped-def]
    clock, emu, w = rig
    w.update_node(N2, 512, 1)
    ds = w.distributed_shell(2, R(1024, 1))
    mr = w.mapreduce_sleep(2, R(1024, 1), map_duration_s=600, am=R(1024, 1))
    step(clock, emu, 15.0)
    assert len(w.containers(ds.app_id)) == 3 and len(w.containers(mr.app_id)) == 3
    w.update_node(N1, 4096, 4, overcommit_timeout_ms=0)  # 6 containers -> 4 fit: the 2 youngest die
    step(clock, emu, 0.5)
    assert mr.preempted_non_am + ds.preempted_non_am == 2
    w.update_node(N1, 8192, 8)
    step(clock, emu, 10.0)
    assert len(w.containers(mr.app_id)) == 3  # MR asked again for its lost maps
    assert len(w.containers(ds.app_id)) == 3 - ds.preempted_non_am


def test_rest_command_am_holds_its_container_then_the_app_fails(rig) -> None:  # type: ignore[no-untyped-def]
    clock, emu, w = rig
    app = w.submit(AppSpec(name="rest", kind=AmKind.COMMAND, am=R(512, 1), am_hold_s=5.0, rest_submitted=True))
    step(clock, emu, 3.0)
    assert app.state is AppState.ACCEPTED and len(w.containers(app.app_id)) == 1
    step(clock, emu, 5.0)
    assert app.state is AppState.FAILED and "exited with  exitCode: 0" in app.diagnostics


def test_lifetime_expiry_kills_the_app(rig) -> None:  # type: ignore[no-untyped-def]
    clock, emu, w = rig
    app = w.distributed_shell(1, R(1024, 1))
    emu.apps_mgr.set_lifetime(app, int((T0 + 30) * 1000))
    step(clock, emu, 31.0)
    assert app.state is AppState.KILLED and "exceeded the lifetime" in app.diagnostics


def test_reservation_apps_wait_for_a_cluster_resource_change(rig) -> None:  # type: ignore[no-untyped-def]
    clock, emu, w = rig
    with EmulatorServer(emu) as server:
        base = server.url + "/ws/v1/cluster/reservation"
        rid = requests.post(base + "/new-reservation").json()["reservation-id"]
        now = int(clock.now() * 1000)
        r = requests.post(base + "/submit", json={"queue": "root.default", "reservation-id": rid,
                                                  "reservation-definition": {
                                                      "arrival": now + 10_000, "deadline": now + 600_000,
                                                      "reservation-requests": {
                                                          "reservation-request-interpreter": 1,
                                                          "reservation-request": {
                                                              "capability": {"memory": 1024, "vCores": 1},
                                                              "num-containers": 2, "min-concurrency": 2,
                                                              "duration": 590_000}}}})
        assert (r.status_code, r.text) == (202, "")
        early = w.distributed_shell(1, R(1024, 1), reservation_id=rid)
        assert early.state is AppState.FAILED and "not currently active" in early.diagnostics
        step(clock, emu, 12.0)
        app = w.distributed_shell(1, R(1024, 1), reservation_id=rid)
        step(clock, emu, 20.0)
        assert app.state is AppState.ACCEPTED and not w.containers(app.app_id)
        w.update_node(N1, 8192, 8)  # any node-resource update releases it (~2 s)
        step(clock, emu, 6.0)
        assert app.state is AppState.RUNNING
        assert requests.post(base + "/delete", json={"reservation-id": rid}).json() == {}
        step(clock, emu, 2.0)
        assert app.leaf == "root.default-default" and app.state is AppState.RUNNING  # moved, not killed


def test_server_port_zero_wrong_method_and_plain_text_errors(rig) -> None:  # type: ignore[no-untyped-def]
    _, emu, _ = rig
    with EmulatorServer(emu) as server:
        assert server.port > 0
        r = requests.get(server.url + "/ws/v1/cluster/reservation/submit")
        assert r.status_code == 500 and r.headers["Content-Type"] == "application/json;charset=null"
        r = requests.post(server.url + "/ws/v1/cluster/containers/container_bogus/signal/GRACEFUL_SHUTDOWN")
        assert (r.status_code, r.text) == (500, "Invalid ContainerId: container_bogus")


def test_a_scaled_clock_runs_the_cluster_faster_than_real_time() -> None:
    clock = ScaledClock(speed=200.0, start=T0)
    emu = Emulator(clock)
    w = Workload(emu)
    w.add_nodes([N1], R(8192, 8), physical_cores=2)
    app = w.distributed_shell(1, R(1024, 1), duration_s=100.0)
    server = EmulatorServer(emu, tick_s=1.0).start()  # the ticker advances state with nobody polling
    try:
        deadline = time.monotonic() + 10.0
        while app.state is not AppState.FINISHED and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app.state is AppState.FINISHED and app.final_status == "SUCCEEDED"
    finally:
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2.0


def test_the_emulator_serves_a_model_the_simulator_fills() -> None:
    from harvester.sim.cluster import ClusterModel

    clock = SimClock(start=T0)
    model = ClusterModel()
    emu = Emulator(clock, model=model)
    model.add_nodes(["sim-1:45454", "sim-2:45454"], R(8192, 8), physical_cores=4)  # the simulator's side
    model.allocate("container_1_0001_01_000001", "application_1_0001", 1, R(2048, 2), now=T0)
    model.set_capacity(0, R(4096, 4), now=T0)
    with EmulatorServer(emu) as server:
        nodes = {n["id"]: n for n in requests.get(server.url + "/ws/v1/cluster/nodes").json()["nodes"]["node"]}
    assert nodes["sim-1:45454"]["totalResource"]["memory"] == 4096
    assert nodes["sim-2:45454"]["usedResource"]["memory"] == 2048 and nodes["sim-2:45454"]["numContainers"] == 1
    assert nodes["sim-2:45454"]["nodeHTTPAddress"] == "sim-2:8042"


def test_server_stop_before_start_releases_the_port_without_hanging() -> None:
    import socket

    from harvester.clock import SimClock
    from harvester.emulator.server import EmulatorServer
    from harvester.emulator.state import Emulator, EmulatorConfig

    server = EmulatorServer(Emulator(SimClock(1.7e9), EmulatorConfig()), "127.0.0.1", 0)
    port = server.port
    server.stop()
    server.stop()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # free again


def test_delegation_tokens_need_kerberos_and_name_the_callers_auth_type(rig) -> None:  # type: ignore[no-untyped-def]
    _, emu, _ = rig
    with EmulatorServer(emu) as server:
        url = server.url + "/ws/v1/cluster/delegation-token"
        anonymous = requests.post(url, json={"renewer": "root"})
        simple = requests.post(url + "?user.name=root", json={"renewer": "root"})
    assert (anonymous.status_code, simple.status_code) == (403, 403)
    assert anonymous.text.endswith("got type null") and simple.text.endswith("got type SIMPLE")

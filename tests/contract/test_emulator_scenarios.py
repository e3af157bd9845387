"""The emulator reproduces the recorded RM dynamics (fixtures/yarn-3.3.6/scenarios), part 1.

Each scenario's timeline is replayed on a SimClock at the recorded times (emu_timeline.py):
the recorder's REST writes with their exact bodies, its CLI actions (distributedshell clients,
CPU burners) as workload steps. Then (a) every polled answer outside short transition windows
(app start-up, a few seconds after writes) has the recorded shape, and (b) the dynamics the
scenario README states hold in the emulated answers: which containers die, when, with which
exit status as the NM, the AM and the RM report it; negative availability; metrics clamping;
utilization units and delays.

Reservation and queue scenarios: test_emulator_scenarios_reservations.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from emu_timeline import Exchange, accepted, am_startups, as_list, field, heartbeats, load, quiet, replay, shape_mismatches, start_epoch
from emu_world import N1, N2, World

from harvester.domain import Resources

CLUSTER = 1795430060362
UNSUPPORTED_SCENARIOS = {
    "queue-refresh-submit-failure": "`yarn rmadmin -refreshQueues` (changing the queue tree of a running RM) is "
                                    "out of the emulator's scope; its queue tree is fixed at construction",
}


def _burn_ids(n: int):  # type: ignore[no-untyped-def]
    def burn(w: World) -> None:
        for _ in range(n):
            w.emu.apps_mgr.new_application_id()
    return burn


def _ds(workers: int, startup: float | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    return lambda w: w.work.distributed_shell(workers, Resources(1024, 1), am=Resources(1024, 1),
                                              am_startup_s=startup, **kw)


def _run(fixtures_dir: Path, name: str, actions: list) -> tuple[World, list[Exchange]]:  # type: ignore[type-arg]
    rows, events = load(fixtures_dir / "yarn-3.3.6" / "scenarios" / name)
    base = start_epoch(events)
    world = World(CLUSTER)
    # each NM's heartbeat phase as the RM log of this recording shows it (placement order and
    # signal delivery depend on it)
    for node, at in heartbeats(fixtures_dir / "yarn-3.3.6" / "scenarios" / name).items():
        world.work.pin_heartbeat(node, at)
    world.clock.set(base)
    world.base = base
    try:
        exchanges = list(replay(world, rows, base, actions))
    finally:
        world.close()
    return world, exchanges


def _submits(fixtures_dir: Path, name: str) -> list[float]:
    """Submission times (s after the start): the RM log's acceptance where it has it."""
    return [t for t, _ in _clients(fixtures_dir, name)]


def _clients(fixtures_dir: Path, name: str) -> list[tuple[float, float | None]]:
    """(submission time, the AM's recorded start-up) of each app the recorder's clients started."""
    scenario = fixtures_dir / "yarn-3.3.6" / "scenarios" / name
    _, events = load(scenario)
    base, rm, startup = start_epoch(events), accepted(scenario), am_startups(scenario)
    return [(rm[e["app"]] - base if e.get("app") in rm else e["t_ms"] / 1000, startup.get(e.get("app", "")))
            for e in events if e["event"] == "app_submitted"]


def _gets(exchanges: list[Exchange], suffix: str) -> list[Exchange]:
    return [ex for ex in exchanges if ex.method == "GET" and ex.path.endswith(suffix)]


def _node(doc: Any, node_id: str) -> Any:
    return next(n for n in as_list(field(doc, "nodes", "node")) if n.get("id") == node_id)


def _res(node: Any, key: str) -> tuple[int, int]:
    r = node.get(key)
    return r.get("memory"), r.get("vCores")


def _writes(exchanges: list[Exchange]) -> list[tuple[float, float]]:
    return [(ex.t, 2.5) for ex in exchanges if ex.method != "GET"]


def _startups(fixtures_dir: Path, name: str) -> list[tuple[float, float]]:
    """Transition windows: app start-up (client start -> all containers; the DS AM also briefly
    holds and releases one extra container, overcommit-timeout README) and app end (the RM keeps
    `resourceInfo` and the NMs their DONE containers for a moment)."""
    _, events = load(fixtures_dir / "yarn-3.3.6" / "scenarios" / name)
    # the workers exit up to ~2 s before the app ends (the AM hears of it at its next allocate call,
    # then unregisters and stops); which worker goes first depends on the AM's launch threads
    ends = [(e["t_ms"] / 1000 - 2.5, 5.5) for e in events if e["event"] == "app_final"]
    return [(t, 11.0) for t in _submits(fixtures_dir, name)] + ends


def _other_scenarios_apps(ex: Exchange) -> bool:
    """The live cluster's app list also held earlier scenarios' apps; the emulator starts empty."""
    return ex.path == "/ws/v1/cluster/apps"


# --- overcommit-timeout ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def overcommit(fixtures_dir: Path) -> tuple[World, list[Exchange]]:
    subs = _clients(fixtures_dir, "overcommit-timeout")
    return _run(fixtures_dir, "overcommit-timeout", [(t, _ds(4, up, duration_s=300.0)) for t, up in subs])


def _app_containers(exchanges: list[Exchange], app: str, t0: float, t1: float) -> list[tuple[float, set[str]]]:
    out = []
    for ex in exchanges:
        if ex.method == "GET" and app in ex.path and ex.path.endswith("/containers") and t0 <= ex.t <= t1:
            ids = {c.get("containerId") for c in as_list(field(ex.emu(), "container"))}
            out.append((ex.t, ids))
    return out


def test_overcommit_answers_have_the_recorded_shapes(overcommit: tuple[World, list[Exchange]],
                                                      fixtures_dir: Path) -> None:
    world, exchanges = overcommit
    busy = _startups(fixtures_dir, "overcommit-timeout") + _writes(exchanges)
    assert shape_mismatches(exchanges, busy, _other_scenarios_apps) == []


def test_timeout_minus_one_kills_nothing_and_available_goes_negative(overcommit: tuple[World, list[Exchange]]) -> None:
    _, exchanges = overcommit
    polls = [ex for ex in _gets(exchanges, "/ws/v1/cluster/nodes") if 23.0 <= ex.t <= 82.5]
    assert len(polls) > 50
    for ex in polls:
        n1 = _node(ex.emu(), N1)
        assert _res(n1, "totalResource") == (3072, 3)
        assert _res(n1, "usedResource") == (5120, 5)
        assert _res(n1, "availableResource") == (-2048, -2) and n1.get("availMemoryMB") == -2048
    for ex in [e for e in _gets(exchanges, "/ws/v1/cluster/metrics") if 23.0 <= e.t <= 82.5]:
        m = field(ex.emu(), "clusterMetrics")
        # available clamps at 0 and total = allocated + available (not the real capacity)
        assert (m.get("availableMB"), m.get("allocatedMB"), m.get("totalMB")) == (0, 5120, 5120)
    app = f"application_{CLUSTER}_0001"
    assert all(len(ids) == 5 for _, ids in _app_containers(exchanges, app, 23.0, 82.5))


def test_timeout_zero_kills_the_two_youngest_workers_at_once(overcommit: tuple[World, list[Exchange]]) -> None:
    world, exchanges = overcommit
    app = f"application_{CLUSTER}_0001"
    c = [f"container_{CLUSTER}_0001_01_{i:06d}" for i in range(1, 6)]
    killed = [world.emu.containers[c[4]], world.emu.containers[c[3]]]
    for rec in killed:
        assert rec.finished_at is not None and 0 <= rec.finished_at - (world.base + 90.769) <= 0.1
        assert (rec.nm_exit_code, rec.am_exit_status) == (-106, -102)
        assert "Container Killed by ResourceManager" in rec.nm_diagnostics
        assert rec.am_diagnostics == "Container preempted by scheduler"
    for t, ids in _app_containers(exchanges, app, 91.0, 155.0):
        assert ids == set(c[:3]), t  # the AM is never chosen; no replacements are asked for
    after = next(ex for ex in _gets(exchanges, f"/apps/{app}") if ex.t >= 91.0).emu()
    assert field(after, "app", "preemptedResourceMB") == 2048
    assert field(after, "app", "numNonAMContainerPreempted") == 2
    nm = next(ex for ex in _gets(exchanges, "/ws/v1/node/containers") if ex.t >= 91.0 and N1 in ex.path).emu()
    done = {x.get("id"): x for x in as_list(field(nm, "containers", "container")) if x.get("state") == "DONE"}
    assert set(done) == {c[3], c[4]} and {x.get("exitCode") for x in done.values()} == {-106}


def test_node_used_lags_the_kill_until_the_nm_reports_it(overcommit: tuple[World, list[Exchange]]) -> None:
    _, exchanges = overcommit
    used = [(ex.t, _res(_node(ex.emu(), N1), "usedResource")) for ex in _gets(exchanges, "/ws/v1/cluster/nodes")]
    assert next(u for t, u in used if t >= 90.9) == (5120, 5)  # recorded: 5120 at 91.0
    assert next(u for t, u in used if t >= 93.0) == (3072, 3)  # recorded: 3072, available 0/0 at 93.0


def test_positive_timeout_is_milliseconds_and_kills_at_the_next_heartbeat(
        overcommit: tuple[World, list[Exchange]]) -> None:
    world, _ = overcommit
    for i in (5, 4):
        rec = world.emu.containers[f"container_{CLUSTER}_0002_01_{i:06d}"]
        waited = rec.finished_at - (world.base + 170.804)
        assert 0.02 <= waited <= 1.02 and (rec.nm_exit_code, rec.am_exit_status) == (-106, -102)
    assert world.emu.containers[f"container_{CLUSTER}_0002_01_000003"].finished_at > world.base + 260


def test_a_vcores_only_cut_kills_too(overcommit: tuple[World, list[Exchange]]) -> None:
    world, exchanges = overcommit
    rec = world.emu.containers[f"container_{CLUSTER}_0002_01_000003"]
    assert 0 <= rec.finished_at - (world.base + 260.824) <= 0.1 and rec.nm_exit_code == -106
    n1 = _node(next(ex for ex in _gets(exchanges, "/ws/v1/cluster/nodes") if ex.t >= 263.0).emu(), N1)
    assert _res(n1, "usedResource") == (2048, 2) and _res(n1, "availableResource") == (6144, 0)


def test_running_containers_follow_the_recording(overcommit: tuple[World, list[Exchange]], fixtures_dir: Path) -> None:
    _, exchanges = overcommit
    busy = _startups(fixtures_dir, "overcommit-timeout") + _writes(exchanges)
    compared = 0
    for ex in exchanges:
        if ex.method == "GET" and "/apps/application_" in ex.path and ex.path.count("/") == 5 and quiet(ex.t, busy):
            assert field(ex.emu(), "app", "runningContainers") == field(ex.rec(), "app", "runningContainers"), ex.t
            assert field(ex.emu(), "app", "state") == field(ex.rec(), "app", "state"), ex.t
            compared += 1
    assert compared > 200


# --- cpu-burn -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cpuburn(fixtures_dir: Path) -> tuple[World, list[Exchange]]:
    ((sub, up),) = _clients(fixtures_dir, "cpu-burn")

    def burner(w: World) -> None:  # 2 x `while True: pass` outside YARN on the shared host
        w.work.burn(N1, 2.0, w.base + 20.002, w.base + 80.003)

    return _run(fixtures_dir, "cpu-burn", [(0.0, _burn_ids(2)), (0.0, burner),
                                           (sub, _ds(2, up, duration_s=60.0, cpu_cores=0.95, exit_code=124))])


def _cpu(exchanges: list[Exchange], node: str, key: str, emulated: bool = True) -> list[tuple[float, float]]:
    out = []
    for ex in _gets(exchanges, "/ws/v1/cluster/nodes"):
        doc = ex.emu() if emulated else ex.rec()
        out.append((ex.t, _node(doc, node).get("resourceUtilization").get(key)))
    return out


def test_host_cpu_is_physical_cores_seen_two_to_seven_seconds_late(cpuburn: tuple[World, list[Exchange]]) -> None:
    _, exchanges = cpuburn
    for node in (N1, N2):  # both NMs measure the whole host
        series = _cpu(exchanges, node, "nodeCPUUsage")
        rise = next(t for t, v in series if t >= 20.0 and v >= 1.0)
        fall = next(t for t, v in series if t >= 80.0 and v < 0.5)
        assert 2.0 <= rise - 20.002 <= 7.0 and 1.0 <= fall - 80.003 <= 7.0
        assert all(1.95 <= v <= 2.0 for t, v in series if 30.0 <= t <= 79.0)


def test_samples_change_in_three_second_steps(cpuburn: tuple[World, list[Exchange]]) -> None:
    _, exchanges = cpuburn
    for node in (N1, N2):
        changes = [t for (t0, v0), (t, v) in zip(_cpu(exchanges, node, "nodeCPUUsage"),
                                                 _cpu(exchanges, node, "nodeCPUUsage")[1:]) if v != v0]
        assert changes and all(b - a >= 2.9 for a, b in zip(changes, changes[1:]))


def test_containers_cpu_is_in_vcores_and_units_follow_the_rm(cpuburn: tuple[World, list[Exchange]]) -> None:
    _, exchanges = cpuburn
    for node in (N1, N2):  # one busy worker per NM: 0.95 cores x 8 vcores / 2 cores
        assert all(3.5 <= v <= 4.0 for t, v in _cpu(exchanges, node, "containersCPUUsage") if 156.0 <= t <= 205.0)
        assert all(v < 0.1 for t, v in _cpu(exchanges, node, "containersCPUUsage") if t >= 215.0)
    for ex in _gets(exchanges, "/ws/v1/cluster/nodes")[::10]:
        for n in as_list(field(ex.emu(), "nodes", "node")):
            u = n.get("resourceUtilization")
            assert n.get("cpuUtilization") == pytest.approx(u.get("nodeCPUUsage") / 2 * 100, rel=1e-5)
            assert n.get("memUtilization") == pytest.approx(u.get("nodePhysicalMemoryMB") / 24576 * 100, rel=2e-3)


def test_emulated_cpu_tracks_the_recorded_cpu(cpuburn: tuple[World, list[Exchange]]) -> None:
    _, exchanges = cpuburn
    busy = [(20.0, 8.0), (80.0, 8.0), (140.0, 16.0), (205.0, 11.0)]
    for node in (N1, N2):
        rec = dict(_cpu(exchanges, node, "nodeCPUUsage", emulated=False))
        emu = dict(_cpu(exchanges, node, "nodeCPUUsage"))
        off = [(t, rec[t], emu[t]) for t in rec if quiet(t, busy) and abs(rec[t] - emu[t]) > 0.25]
        assert off == []


def test_cpuburn_answers_have_the_recorded_shapes(cpuburn: tuple[World, list[Exchange]], fixtures_dir: Path) -> None:
    _, exchanges = cpuburn
    assert shape_mismatches(exchanges, _startups(fixtures_dir, "cpu-burn"), _other_scenarios_apps) == []


def test_busy_workers_exiting_124_finish_the_app_as_failed(cpuburn: tuple[World, list[Exchange]]) -> None:
    _, exchanges = cpuburn
    last = _gets(exchanges, f"/apps/application_{CLUSTER}_0003")[-1].emu()
    assert (field(last, "app", "state"), field(last, "app", "finalStatus")) == ("FINISHED", "FAILED")


# --- signal-and-kill ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def signals(fixtures_dir: Path) -> tuple[World, list[Exchange]]:
    ((sub, up),) = _clients(fixtures_dir, "signal-and-kill")
    return _run(fixtures_dir, "signal-and-kill", [(0.0, _burn_ids(3)), (sub, _ds(3, up, duration_s=300.0))])


def test_signal_answers_and_shapes_match(signals: tuple[World, list[Exchange]], fixtures_dir: Path) -> None:
    _, exchanges = signals
    for ex in exchanges:
        if ex.method == "POST":
            assert (ex.emulated.status, ex.emulated.body) == (200, "")
    busy = _startups(fixtures_dir, "signal-and-kill") + _writes(exchanges)
    assert shape_mismatches(exchanges, busy, _other_scenarios_apps) == []


@pytest.mark.parametrize("seq,posted,code,signal", [(2, 12.573, 143, "SIGTERM"), (3, 17.584, 137, "SIGKILL")])
def test_signals_end_the_container_at_the_next_heartbeat(signals: tuple[World, list[Exchange]], seq: int,
                                                         posted: float, code: int, signal: str) -> None:
    world, exchanges = signals
    cid = f"container_{CLUSTER}_0004_01_{seq:06d}"
    rec = world.emu.containers[cid]
    assert 0 < rec.finished_at - (world.base + posted) <= 1.05
    assert (rec.nm_exit_code, rec.am_exit_status) == (code, code) and signal in rec.nm_diagnostics
    app = f"application_{CLUSTER}_0004"
    gone = [ids for t, ids in _app_containers(exchanges, app, posted + 1.05, 47.5)]
    assert gone and all(cid not in ids for ids in gone)


def test_no_replacements_then_the_kill(signals: tuple[World, list[Exchange]]) -> None:
    _, exchanges = signals
    app = f"application_{CLUSTER}_0004"
    polls = _gets(exchanges, f"/apps/{app}")
    assert all(field(p.emu(), "app", "runningContainers") == 2 for p in polls if 19.0 <= p.t <= 47.5)
    assert all(field(p.emu(), "app", "preemptedResourceMB") == 0 for p in polls)
    put = next(ex for ex in exchanges if ex.method == "PUT")
    assert (put.emulated.status, put.emulated.body) == (202, '{"state":"KILLING"}')
    after = next(p for p in polls if p.t > put.t).emu()
    assert (field(after, "app", "state"), field(after, "app", "finalStatus")) == ("KILLED", "KILLED")
    assert field(after, "app", "diagnostics") == f"Application {app} was killed by user root"

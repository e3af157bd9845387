"""Algorithm 1 as a placement policy: only the chosen classes' nodes, only the past (OSDI'16 §4.1)."""

from __future__ import annotations

import numpy as np
import pytest
from harvest_rig import CORES, DAY, START, context, flat, job, make, noisy  # type: ignore[import-not-found]

from harvester.decisions.class_selection import ClassState, characterize, select_classes
from harvester.domain import Resources
from harvester.models.job_history import JobHistoryModel, JobRun, LengthThresholds
from harvester.models.patterns import Pattern
from harvester.models.tenant_series import TenantSeries
from harvester.models.utilization_classes import fit
from harvester.sim.policies import PolicyError

HISTORY = 2 * DAY  # two days of 2-minute samples before t=0


def running_by_app(rig) -> dict[str, set[int]]:  # type: ignore[no-untyped-def]
    out: dict[str, set[int]] = {}
    for c in rig.model.running_containers():
        out.setdefault(c.app_id, set()).add(c.node)
    return out


def test_containers_land_only_on_nodes_of_the_selected_classes() -> None:
    samples = HISTORY + 60
    util = np.stack([flat(0.10, samples), noisy(0.45, samples, seed=1)])
    rig = make(util, HISTORY, policy_params={"no_class_wait_s": None})
    # after the guard's second tick (126 s): the first sample of a node raises nothing
    rig.submit(job("wide", 140.0, tasks=40, duration_s=3000.0))  # fits only the flat tenant's class
    for i in range(6):
        rig.submit(job(f"j{i}", 160.0 + 15 * i, tasks=2 + 2 * i, duration_s=3000.0))
    rig.run(520.0)
    model = rig.board.view().model
    assert {c.pattern for c in model.classes} == {Pattern.CONSTANT, Pattern.UNPREDICTABLE}
    tenant_class = model.tenant_class_map()
    names = [t.name for t in context(4).tenants]
    latest = {job_id: sel for _, job_id, sel in rig.policy.selections}
    apps = {f"application_1_{i + 1:04d}": jid for i, jid in enumerate(["wide", *(f"j{i}" for i in range(6))])}
    used_classes = set()
    placed = running_by_app(rig)
    assert set(placed) == set(apps), "every job got containers"
    for app, nodes in placed.items():
        chosen = {c.class_id for c in latest[apps[app]].choices}
        on = {tenant_class[names[int(rig.tenant_of[n])]] for n in nodes}
        assert on <= chosen, f"{apps[app]} runs on {on}, Algorithm 1 chose {chosen}"
        used_classes |= on
    assert used_classes == set(tenant_class.values()), "both classes were chosen by some job"
    wide = latest["wide"]
    assert [c.class_id for c in wide.choices] == [tenant_class[names[0]]] and "(line 10)" in wide.reason
    assert placed[next(a for a, j in apps.items() if j == "wide")] <= rig.nodes_of(0)


def test_a_future_spike_is_invisible_to_the_policy_but_an_oracle_would_avoid_the_class() -> None:
    future = 60
    calm = flat(0.10, HISTORY + future)
    calm[HISTORY + 5:] = 1.0  # from the 6th sample after t=0 on, the flat tenant takes the whole server
    util = np.stack([calm, noisy(0.30, HISTORY + future, seed=2, spike_every=40)])
    rig = make(util, HISTORY)
    # the job ran before and took 5,000 s: long (cold-start thresholds 300 s / 3,600 s); the
    # history store holds it, as a live store would when the sidecar starts
    rig.store.append_job_runs([JobRun("etl", "etl-1", START - 9000, START - 4000)])
    rig.submit(job("etl-2", 150.0, tasks=40, duration_s=3600.0, name="etl"))  # after the guard's 2nd tick (126 s)
    rig.run(1500.0)

    _, _, sel = next(s for s in rig.policy.selections if s[1] == "etl-2")
    flat_class = rig.board.view().model.tenant_class_map()["env0/mf0"]
    assert sel.job_type.value == "long"
    assert [c.class_id for c in sel.choices] == [flat_class], "from history the flat tenant is the safest class"
    assert sel.choices[0].peak == pytest.approx(0.10, abs=1e-6), "its peak comes from the past only"

    # an oracle that knew the whole series (past AND future) would not have picked it
    oracle = fit(TenantSeries(("env0/mf0", "env1/mf1"), util, 120.0, 0.0), version=1, fitted_at=0.0)
    members = {c.class_id: [int(t[3]) for t in oracle.members(c.class_id)] for c in oracle.classes}  # "envN/mfN" -> N
    states = [ClassState(c.class_id, c.pattern, c.average, c.peak, current=float(util[members[c.class_id], HISTORY].mean()),
                         capacity=Resources(4 * 65536 * len(members[c.class_id]), 4 * CORES * len(members[c.class_id])),
                         reserve_fraction=0.05) for c in oracle.classes]
    demand = characterize("etl", history=JobHistoryModel(None), fallback_thresholds=LengthThresholds(300, 3600, "t"),
                          container=Resources(1024, 1), last_run_s=5000.0, max_concurrent=40)
    seen = select_classes(demand, states, np.random.default_rng(0))
    assert all(0 not in members[c.class_id] for c in seen.choices), "the oracle keeps the job off the flat tenant"

    # ... and ours pays for it: the spike kills its tasks on the flat tenant's servers
    assert rig.stats.kills_total > 0
    assert rig.model.allocated(0).vcores == 0, "after the spike the flat tenant's servers hold no batch container"


def test_the_live_refit_fits_the_past_then_the_slots_the_polls_folded_in() -> None:
    samples = HISTORY + 60
    util = np.stack([flat(0.2, samples), noisy(0.4, samples, seed=3)])
    util[0, HISTORY + 20:] = 0.9  # tenant 0 rises 40 min after t=0
    rig = make(util, HISTORY, policy_params={"harvesting": {"refit_interval_s": 3600}}, period_s=10.0)
    rig.run(10.0)
    first = rig.board.view().model
    a = first.assignment("env0/mf0")
    assert first.version == 1 and first.fitted_at == START + 6.0
    assert a is not None and a.average == pytest.approx(0.2) and a.samples == HISTORY, "the past only (t < 0)"
    rig.run(3600.0)
    assert rig.board.view().model is first, "one refit per refit_interval_s"
    rig.run(3610.0)
    second = rig.board.view().model
    assert second.version == 2 and second.fitted_at == START + 3606.0
    b = second.assignment("env0/mf0")
    # the 30 slots after t=0 came from the telemetry loop's polls (10 s apart, 12 per slot), the
    # last 10 of them at 0.9
    assert b is not None and b.samples == HISTORY + 30
    assert b.average == pytest.approx((0.2 * (HISTORY + 20) + 0.9 * 10) / (HISTORY + 30), abs=1e-6)
    assert [m[1] for m in rig.policy.report()["class_models"]] in ([], [1], [1, 2])


def test_the_policy_needs_the_loops_and_the_loops_share_its_settings() -> None:
    from harvester.sim.harvest import algorithm1, guard_only
    from harvester.sim.live import harvesting_settings, loops
    from harvester.clock import SimClock
    from harvester.history.sqlite import SqliteHistoryStore
    from harvester.sim.controller import ControllerContext
    from harvester.sim.metrics.collector import SimStats
    from harvester.sim.ports import SimJobRuns
    from harvester.telemetry.memory import InMemoryTelemetrySource
    from harvester.actuators.recording import RecordingActuator

    ctx = context(2)
    pol = algorithm1({"harvesting": {"refit_interval_s": 7200}}, ctx)
    with pytest.raises(PolicyError, match="needs Harvester's loops"):
        pol.place(None, None)  # type: ignore[arg-type]

    def cctx(policy):  # type: ignore[no-untyped-def]
        return ControllerContext(ctx, SimClock(START), InMemoryTelemetrySource(), RecordingActuator(),
                                 SqliteHistoryStore(":memory:"), SimJobRuns(SimStats(), START), np.zeros((2, 0)), 10.0, policy)

    with pytest.raises(ValueError, match="give harvesting settings to the policy"):
        loops({"harvesting": {}}, cctx(pol))
    plane = loops({}, cctx(pol))
    assert plane.settings.harvesting.refit_interval_s == 7200 and plane.settings.harvesting.control_period_s == 10.0
    nodes = plane.settings.harvesting.tenants
    assert [(r.tenant, r.nodes) for r in nodes] == [("env0/mf0", ["h00:8041", "h01:8041"]), ("env1/mf1", ["h02:8041", "h03:8041"])]
    assert loops({"harvesting": {"reserve": {"floor": 0.1}}}, cctx(guard_only({}, ctx))).settings.harvesting.reserve.floor == 0.1
    with pytest.raises(ValueError, match="harvesting: weights.long.constant"):
        algorithm1({"harvesting": {"weights": {"long": {"constant": -1, "periodic": 1, "unpredictable": 1}}}}, ctx)
    with pytest.raises(ValueError, match="node_resources, tenants: set by the simulator"):
        harvesting_settings({"tenants": [], "node_resources": {}}, 120.0)
    with pytest.raises(ValueError, match="unknown params"):
        algorithm1({"bogus": 1}, ctx)

"""Algorithm 1 as a placement policy: only the chosen classes' nodes, only the past (OSDI'16 §4.1)."""

from __future__ import annotations

import numpy as np
import pytest
from harvest_rig import CORES, DAY, START, context, flat, job, make, noisy  # type: ignore[import-not-found]

from harvester.decisions.class_selection import ClassState, characterize, select_classes
from harvester.domain import Resources
from harvester.models.job_history import JobHistoryModel, LengthThresholds
from harvester.models.patterns import Pattern
from harvester.models.tenant_series import TenantSeries
from harvester.models.utilization_classes import fit
from harvester.sim.harvest.models import HarvestModels, harvesting_settings
from harvester.sim.policies import JobOutcome, PolicyError

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
    rig.submit(job("wide", 20.0, tasks=40, duration_s=3000.0))  # fits only the flat tenant's class
    for i in range(6):
        rig.submit(job(f"j{i}", 40.0 + 15 * i, tasks=2 + 2 * i, duration_s=3000.0))
    rig.run(400.0)
    model = rig.policy.harvest.fitted.model
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
    # the job ran before and took 5,000 s: long (cold-start thresholds 300 s / 3,600 s)
    rig.policy.harvest.record_run(JobOutcome("etl-1", "etl", START - 9000, START - 4000, 40, 0))
    rig.submit(job("etl-2", 30.0, tasks=40, duration_s=3600.0, name="etl"))
    rig.run(1500.0)

    _, _, sel = next(s for s in rig.policy.selections if s[1] == "etl-2")
    fitted = rig.policy.harvest.fitted
    flat_class = fitted.model.tenant_class_map()["env0/mf0"]
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


def test_refits_once_per_interval_and_only_on_what_it_is_given() -> None:
    ctx = context(2)
    h = HarvestModels(ctx, harvesting_settings({}, 120.0))
    past = np.stack([flat(0.2, DAY), noisy(0.4, DAY, seed=3)]).astype(np.float32)
    assert h.refit_if_due(START, past)
    assert not h.refit_if_due(START + 3600, past)
    a = h.fitted.model.assignment("env0/mf0")
    assert a is not None and a.average == pytest.approx(0.2) and a.samples == DAY
    more = np.concatenate([past, np.full((2, 30), 0.9, dtype=np.float32)], axis=1)
    assert h.refit_if_due(START + 86400, more)
    assert h.fitted.model.version == 2 and h.fitted.model.assignment("env0/mf0").peak == pytest.approx(0.9)
    assert [v for _, v, _ in h.refits] == [1, 2]


def test_the_policy_needs_the_guard_and_the_guard_shares_its_settings() -> None:
    from harvester.sim.harvest import algorithm1, guard
    from harvester.sim.controller import ControllerContext
    from harvester.clock import SimClock

    ctx = context(2)
    pol = algorithm1({}, ctx)
    with pytest.raises(PolicyError, match="needs the guard controller"):
        pol.place(None, None)  # type: ignore[arg-type]
    cctx = ControllerContext(ctx, SimClock(START), {}, tenant_history=lambda: np.zeros((2, 0)), policy=pol)
    with pytest.raises(ValueError, match="give harvesting settings to the policy"):
        guard({"harvesting": {}}, cctx)
    assert guard({}, cctx).harvest is pol.harvest
    with pytest.raises(ValueError, match="harvesting: weights.long.constant"):
        algorithm1({"harvesting": {"weights": {"long": {"constant": -1, "periodic": 1, "unpredictable": 1}}}}, ctx)
    with pytest.raises(ValueError, match="unknown params"):
        algorithm1({"bogus": 1}, ctx)

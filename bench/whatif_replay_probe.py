"""Probe whatif's guard-only replay of an emulated week's store under one changed assumption at a
time (the experiments behind docs/whatif.md "validated against what happened"; nothing is kept).

    nice .venv/bin/python bench/whatif_validation.py --keep /tmp/v          # the week (and its figures)
    nice .venv/bin/python bench/whatif_replay_probe.py /tmp/v/week/config.yaml [--with-service] [--cpu-only] [--spread]

--with-service  add the emulated demo's never-finishing service (6 workers + AM, 2 vCores each) as
                one job holding 7 containers for the whole replay (whatif cannot know it);
--cpu-only      the simulated sidecar harvests CPU only (as the live one with host_memory_mb: null);
--spread        place one container per node per scheduling pass instead of filling a node first.
Prints the replay's harvested core-hours, kills, mean capacity and allocation (vCores).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import harvester.sim.live as live  # noqa: E402
import harvester.sim.policies as policies  # noqa: E402
from harvester.app import harvesting_settings  # noqa: E402
from harvester.config import load_settings  # noqa: E402
from harvester.sim.metrics.collector import UTIL_COLUMNS  # noqa: E402
from harvester.sim.scenario import parse_scenario  # noqa: E402
from harvester.sim.simulation import Simulation  # noqa: E402
from harvester.sim.workload import JobSpec, StageSpec  # noqa: E402
from harvester.whatif.api import harvesting_params, open_store_at  # noqa: E402
from harvester.whatif.inputs import build_inputs, scenario_data  # noqa: E402
from harvester.whatif.recorded import read_recorded  # noqa: E402
from harvester.whatif.runs import RunSpec, scenario_for  # noqa: E402


def main() -> int:
    args = sys.argv[1:]
    cfg = Path(args[0])
    if "--cpu-only" in args:
        orig = live.cluster_settings

        def cpu_only(h, sim):  # type: ignore[no-untyped-def]
            out = orig(h, sim)
            nr = out.node_resources
            return out.model_copy(update={"node_resources": nr.model_copy(update={
                "host_memory_mb": None, "overrides": [o.model_copy(update={"host_memory_mb": None}) for o in nr.overrides]})})
        live.cluster_settings = cpu_only
    if "--spread" in args:
        fill = policies.fill_in_order
        policies.fill_in_order = lambda seg, slots, count: fill(seg, np.minimum(slots, 1), count)
    s = load_settings(cfg)
    h = harvesting_settings(s)
    st = open_store_at(s.store.path)
    try:
        rec = read_recorded(st, h, days=7.0)
    finally:
        st.close()
    given, cov = build_inputs(rec)
    if "--with-service" in args:
        horizon = rec.end - rec.replay_start + 2 * 86400.0
        given.jobs.insert(0, JobSpec("application_service", 0.0, (StageSpec("service", np.full(7, horizon), 2, 2048),),
                                     "demo-ds-service", None, "recorded", {}))
    base = scenario_data(given, rec, cov.drain_s, harvesting_params(h, s.telemetry.poll_interval_s), period_s=rec.step_s)
    sc = parse_scenario(scenario_for(base, RunSpec("yarn-pt")), where="probe")
    res = Simulation(sc, given=given).run()
    u = np.asarray(res.stats.utilization).reshape(-1, len(UTIL_COLUMNS))
    c = {k: i for i, k in enumerate(UTIL_COLUMNS)}
    inside = u[:, 0] < sc.duration_s
    print(f"options {[a for a in args[1:]]}: harvested {res.stats.useful_cpu_s / 3600:,.1f} core-h, "
          f"kills {res.stats.kills}, capacity {u[inside, c['capacity_vcores']].mean():.1f} vCores, "
          f"allocated {u[inside, c['allocated_vcores']].mean():.1f} vCores, unfinished {len(res.unfinished)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

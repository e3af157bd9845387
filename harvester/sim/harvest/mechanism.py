"""Algorithm 1 where its premise holds (issue 27): yarn-h vs yarn-pt on the mechanism scenario.

deploy/scenarios/mechanism-alg1.yaml puts calm, periodic and bursty primary tenants on equal
capacity and runs recurring long jobs with room to choose (OSDI'16 §4.1's premise). The runs
are the evaluation's own cells (`evaluate.Plan`: the same policy overrides, the live loops,
`decisions.class_selection`), so only the scenario differs from docs/evaluation/harvesting.md.

`compare` runs yarn-pt and yarn-h over seeds and returns yarn-h / yarn-pt ratios of the totals
over the seeds (average job time, task kills, unmet primary core-hours). `DIAL` holds the points
of the report's premise dial (x = `premise.contrast`: how much calmer the calmest third of the
capacity is, sim/harvest/premise.py), moved by the tenant mix (how much capacity is calm) and by
the within-sample variation of the primary (`tenants.noise.sigma`: 0.02 here, 0.10 in the
real-trace evaluation), which makes every tenant restless alike at the scale of a long job.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from harvester.sim.harvest.evaluate import cell_metrics, load_plan, run_plan
from harvester.sim.sweep import run_cell

SCENARIO = Path(__file__).resolve().parents[3] / "deploy" / "scenarios" / "mechanism-alg1.yaml"
LEVEL = 0.3
POLICIES = ("yarn-pt", "yarn-h")

# (label, overrides): from the mechanism scenario toward the real-trace evaluation
DIAL: tuple[tuple[str, Mapping[str, Any]], ...] = (
    ("calm 4/6 of servers", {"tenants.mix": {"constant": 0.6667, "periodic": 0.1667, "unpredictable": 0.1666}}),
    ("mechanism (calm 2/6)", {}),
    ("calm 1/6", {"tenants.mix": {"constant": 0.1667, "periodic": 0.3333, "unpredictable": 0.5}}),
    ("calm 0/6", {"tenants.mix": {"constant": 0.0, "periodic": 0.5, "unpredictable": 0.5}}),
    ("noise sigma 0.05", {"tenants.noise.sigma": 0.05}),
    ("noise sigma 0.10 (real-trace eval)", {"tenants.noise.sigma": 0.10}),
    ("noise sigma 0.20", {"tenants.noise.sigma": 0.20}),
    ("noise sigma 0.30", {"tenants.noise.sigma": 0.30}),
)


@dataclass(frozen=True)
class Comparison:
    """yarn-h against yarn-pt over the same seeds (ratios of the totals over seeds)."""

    job_time_ratio: float
    kills_ratio: float
    unmet_primary_ratio: float
    per_policy: Mapping[str, Mapping[str, float]]   # policy -> summed metric over seeds
    per_seed: Sequence[Mapping[str, Any]]           # every run's label and metrics


def compare(*, scenario: Path = SCENARIO, level: float = LEVEL, seeds: Sequence[int] = (1, 2),
            overrides: Mapping[str, Any] | None = None, executor: Executor | None = None,
            traces_dir: str | None = None, runs_dir: Path | None = None) -> Comparison:
    """Run yarn-pt and yarn-h (in this process when `executor` is None) and compare them."""
    plan = load_plan(scenario, levels=[level], policies=POLICIES, seeds=seeds, traces_dir=traces_dir,
                     overrides=overrides)
    if executor is None and runs_dir is None:
        rows = [run_cell(c) for c in plan.cells()]
        for r, c in zip(rows, plan.cells()):
            r.update(c.labels)
    else:
        rows = run_plan(plan, executor, runs_dir=runs_dir)
    keys = ("job_time_mean_s", "task_kills", "primary_not_served_core_hours")
    total = {p: {k: 0.0 for k in keys} for p in POLICIES}
    per_seed = []
    for r in rows:
        m = cell_metrics(r)
        for k in keys:
            total[r["policy"]][k] += m[k]
        per_seed.append({"policy": r["policy"], "seed": r["seed"], **{k: m[k] for k in keys}})
    h, pt = total["yarn-h"], total["yarn-pt"]

    def ratio(k: str) -> float:
        return h[k] / pt[k] if pt[k] > 0 else (1.0 if h[k] == 0 else float("inf"))

    return Comparison(ratio("job_time_mean_s"), ratio("task_kills"), ratio("primary_not_served_core_hours"), total, per_seed)

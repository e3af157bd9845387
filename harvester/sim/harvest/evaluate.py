"""`harvester evaluate harvesting`: YARN-H against stock and primary-aware YARN (docs/evaluation/harvesting.md).

One scenario file (default deploy/scenarios/harvesting-eval.yaml) describes the cluster, the
real-trace tenants with their history, the workload, and the history-based configuration
(policy `harvester.sim.harvest:algorithm1` + controller `harvester.sim.live:loops`: Harvester's
live loops, the guard among them, ticked on simulated time). The
evaluation runs it for every primary utilization LEVEL (each pattern rescaled to that mean,
`tenants.mean_utilization`), every POLICY and every SEED, in parallel (the sweep's process pool):

| policy | placement | capacity and kills |
|---|---|---|
| stock-yarn | heartbeat order | the whole server; the primary reclaims cores by kills |
| primary-aware | heartbeat order | total − current primary − 10 % every sample; kills only when the primary overflows |
| guard-only (ablation) | heartbeat order | the live loops' guard (reserves from margins, replenished by kills) |
| history-based | Algorithm 1 (real code) | the live loops' guard |

The workload does not change with the level (`workload.target_basis: cluster`): the same jobs
meet less harvestable capacity as the primary grows, as in the paper's utilization sweeps.

Job execution time is submission to finish. A job still unfinished when the run ends counts
with the time it had waited so far (a lower bound), so a policy cannot look faster by starving
jobs; the tables say how many there were.
"""

from __future__ import annotations

import copy
import math
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from harvester.sim.scenario import ScenarioError, parse_scenario, read_yaml
from harvester.sim.sweep import Cell, run_sweep

DEFAULT_SCENARIO = Path(__file__).resolve().parents[3] / "deploy" / "scenarios" / "harvesting-eval.yaml"
DEFAULT_LEVELS = (0.2, 0.35, 0.5, 0.8)
DEFAULT_SEEDS = (1, 2, 3)
POLICIES = ("stock-yarn", "primary-aware", "guard-only", "history-based")
HISTORY_POLICY = "harvester.sim.harvest:algorithm1"
GUARD_ONLY_POLICY = "harvester.sim.harvest:guard_only"
PAPER = "OSDI'16 §1: YARN-H improves the average batch job execution time by up to 90 % (vs stock YARN)"


@dataclass(frozen=True)
class Plan:
    """What to run: the scenario data, the levels, policies and seeds."""

    scenario: Mapping[str, Any]
    where: str
    levels: tuple[float, ...]
    policies: tuple[str, ...]
    seeds: tuple[int, ...]
    traces_dir: str | None

    def cells(self) -> list[Cell]:
        cells = []
        for level in self.levels:
            for policy in self.policies:
                for seed in self.seeds:
                    over = policy_overrides(self.scenario, policy)
                    over["tenants.mean_utilization"] = {p: level for p in ("periodic", "constant", "unpredictable")}
                    over["seed"] = seed
                    over["outputs"] = {"plots": False, "csv": False}
                    cells.append(Cell(len(cells), self.scenario, self.where, over, self.traces_dir,
                                      str(Path(self.where).resolve().parent),
                                      {"level": level, "policy": policy, "seed": seed}))
        return cells


def policy_overrides(scenario: Mapping[str, Any], policy: str) -> dict[str, Any]:
    """Scenario overrides that turn the history-based scenario into `policy`'s run."""
    controller = scenario.get("controller")
    if policy == "history-based":
        return {}
    if policy == "guard-only":
        return {"policy": {"name": GUARD_ONLY_POLICY, "params": {}}, "controller": _guard_alone(scenario, controller)}
    if policy == "stock-yarn":
        return {"policy": {"name": "stock-yarn", "params": {}}, "controller": None}
    if policy == "primary-aware":
        return {"policy": {"name": "primary-aware", "params": {"reserve_fraction": 0.10}}, "controller": None}
    raise ScenarioError(f"unknown policy {policy!r} (use {', '.join(POLICIES)})")


def _guard_alone(scenario: Mapping[str, Any], controller: Any) -> dict[str, Any]:
    """The scenario's loops, given the history-based policy's `harvesting` settings themselves."""
    if not isinstance(controller, dict):
        raise ScenarioError("controller: the evaluation scenario must configure Harvester's loops (harvester.sim.live:loops)")
    out = copy.deepcopy(controller)
    params = dict(out.get("params") or {})
    pol = scenario.get("policy") or {}
    settings = (pol.get("params") or {}).get("harvesting") if isinstance(pol, dict) else None
    if settings is not None:
        params["harvesting"] = settings
    out["params"] = params
    return out


def load_plan(path: str | Path, *, levels: Sequence[float], policies: Sequence[str], seeds: Sequence[int],
              traces_dir: str | None, overrides: Mapping[str, Any] | None = None) -> Plan:
    """Read the scenario, check it is the history-based configuration, validate every cell."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: the top level must be a mapping")
    parse_scenario(copy.deepcopy(data), where=str(path), overrides=dict(overrides or {}))
    for key, value in (overrides or {}).items():
        from harvester.sim.scenario import set_path

        set_path(data, key, value)
    if (data.get("policy") or {}).get("name") != HISTORY_POLICY:
        raise ScenarioError(f"{path}: policy.name must be {HISTORY_POLICY} (the history-based configuration)")
    if not levels or any(not 0 < x <= 1 for x in levels):
        raise ScenarioError("--levels: utilization levels must be in (0, 1]")
    bad = [p for p in policies if p not in POLICIES]
    if bad or not policies:
        raise ScenarioError(f"--policy: unknown {bad} (use {', '.join(POLICIES)})")
    plan = Plan(data, str(path), tuple(levels), tuple(policies), tuple(seeds), traces_dir)
    for c in plan.cells():
        parse_scenario(copy.deepcopy(dict(c.scenario)), where=c.where, overrides=c.overrides)
    return plan


def run_plan(plan: Plan, executor: Executor, *, quiet: bool = True) -> list[dict[str, Any]]:
    """Every cell's summary row (with its labels), in cell order."""
    rows = run_sweep(plan.cells(), executor, quiet=quiet, label="evaluate harvesting")
    cells = plan.cells()
    for r in rows:
        r.update(cells[r["cell"]].labels)
    return rows


# --- aggregation ----------------------------------------------------------------------------

METRICS = ("job_time_mean_s", "job_time_p95_s", "task_kills", "wasted_cpu_hours", "primary_not_served_core_hours",
           "jobs_unfinished", "primary_utilization", "batch_utilization")


def job_times(row: Mapping[str, Any]) -> np.ndarray:
    """Execution times of every submitted job: finished ones, then the unfinished lower bounds."""
    done = [x for x in row["job_exec_s"] if x is not None]
    return np.asarray(done + list(row.get("job_unfinished_s", [])), dtype=np.float64)


def cell_metrics(row: Mapping[str, Any]) -> dict[str, float]:
    t = job_times(row)
    return {
        "job_time_mean_s": float(t.mean()) if t.size else math.nan,
        "job_time_p95_s": float(np.percentile(t, 95)) if t.size else math.nan,
        **{k: float(row[k]) for k in METRICS[2:]},
    }


@dataclass(frozen=True)
class Point:
    """One (level, policy): mean and sample standard deviation over seeds of every metric."""

    level: float
    policy: str
    seeds: int
    mean: Mapping[str, float]
    sd: Mapping[str, float]


def aggregate(rows: Sequence[Mapping[str, Any]]) -> list[Point]:
    groups: dict[tuple[float, str], list[dict[str, float]]] = {}
    for r in rows:
        groups.setdefault((float(r["level"]), str(r["policy"])), []).append(cell_metrics(r))
    points = []
    for (level, policy), ms in groups.items():
        mean = {k: float(np.mean([m[k] for m in ms])) for k in METRICS}
        sd = {k: float(np.std([m[k] for m in ms], ddof=1)) if len(ms) > 1 else 0.0 for k in METRICS}
        points.append(Point(level, policy, len(ms), mean, sd))
    order = {p: i for i, p in enumerate(POLICIES)}
    return sorted(points, key=lambda p: (p.level, order.get(p.policy, 99)))


def versus_stock(points: Sequence[Point]) -> dict[tuple[float, str], float]:
    """Relative change of the mean job time against stock YARN at the same level (−0.9 = 90 % lower)."""
    stock = {p.level: p.mean["job_time_mean_s"] for p in points if p.policy == "stock-yarn"}
    return {(p.level, p.policy): p.mean["job_time_mean_s"] / stock[p.level] - 1.0
            for p in points if p.level in stock and stock[p.level] > 0}

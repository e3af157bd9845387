"""`harvester evaluate harvesting`: YARN-H measured fairly (docs/evaluation/harvesting.md, issue 16).

One scenario file (default deploy/scenarios/harvesting-eval.yaml) describes the cluster, the
real-trace tenants with their history, the workload, and the YARN-H configuration (policy
`harvester.sim.harvest:algorithm1` + controller `harvester.sim.live:loops`: Harvester's live
loops, the guard among them, ticked on simulated time). The evaluation runs it for every
primary utilization LEVEL (each pattern brought to that mean, `tenants.mean_utilization`; a
run that misses it by more than 5 points fails), every POLICY and every SEED, in parallel (the
sweep's process pool, or Dask):

| policy | placement | capacity and kills |
|---|---|---|
| stock-yarn | heartbeat order | the whole server; nothing reclaims cores: an oversubscribed server is shared (batch slows, the primary is short) |
| fixed-reserve | heartbeat order | the live guard with a fixed 10 % reserve (`reserve.method: fixed`) |
| yarn-pt | heartbeat order | the live guard, reaction-time reserve (`reserve.method: reaction`) |
| yarn-h | Algorithm 1 (real code) | exactly yarn-pt's guard, reserve and kill rule: only placement differs |
| yarn-h-wait (optional) | Algorithm 1 + wait up to 600 s when no class fits | as yarn-h (size-based reordering, not in Algorithm 1) |

The guarded policies share the kill rule (`guard.kill_when`), the capacity pushes and the
ApplicationMaster floor. A server whose primary and batch want more cores than it has shares
them (sim/sharing.py) in every policy; kills come only from the RM's rules and the guard.

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
POLICIES = ("stock-yarn", "fixed-reserve", "yarn-pt", "yarn-h", "yarn-h-wait")
DEFAULT_POLICIES = POLICIES[:4]
FIXED_RESERVE = 0.10
NO_CLASS_WAIT_S = 600.0
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
    """Scenario overrides that turn the YARN-H scenario into `policy`'s run (module docstring)."""
    controller = scenario.get("controller")
    pol = scenario.get("policy") or {}
    params = dict(pol.get("params") or {}) if isinstance(pol, dict) else {}
    if policy == "yarn-h":
        return {}
    if policy == "yarn-h-wait":
        return {"policy": {**pol, "params": {**params, "no_class_wait_s": NO_CLASS_WAIT_S}}}
    if policy == "yarn-pt":
        return {"policy": {"name": GUARD_ONLY_POLICY, "params": {}}, "controller": _guard_alone(scenario, controller)}
    if policy == "fixed-reserve":
        fixed = {"reserve": {"method": "fixed", "fixed_fraction": FIXED_RESERVE}}
        return {"policy": {"name": GUARD_ONLY_POLICY, "params": {}},
                "controller": _guard_alone(scenario, controller, fixed)}
    if policy == "stock-yarn":
        return {"policy": {"name": "stock-yarn", "params": {}}, "controller": None}
    raise ScenarioError(f"unknown policy {policy!r} (use {', '.join(POLICIES)})")


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `over` laid on it, mappings merged key by key (settings overrides)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else v
    return out


def _guard_alone(scenario: Mapping[str, Any], controller: Any, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The scenario's loops, given the YARN-H policy's `harvesting` settings themselves (+ `extra`)."""
    if not isinstance(controller, dict):
        raise ScenarioError("controller: the evaluation scenario must configure Harvester's loops (harvester.sim.live:loops)")
    out = copy.deepcopy(controller)
    params = dict(out.get("params") or {})
    pol = scenario.get("policy") or {}
    settings = (pol.get("params") or {}).get("harvesting") if isinstance(pol, dict) else None
    if settings is not None or extra:
        params["harvesting"] = deep_merge(settings or {}, extra or {})
    out["params"] = params
    return out


def load_plan(path: str | Path, *, levels: Sequence[float], policies: Sequence[str], seeds: Sequence[int],
              traces_dir: str | None, overrides: Mapping[str, Any] | None = None) -> Plan:
    """Read the scenario, check it is the YARN-H configuration, validate every cell."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: the top level must be a mapping")
    parse_scenario(copy.deepcopy(data), where=str(path), overrides=dict(overrides or {}))
    for key, value in (overrides or {}).items():
        from harvester.sim.scenario import set_path

        set_path(data, key, value)
    if (data.get("policy") or {}).get("name") != HISTORY_POLICY:
        raise ScenarioError(f"{path}: policy.name must be {HISTORY_POLICY} (the YARN-H configuration)")
    if not levels or any(not 0 < x <= 1 for x in levels):
        raise ScenarioError("--levels: utilization levels must be in (0, 1]")
    bad = [p for p in policies if p not in POLICIES]
    if bad or not policies:
        raise ScenarioError(f"--policy: unknown {bad} (use {', '.join(POLICIES)})")
    plan = Plan(data, str(path), tuple(levels), tuple(policies), tuple(seeds), traces_dir)
    for c in plan.cells():
        parse_scenario(copy.deepcopy(dict(c.scenario)), where=c.where, overrides=c.overrides)
    return plan


def run_plan(plan: Plan, executor: Executor | None, *, quiet: bool = True, runs_dir: Path | None = None) -> list[dict[str, Any]]:
    """Every cell's summary row (with its labels), in cell order; `runs_dir` saves and reuses
    finished runs (sweep.run_sweep); without an executor, only the saved ones."""
    rows = run_sweep(plan.cells(), executor, quiet=quiet, label="evaluate harvesting", runs_dir=runs_dir)
    cells = plan.cells()
    for r in rows:
        r.update(cells[r["cell"]].labels)
    return rows


def missing_cells(plan: Plan, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The plan's cells that have no row, as `level policy seed` (a report from saved runs says so)."""
    done = {r["cell"] for r in rows}
    return [f"{c.labels['level']:.0%} {c.labels['policy']} seed {c.labels['seed']}" for c in plan.cells() if c.index not in done]


# --- aggregation ----------------------------------------------------------------------------

METRICS = ("job_time_mean_s", "job_time_p95_s", "task_kills", "wasted_cpu_hours", "primary_not_served_core_hours",
           "jobs_unfinished", "primary_utilization", "batch_utilization", "harvested_cpu_hours",
           "batch_slowed_core_hours", "reserve_coverage", "am_kills", "level_target", "level_achieved")


def job_times(row: Mapping[str, Any]) -> np.ndarray:
    """Execution times of every submitted job: finished ones, then the unfinished lower bounds."""
    done = [x for x in row["job_exec_s"] if x is not None]
    return np.asarray(done + list(row.get("job_unfinished_s", [])), dtype=np.float64)


def cell_metrics(row: Mapping[str, Any]) -> dict[str, float]:
    t = job_times(row)
    return {
        "job_time_mean_s": float(t.mean()) if t.size else math.nan,
        "job_time_p95_s": float(np.percentile(t, 95)) if t.size else math.nan,
        **{k: math.nan if row.get(k) is None else float(row[k]) for k in METRICS[2:-2]},
        **level_of(row),
    }


def level_of(row: Mapping[str, Any]) -> dict[str, float]:
    """The primary level a run asked for and reached (mean over its patterns of the demand's mean)."""
    levels = row.get("levels") or {}
    if not levels:
        return {"level_target": math.nan, "level_achieved": math.nan}
    return {"level_target": float(np.mean([v["target"] for v in levels.values()])),
            "level_achieved": float(np.mean([v["achieved"] for v in levels.values()]))}


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
        mean = {k: float(np.mean([m[k] for m in ms])) for k in METRICS}  # NaN where a policy has none (coverage)
        sd = {k: float(np.std([m[k] for m in ms], ddof=1)) if len(ms) > 1 else 0.0 for k in METRICS}
        points.append(Point(level, policy, len(ms), mean, sd))
    order = {p: i for i, p in enumerate(POLICIES)}
    return sorted(points, key=lambda p: (p.level, order.get(p.policy, 99)))


def versus(points: Sequence[Point], baseline: str, key: str = "job_time_mean_s") -> dict[tuple[float, str], float]:
    """Relative change of `key` against `baseline` at the same level (−0.9 = 90 % lower)."""
    base = {p.level: p.mean[key] for p in points if p.policy == baseline}
    return {(p.level, p.policy): p.mean[key] / base[p.level] - 1.0
            for p in points if p.level in base and base[p.level] > 0}


def versus_stock(points: Sequence[Point]) -> dict[tuple[float, str], float]:
    """Relative change of the mean job time against stock YARN at the same level."""
    return versus(points, "stock-yarn")

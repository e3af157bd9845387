"""The YARN runs of a what-if: the evaluation's own policy configurations on the recorded inputs.

Each run is `Simulation(scenario, given=...)` (sim/given.py) with the scenario that
sim/harvest/evaluate.policy_overrides turns into stock YARN, yarn-pt (the guard with the
reaction-time reserve, stock placement), yarn-h (Algorithm 1 + the same guard, OSDI'16 §4.1) or
a fixed reserve — exactly the evaluation's cells (docs/evaluation/harvesting.md); nothing is
re-implemented here. Runs go to a process pool; the inputs are written once to a pickle that
each worker loads at start (not sent with every task).
"""

from __future__ import annotations

import copy
import math
import pickle
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from harvester.sim.given import GivenInputs
from harvester.sim.harvest.evaluate import deep_merge, policy_overrides
from harvester.sim.scenario import parse_scenario, set_path

#: whatif's policy names → the evaluation's
YARN = {"stock": "stock-yarn", "yarn-pt": "yarn-pt", "yarn-h": "yarn-h", "fixed-reserve": "fixed-reserve"}
GUARDED_WITH_QUANTILE = ("yarn-pt", "yarn-h")


@dataclass(frozen=True)
class RunSpec:
    """One run: whatif's policy name and the reserve quantile (None: the current settings)."""

    policy: str
    quantile: float | None = None

    @property
    def label(self) -> str:
        return self.policy if self.quantile is None else f"{self.policy}@q{self.quantile:g}"


@dataclass(frozen=True)
class Deadline:
    """An SLO contract's window, as absolute times: period k's deadline is origin + k·period + deadline_s."""

    origin: float
    period_s: float
    deadline_s: float

    def due(self, submitted: float) -> float:
        k = math.floor((submitted - self.origin) / self.period_s)
        return self.origin + k * self.period_s + self.deadline_s


def scenario_for(base: Mapping[str, Any], spec: RunSpec) -> dict[str, Any]:
    """The base YARN-H scenario with the evaluation's overrides for `spec` (+ its quantile)."""
    data = copy.deepcopy(dict(base))
    for key, value in policy_overrides(data, YARN[spec.policy]).items():
        set_path(data, key, value)
    if spec.quantile is not None:
        q = {"reserve": {"quantile": spec.quantile}}
        if spec.policy == "yarn-h":
            pol = data["policy"]
            pol["params"] = {**pol.get("params", {}), "harvesting": deep_merge(pol["params"].get("harvesting") or {}, q)}
        else:
            ctl = data["controller"]
            ctl["params"] = {**ctl.get("params", {}), "harvesting": deep_merge((ctl.get("params") or {}).get("harvesting") or {}, q)}
    return data


_GIVEN: GivenInputs | None = None


def _load(path: str) -> None:
    global _GIVEN
    with open(path, "rb") as f:
        _GIVEN = pickle.load(f)


def metrics_of(result: Any, deadlines: Mapping[str, Deadline]) -> dict[str, Any]:
    """The report's figures of one finished run (the simulator's summary + SLOs + footprint)."""
    from harvester.sim.metrics.report import summarize

    row = summarize(result)
    sc = result.scenario
    start, end = sc.start_time, sc.duration_s + sc.drain_s
    jobs = result.stats.jobs
    times = [j.exec_s for j in jobs if j.exec_s is not None] + [end - j.submit_s for j in result.unfinished]
    t = np.asarray(times, dtype=np.float64)
    misses = judged = 0
    for j in list(jobs) + list(result.unfinished):
        d = deadlines.get(j.name)
        if d is None:
            continue
        judged += 1
        if j.finish_s is None or start + j.finish_s > d.due(start + j.submit_s):
            misses += 1
    util = np.asarray(result.stats.utilization, dtype=np.float64)
    return {
        "harvested_core_hours": row["harvested_cpu_hours"], "task_kills": row["task_kills"],
        "wasted_core_hours": row["wasted_cpu_hours"], "unmet_primary_core_hours": row["primary_not_served_core_hours"],
        "job_time_mean_s": float(t.mean()) if t.size else None,
        "job_time_p95_s": float(np.percentile(t, 95)) if t.size else None,
        "jobs_submitted": row["jobs_submitted"], "jobs_finished": row["jobs_finished"],
        "jobs_unfinished": row["jobs_unfinished"], "slo_runs": judged, "slo_misses": misses,
        "footprint_peak_vcores": float(util[:, 4].max()) if util.size else 0.0,
        "footprint_mean_vcores": float(util[:, 4].mean()) if util.size else 0.0,
        "batch_slowed_core_hours": row["batch_slowed_core_hours"],
        "primary_utilization": row["primary_utilization"], "batch_utilization": row["batch_utilization"],
        "kills_by_cause": {k[len("task_kills_"):]: v for k, v in row.items() if k.startswith("task_kills_")},
        "controller_errors": row["controller_errors"], "wall_s": row["wall_s"], "peak_rss_mb": row["peak_rss_mb"],
        "job_times_s": [round(x, 1) for x in times],
    }


def run_one(spec: RunSpec, base: Mapping[str, Any], deadlines: Mapping[str, Deadline]) -> dict[str, Any]:
    """One run in this process (the worker's `_GIVEN` inputs)."""
    from harvester.sim.simulation import Simulation

    assert _GIVEN is not None, "inputs not loaded"
    sc = parse_scenario(scenario_for(base, spec), where=f"whatif {spec.label}")
    cpu0 = time.process_time()
    sim = Simulation(sc, given=_GIVEN)
    out = {"policy": spec.policy, "quantile": spec.quantile, "label": spec.label, **metrics_of(sim.run(), deadlines)}
    out["cpu_s"] = time.process_time() - cpu0  # the run's CPU time (wall_s is loaded by whatever else runs)
    return out


def run_all(specs: Sequence[RunSpec], base: Mapping[str, Any], deadlines: Mapping[str, Deadline], inputs: Path,
            processes: int, done: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Every spec on a pool of `processes` (1: in this process), in spec order."""
    if not specs:
        return []
    if processes <= 1:
        _load(str(inputs))
        out = []
        for s in specs:
            out.append(run_one(s, base, deadlines))
            if done:
                done(out[-1])
        return out
    with ProcessPoolExecutor(max_workers=min(processes, len(specs)), initializer=_load, initargs=(str(inputs),)) as pool:
        futures = {pool.submit(run_one, s, base, deadlines): i for i, s in enumerate(specs)}
        results: list[dict[str, Any] | None] = [None] * len(specs)
        for fut in as_completed(futures):
            results[futures[fut]] = fut.result()
            if done:
                done(results[futures[fut]])  # type: ignore[arg-type]
    return [r for r in results if r is not None]

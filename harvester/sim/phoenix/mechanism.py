"""The Phoenix mechanism scenario and its premise dial (issue 27; paper 003 §III-B, Fig. 4).

Phoenix's premise: constrained tasks wait because few workers satisfy their constraints, so
that constraints make Eagle-C's short-job p99 ~1.7x worse than without (§III-B). The scenario
(deploy/scenarios/mechanism-phoenix.yaml) makes that hold on purpose: one Table II type (a hard
one, Number of Cores) is met by `worker_share` of the workers and carried by `task_share` of the
short jobs (the Table II mix of the evaluation: 60% and 5.9%). Everything else is the
evaluation's: the Yahoo sub-trace, the offered load, the short partition, the same simulator
(engine.py) and schedulers (policies.py, phoenix_policy.py); every policy of a run sees the same
workers, constraints, partition and probes.

The dial is the *constraint pressure* of the scarcest dimension: the share of short jobs asking
for it over the share of workers that satisfy it (1 = it is asked for as often as a random
worker; the evaluation's Table II mix peaks at 0.295, Maximum Disks 5.9% / 20% — `table_ii_pressure`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from harvester.models.constraints import Constraint, NodeTable
from harvester.sim.phoenix.cluster import ATTRIBUTE_MIX, synthesize_workers
from harvester.sim.phoenix.engine import Simulation
from harvester.sim.phoenix.evaluate import POLICIES
from harvester.sim.phoenix.synthesis import CONSTRAINED_FRACTION, TABLE_II, synthesize
from harvester.sim.phoenix.workload import load_trace

SCENARIO = Path(__file__).resolve().parents[3] / "deploy" / "scenarios" / "mechanism-phoenix.yaml"
#: the scarce type -> the attribute whose shares the scenario replaces (value that satisfies, value that does not)
SCARCE_ATTRIBUTE = {"Number of Cores": ("cores", "32", "16"), "CPU Clock Speed": ("clock_ghz", "3.4", "2.4"),
                    "Number of Nodes": ("cpus", "2", "1"), "Kernel Version": ("kernel", "5.10", "4.19")}
MECHANISM_POLICIES = ("Eagle-C", "Eagle (no constraints)", "Phoenix")


@dataclass(frozen=True)
class Mechanism:
    trace: str
    jobs: int
    workers: int
    load: float
    short_partition: float
    seed: int
    scarce_type: str
    worker_share: float
    task_share: float

    @property
    def pressure(self) -> float:
        return self.task_share / self.worker_share


def load_scenario(path: Path = SCENARIO) -> Mechanism:
    d = yaml.safe_load(Path(path).read_text())
    s = d["scarce"]
    if s["type"] not in SCARCE_ATTRIBUTE:
        raise ValueError(f"scarce type must be one of {sorted(SCARCE_ATTRIBUTE)}")
    if not (0 < s["worker_share"] <= 1 and 0 <= s["task_share"] <= 1):
        raise ValueError("worker_share in (0, 1], task_share in [0, 1]")
    return Mechanism(d["trace"], int(d["jobs"]), int(d["workers"]), float(d["load"]), float(d["short_partition"]),
                     int(d["seed"]), s["type"], float(s["worker_share"]), float(s["task_share"]))


def worker_share(constraint: Constraint) -> float:
    """Share of the evaluation's workers (cluster.ATTRIBUTE_MIX) that satisfy `constraint`."""
    if constraint.attribute not in ATTRIBUTE_MIX:
        return 0.0
    values, p = ATTRIBUTE_MIX[constraint.attribute]
    mask = NodeTable([f"v{i}" for i in range(len(values))], [{constraint.attribute: v} for v in values]).mask(constraint)
    return float(np.dot(mask, p) / sum(p))


def table_ii_pressure() -> float:
    """The dial's value for the evaluation's Table II mix: max over types of (share of short
    jobs carrying it / share of workers satisfying it)."""
    return max(t.share / worker_share(t.constraint) for t in TABLE_II if t.share > 0)


def run(m: Mechanism, traces_dir: Path, policies: tuple[str, ...] = MECHANISM_POLICIES, *,
        table_ii: bool = False) -> dict[str, Any]:
    """Short-job p50/p99 of every policy on the scenario, and the two headline ratios.

    `table_ii`: the same cluster and jobs with the evaluation's constraint mix instead (the
    dial's point of the real traces' synthesized constraints)."""
    attr, yes, no = SCARCE_ATTRIBUTE[m.scarce_type]
    mix = None if table_ii else {attr: ((no, yes), (1.0 - m.worker_share, m.worker_share))}
    tr = load_trace(traces_dir / m.trace, workers=m.workers, load=m.load, limit=m.jobs)
    workers = synthesize_workers(m.workers, m.seed, mix=mix)
    longs = [j.long for j in tr.jobs]
    out: dict[str, Any] = {"pressure": table_ii_pressure() if table_ii else m.pressure,
                           "worker_share": m.worker_share, "task_share": m.task_share, "table_ii": table_ii}
    for name in policies:
        factory, constrained = POLICIES[name]
        share = CONSTRAINED_FRACTION if table_ii else m.task_share
        specs = synthesize(len(tr.jobs), workers, m.seed + 1000, long=longs, constrained_fraction=share if constrained else 0.0,
                           weights=None if table_ii else {m.scarce_type: 1.0})
        start = time.perf_counter()
        result = Simulation(tr, workers, specs, factory(), seed=m.seed, rtt_s=0.001, short_partition=m.short_partition).run()
        short = np.array([j.response_s for j in result.jobs if not j.long])
        out[name] = {"p50": float(np.percentile(short, 50)), "p99": float(np.percentile(short, 99)),
                     "wall_s": time.perf_counter() - start}
    if "Phoenix" in out and "Eagle-C" in out:
        out["p99_ratio_vs_eagle_c"] = out["Eagle-C"]["p99"] / out["Phoenix"]["p99"]
    if "Eagle (no constraints)" in out and "Eagle-C" in out:
        out["eagle_c_constraint_penalty"] = out["Eagle-C"]["p99"] / out["Eagle (no constraints)"]["p99"]
    return out


def dial(m: Mechanism, traces_dir: Path, worker_shares: tuple[float, ...],
         policies: tuple[str, ...] = MECHANISM_POLICIES) -> list[dict[str, Any]]:
    """The scenario at each `worker_shares` (task share fixed): pressure from the scenario's down."""
    return [run(replace(m, worker_share=s), traces_dir, policies) for s in worker_shares]


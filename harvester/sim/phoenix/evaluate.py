"""The Phoenix evaluation (docs/evaluation/phoenix.md): short-job response times of FIFO,
Sparrow-C, Eagle-C and Phoenix on the Yahoo sub-traces with Table II constraints.

`harvester evaluate phoenix` (or `python -m harvester.cli_phoenix`) runs the plan: every trace x load x seed x policy
on `workers` one-slot workers. A seed fixes the worker attributes, the synthesized
constraints, the short partition and the probes; every policy of a (trace, load, seed) sees
the same ones. Results: per run the p50/p90/p99 response time of short jobs (all, constrained,
unconstrained) and of long jobs; the ratios Eagle-C p99 / Phoenix p99 and Sparrow-C p99 /
Phoenix p99 per (trace, load, seed), summarized as geometric means.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from harvester.models.constraints import Strength
from harvester.observability.progress import Progress
from harvester.sim.phoenix.cluster import synthesize_workers
from harvester.sim.phoenix.engine import SAMPLE_S, Simulation
from harvester.sim.phoenix.phoenix_policy import PhoenixC
from harvester.sim.phoenix.policies import EagleC, FifoC, HawkC, SparrowC
from harvester.sim.phoenix.synthesis import CONSTRAINED_FRACTION, TABLE_II, synthesize
from harvester.sim.phoenix.workload import DEFAULT_CUTOFF_S, load_trace

TRACE_DIR = "hawk-eagle-shortjob-subtraces"
TRACES = ("YH1_sub.tr.gz", "YH2_sub.tr.gz")

#: name -> (factory, constrained jobs?). The ablations switch Phoenix's mechanisms one by one;
#: "Eagle (no constraints)" is Eagle on the same jobs without constraints (paper §III-B, Fig. 4).
POLICIES: dict[str, tuple[Callable[[], Any], bool]] = {
    "FIFO": (FifoC, True),
    "Sparrow-C": (SparrowC, True),
    "Hawk-C": (HawkC, True),
    "Eagle-C": (EagleC, True),
    "Phoenix": (PhoenixC, True),
    "Phoenix: reorder only": (lambda: PhoenixC(admission=None), True),
    "Phoenix: admission only": (lambda: PhoenixC(reorder=False), True),
    "Phoenix + CRV-aware placement (first review)": (lambda: PhoenixC(placement=True), True),
    "Phoenix, Eagle's placement (S7)": (lambda: PhoenixC(placement=False), True),
    "Phoenix, first review's order (M/G/1 buckets)": (lambda: PhoenixC(order="mg1"), True),
    "Phoenix, first review's admission (M/G/1 bound)": (lambda: PhoenixC(admission="mg1"), True),
    "Phoenix, first review's mechanisms": (lambda: PhoenixC(order="mg1", admission="mg1", placement=True), True),
    "Eagle (no constraints)": (EagleC, False),
}
MAIN = ("FIFO", "Sparrow-C", "Hawk-C", "Eagle-C", "Phoenix")
#: What `harvester evaluate phoenix` runs without --policy: the first review's M/G/1 variants take
#: ~5x longer per run (the M/G/1 model every 5 s) and are run on request.
DEFAULT_POLICIES = (*MAIN, "Phoenix: reorder only", "Phoenix: admission only",
                    "Phoenix + CRV-aware placement (first review)", "Phoenix, Eagle's placement (S7)",
                    "Eagle (no constraints)")


@dataclass(frozen=True)
class Plan:
    traces_dir: Path
    traces: tuple[str, ...] = TRACES
    workers: int = 15000
    loads: tuple[float, ...] = (1.5, 3.0)
    seeds: tuple[int, ...] = (1, 2, 3)
    policies: tuple[str, ...] = DEFAULT_POLICIES
    short_partition: float = 0.02  # Eagle simulator, Yahoo: big partition 98% (docs/evaluation/phoenix-fidelity.md S2a)
    constrained_fraction: float = CONSTRAINED_FRACTION
    cutoff_s: float = DEFAULT_CUTOFF_S
    rtt_s: float = 0.001  # a task starts 2 x 0.5 ms after its worker asks (Eagle simulator's NETWORK_DELAY)
    limit: int | None = None  # jobs per trace (quick checks)

    def runs(self) -> list[tuple[str, float, int, str]]:
        return [(t, load, seed, p) for t in self.traces for load in self.loads for seed in self.seeds for p in self.policies]


@dataclass
class Row:
    trace: str
    load: float
    seed: int
    policy: str
    short: dict[str, float]
    constrained: dict[str, float]
    unconstrained: dict[str, float]
    long: dict[str, float]
    relaxed_jobs: int
    probes: int
    wasted_probes: int
    time_scale: float
    wall_s: float
    slowdown_by_type: dict[str, float] = field(default_factory=dict)
    tail: dict[str, float] = field(default_factory=dict)
    utilization: dict[str, float] = field(default_factory=dict)
    short_response_s: list[float] = field(default_factory=list, repr=False)


def _pct(x: Sequence[float]) -> dict[str, float]:
    if not len(x):
        return {"p50": math.nan, "p90": math.nan, "p99": math.nan, "n": 0}
    p50, p90, p99 = np.percentile(np.asarray(x, dtype=float), [50, 90, 99]).tolist()
    return {"p50": p50, "p90": p90, "p99": p99, "n": len(x)}


@lru_cache(maxsize=4)
def _inputs(plan: Plan, trace: str, load: float, seed: int, constrained: bool):  # noqa: ANN202
    """Trace, workers and constraints of one (trace, load, seed): the same for every policy."""
    tr = load_trace(plan.traces_dir / TRACE_DIR / trace, workers=plan.workers, load=load, cutoff_s=plan.cutoff_s,
                    limit=plan.limit)
    workers = synthesize_workers(plan.workers, seed)
    specs = synthesize(len(tr.jobs), workers, seed + 1000, long=[j.long for j in tr.jobs],
                       constrained_fraction=plan.constrained_fraction if constrained else 0.0)
    return tr, workers, specs


def run_one(plan: Plan, trace: str, load: float, seed: int, policy: str) -> Row:
    start = time.perf_counter()
    factory, constrained = POLICIES[policy]
    tr, workers, specs = _inputs(plan, trace, load, seed, constrained)
    pol = factory()
    sim = Simulation(tr, workers, specs, pol, seed=seed, rtt_s=plan.rtt_s, short_partition=plan.short_partition)
    result = sim.run()
    short = [(j, s) for j, s in zip(result.jobs, specs) if not j.long]
    supply = [int(np.count_nonzero(sim.classes[job.full_cls].mask)) for job, r in zip(sim.jobs, result.jobs) if not r.long]
    base = [j.response_s for j, s in short if not s.constrained]
    by_type = {}
    for t in TABLE_II:
        with_t = [j.response_s for j, s in short if t.name in s.types]
        if with_t and base:
            by_type[t.name] = float(np.mean(with_t) / np.mean(base))
    return Row(
        trace.split(".")[0], load, seed, policy,
        short=_pct([j.response_s for j, _ in short]),
        constrained=_pct([j.response_s for j, s in short if s.constrained]),
        unconstrained=_pct(base),
        long=_pct([j.response_s for j in result.jobs if j.long]),
        relaxed_jobs=int(getattr(pol, "relaxed_jobs", 0)), probes=result.probes, wasted_probes=result.wasted_probes,
        time_scale=tr.time_scale, wall_s=time.perf_counter() - start, slowdown_by_type=by_type,
        tail=_tail(short, supply),
        utilization=utilization(result.busy_share, max(j.arrival for j in sim.jobs)),
        short_response_s=[j.response_s for j, _ in short],
    )


def utilization(busy_share: Sequence[float], last_arrival_s: float) -> dict[str, float]:
    """The measured load: busy share of the workers sampled every SAMPLE_S, over the arrival span
    (mean, and share of samples above 80%, the Phoenix-derived simulator's CRV threshold) and
    over the whole run."""
    x = np.asarray(busy_share, dtype=float)
    if not x.size:
        return {}
    during = x[: int(last_arrival_s // SAMPLE_S) + 1]
    return {"busy_mean_arrivals": float(during.mean()), "busy_over_80_arrivals": float(np.mean(during > 0.8)),
            "busy_mean_run": float(x.mean())}


def _tail(short: list, supply: list[int]) -> dict[str, float]:
    """Who the slowest 1% of short jobs are: shares with hard / only soft / no constraints, and the
    median number of workers satisfying all their constraints."""
    if not short:
        return {}
    cut = float(np.percentile([j.response_s for j, _ in short], 99))
    tail = [(s, n) for (j, s), n in zip(short, supply) if j.response_s >= cut]
    hard = sum(any(c.strength is Strength.HARD for c in s.constraints) for s, _ in tail)
    soft = sum(bool(s.constraints) and all(c.strength is Strength.SOFT for c in s.constraints) for s, _ in tail)
    return {"jobs": float(len(tail)), "hard_share": hard / len(tail), "soft_only_share": soft / len(tail),
            "unconstrained_share": (len(tail) - hard - soft) / len(tail),
            "median_workers_satisfying": float(np.median([n for _, n in tail]))}


def _run(args: tuple[Plan, str, float, int, str]) -> Row:
    return run_one(*args)


def run_plan(plan: Plan, processes: int = 1, progress: bool = False) -> list[Row]:
    """Every run of the plan, in plan order; progress on a terminal when `progress`."""
    jobs = [(plan, *r) for r in plan.runs()]
    with Progress(len(jobs), "evaluate phoenix", quiet=not progress, unit="runs") as bar:
        if processes <= 1:
            rows = []
            for job in jobs:
                rows.append(_run(job))
                bar.advance(note=f"{job[1]} load {job[2]} seed {job[3]} {job[4]}: short p99 {rows[-1].short['p99']:.1f} s")
            return rows
        with ProcessPoolExecutor(max_workers=processes) as pool:
            futures = [pool.submit(_run, job) for job in jobs]
            for fut in as_completed(futures):
                row = fut.result()
                bar.advance(note=f"{row.policy} load {row.load} seed {row.seed}")
            return [f.result() for f in futures]


def geomean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return float(math.exp(sum(math.log(x) for x in xs) / len(xs))) if xs else math.nan


def ratios(rows: Sequence[Row], baseline: str, target: str = "Phoenix", pct: str = "p99") -> list[float]:
    """baseline p{pct} / target p{pct} of short jobs, per (trace, load, seed)."""
    by = {(r.trace, r.load, r.seed, r.policy): r for r in rows}
    out = []
    for (trace, load, seed, policy), r in by.items():
        if policy == target and (trace, load, seed, baseline) in by:
            out.append(by[(trace, load, seed, baseline)].short[pct] / r.short[pct])
    return out


def summary(rows: Sequence[Row]) -> dict[str, Any]:
    """The headline figures (also written by bench/phoenix.py)."""
    out: dict[str, Any] = {}
    for base, key in (("Eagle-C", "eagle_c"), ("Hawk-C", "hawk_c"), ("Sparrow-C", "sparrow_c"), ("FIFO", "fifo")):
        for pct in ("p50", "p90", "p99"):
            r = ratios(rows, base, pct=pct)
            if r:
                out[f"{pct}_ratio_vs_{key}"] = geomean(r)
    r = ratios(rows, "Eagle-C", target="Eagle (no constraints)")
    if r:
        out["eagle_c_p99_increase_from_constraints"] = geomean(r)
    return out


def rows_json(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [{k: v for k, v in asdict(r).items() if k != "short_response_s"} for r in rows]

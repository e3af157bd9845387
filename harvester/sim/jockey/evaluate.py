"""Jockey in the simulator: deadlines met and reserved resource-time (docs/evaluation/jockey.md).

    python -m harvester.sim.jockey.evaluate --traces ../shared/traces --out docs/evaluation
    (without --traces: the vendored samples; without --out: var/eval/jockey)

Per job (Alibaba 2018 DAGs, chosen by `select_jobs`):
1. the true job = the trace DAG + `Variability` (truth.py);
2. `prior` runs of it at the job's past quota (a quarter of its widest DAG level) are its
   history; Jockey fits its job model from them (models/job_model.py), precomputes C(p, a)
   (models/completion_time.py, `cpa_runs` simulated runs per level, seeds disjoint from every
   evaluation seed) and the Amdahl model;
3. deadlines: the paper sets them "based on the length of the critical path" (§2.2); here
   D = factor × the model's median makespan with the largest allocation level, C_0.5(0, a_max),
   for each factor of `deadline_factors`;
4. each scenario runs the true job with fresh draws (`seeds`, never used in training) under
   every policy, the draws and disturbances shared by all policies of a seed:
   - `jockey`: the control decision with the C table (decisions/deadline_control.py defaults);
     `jockey-no-cap`: the same without the demand cap (the paper's rules alone); `amdahl`: the
     same loop as `jockey` with S + P/a instead of the C table;
   - `static-model`: the smallest level whose C_q(0, a) × slack meets D, held throughout (the
     paper's "Jockey w/o adaptation");
   - `static-oracle`: the smallest constant allocation (any integer) that meets the deadline in
     EVERY seed where Jockey met it — chosen with hindsight over the very runs it is scored on,
     so no static quota could do better on the same deadlines;
   - `max`: the widest level, to tell infeasible deadlines apart.
   Scenario `nominal`: the true job as in its history. Scenario `injected`: per-attempt failures
   5 % (history 1 %), outliers 5 % (history 2 %), one correlated failure killing 30 % of the
   running tasks at a uniform time in [0.1, 0.6]·D, and 20 %·D of 1.5× slower tasks starting at
   a uniform time in [0, 0.6]·D.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from harvester.arglists import add_deprecated, add_number_list, add_processes
from harvester.eval_paths import add_traces_and_out, traces_note
from harvester.observability.progress import Progress
from harvester.decisions.deadline_control import DeadlineParams
from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.models.completion_time import AmdahlModel, allocation_levels, max_parallelism, precompute
from harvester.models.job_model import fit_job_model
from harvester.models.job_sim import CompiledJob, Disturbance, draw
from harvester.sim.jockey.report import POLICIES, figure, save_results, table
from harvester.sim.jockey.runner import Controlled, Static, run_once
from harvester.sim.jockey.truth import Variability, prior_runs, true_model
from harvester.sim.traces import load_jobs
from harvester.sim.workload import JobSpec

TRACE = "alibaba-2018-batch-dags/batch_task_selected_2119_DAG_jobs.csv.gz"
PAPER = "EuroSys'12 §1/§5: Jockey missed 1 of 94 deadlines (by 3 %) in Microsoft's Cosmos clusters"


@dataclass(frozen=True)
class Injection:
    """What a scenario changes from the job's history (module docstring)."""

    variability: Variability = Variability()
    kill_fraction: float = 0.0
    kill_window: tuple[float, float] = (0.1, 0.6)
    slow_factor: float = 1.0
    slow_length: float = 0.2
    slow_window: tuple[float, float] = (0.0, 0.6)

    def disturbance(self, rng: np.random.Generator, deadline_s: float) -> Disturbance | None:
        kill = rng.uniform(*self.kill_window) * deadline_s
        slow = rng.uniform(*self.slow_window) * deadline_s
        if self.kill_fraction <= 0 and self.slow_factor == 1.0:
            return None
        return Disturbance((kill,) if self.kill_fraction > 0 else (), self.kill_fraction, slow,
                           slow + self.slow_length * deadline_s, self.slow_factor)


SCENARIOS: dict[str, Injection] = {
    "nominal": Injection(),
    "injected": Injection(Variability(outlier_prob=0.05, failure_prob=0.05, retry_failure_prob=0.05),
                          kill_fraction=0.3, slow_factor=1.5),
}


@dataclass(frozen=True)
class Setup:
    jobs: int = 24
    seeds: tuple[int, ...] = tuple(range(10))
    deadline_factors: tuple[float, ...] = (2.0, 3.0)
    scenarios: tuple[str, ...] = ("nominal", "injected")
    cpa_runs: int = 100
    levels: int = 40
    prior: int = 5
    period_fraction: float = 1 / 60
    params: DeadlineParams = DeadlineParams()
    history: Variability = Variability()
    min_stages: int = 5
    max_tasks: int = 5000
    example_job: int = 0
    seed: int = 1
    policies: tuple[str, ...] = ("jockey", "jockey-no-cap", "amdahl", "static-model")  # + static-oracle, max always
    variants: tuple[tuple[str, DeadlineParams], ...] = ()  # extra Jockey runs with other parameters (sweeps)
    deadline_at: str = "max"  # D = factor × C_0.5(0, widest level) ("max") or × the prior runs' median makespan ("history")
    running_ages: bool = True  # the demand look-ahead knows how long running tasks have run (progress.drains_within)
    per_run_weights: bool = True  # C(p, a): each simulated run weighs 1 per progress bin (completion_time.py)


def select_jobs(jobs: Sequence[JobSpec], setup: Setup, *, offset: float = 0.0) -> list[JobSpec]:
    """Jobs where the allocation matters: >= `min_stages` stages, 200..`max_tasks` tasks, a
    critical path >= 300 s and >= 20× more task-seconds than critical path; then `setup.jobs`
    of them evenly spaced by task count (small to large). `offset` = 0.5 takes the jobs half
    way between those (a disjoint set, used to choose the control parameters)."""
    keep = []
    for j in jobs:
        if not (setup.min_stages <= len(j.stages) and 200 <= j.tasks <= setup.max_tasks):
            continue
        cp = j.critical_path_s()
        if cp >= 300 and j.task_seconds() / cp >= 20:
            keep.append(j)
    keep.sort(key=lambda j: (j.tasks, j.job_id))
    if len(keep) <= setup.jobs:
        return keep
    step = (len(keep) - 1) / max(1, setup.jobs - 1)
    n = setup.jobs if offset == 0 else setup.jobs - 1  # in-between picks: one fewer, never an end point
    picks = sorted({int(round((i + offset) * step)) for i in range(n)})
    return [keep[i] for i in picks]


def evaluate_job(spec: JobSpec, setup: Setup, example: bool = False) -> dict[str, Any]:
    """Every scenario, deadline, seed and policy for one job; rows plus the job's setup."""
    t0 = time.perf_counter()
    truth = true_model(spec, setup.history, seed=setup.seed)
    width = max_parallelism(truth)
    quota = max(1, width // 4)
    history = prior_runs(truth, quota, [10_000 + setup.seed * 100 + i for i in range(setup.prior)])
    model = fit_job_model(history, name=spec.job_id)
    levels = allocation_levels(width, setup.levels)
    table = precompute(model, levels, runs=setup.cpa_runs, seed=20_000 + setup.seed, per_run_weights=setup.per_run_weights)
    amdahl = AmdahlModel.fit(model, levels)
    prep_s = time.perf_counter() - t0
    if setup.deadline_at == "history":  # the median makespan of the job's prior runs (at its past quota)
        makespan = float(np.median([max(x.end_s for x in r.attempts) for r in history]))
    else:
        makespan = float(table.at_progress(0.0, 0.5)[-1])
    prm = replace(setup.params, max_allocation=int(levels[-1]))
    known = model if setup.running_ages else None  # the job manager reports its running tasks' ages
    controlled = [p for p in (Controlled("jockey", table, prm, table.indicator, known),
                              Controlled("jockey-no-cap", table, replace(prm, cap_to_demand=False), table.indicator, known),
                              Controlled("amdahl", amdahl, prm, table.indicator, known)) if p.name in setup.policies]
    controlled += [Controlled(name, table, replace(v, max_allocation=int(levels[-1])), table.indicator, known)
                   for name, v in setup.variants]
    rows: list[dict[str, Any]] = []
    examples: dict[str, Any] = {}
    for scenario in setup.scenarios:
        inj = SCENARIOS[scenario]
        # nominal: the true job exactly as its history ran (whatever `setup.history` says)
        variability = setup.history if scenario == "nominal" else inj.variability
        cluster = CompiledJob(true_model(spec, variability, seed=setup.seed))
        for factor in setup.deadline_factors:
            deadline = factor * makespan
            util = DeadlineUtility(deadline)
            period = deadline * setup.period_fraction
            static_a = _static_model(table, prm, deadline, levels)
            runs = []
            for seed in setup.seeds:
                rng = np.random.default_rng([setup.seed, seed, 7])  # evaluation draws: disjoint from training seeds
                draws = draw(cluster, rng)
                dist = inj.disturbance(rng, deadline)
                keep = example and seed == setup.seeds[0] and factor == setup.deadline_factors[0]
                outs = {p.name: run_once(cluster, draws, p, util, period_s=period, disturbance=dist, keep_decisions=keep)
                        for p in controlled}
                for pol in (Static("static-model", static_a), Static("max", int(levels[-1]))):
                    if pol.name in setup.policies or pol.name == "max":
                        outs[pol.name] = run_once(cluster, draws, pol, util, period_s=period, disturbance=dist)
                runs.append((seed, draws, dist, outs))
            oracle_a = _static_oracle(cluster, runs, util, period, width)
            for seed, draws, dist, outs in runs:
                if oracle_a is not None:
                    outs["static-oracle"] = run_once(cluster, draws, Static("static-oracle", oracle_a), util,
                                                     period_s=period, disturbance=dist)
                for name, o in outs.items():
                    rows.append({"job": spec.job_id, "scenario": scenario, "factor": factor, "seed": seed,
                                 "policy": name, "deadline_s": deadline, "finish_s": o.finish_s, "met": o.met,
                                 "feasible": outs["max"].met,
                                 "reserved_cs": o.reserved_cs, "busy_cs": o.busy_cs, "changes": o.changes,
                                 "allocation": o.timeline[0][1] if name.startswith(("static", "max")) else None})
                if example and seed == setup.seeds[0] and factor == setup.deadline_factors[0]:
                    examples[scenario] = {"deadline_s": deadline, "static_oracle": oracle_a,
                                          **{n: {"timeline": o.timeline, "finish_s": o.finish_s}
                                             for n, o in outs.items()},
                                          "reasons": [d.reason for d in outs["jockey"].decisions[:12]]}
    info = {"job": spec.job_id, "stages": len(spec.stages), "tasks": spec.tasks, "width": width, "quota": quota,
            "levels": int(levels.size), "max_level": int(levels[-1]), "makespan_s": makespan,
            "prep_s": prep_s, "raised_cells": table.raised_cells, "quota_idle_share": quota_idle_share(history, quota)}
    return {"info": info, "rows": rows, "examples": examples}


def quota_idle_share(runs: Sequence[Any], allocation: int) -> float:
    """The knee property (issue 27's dial): the share of a static reservation of `allocation`
    containers that the job leaves idle, 1 − Σ attempt container-seconds / (allocation × makespan),
    median over `runs` (its prior runs, which ran at that allocation). A job whose width swings
    (narrow stages, barriers, straggler tails) leaves much of it idle; only there can a controller
    that releases containers reserve less than a static allocation."""
    shares = []
    for r in runs:
        end = max(a.end_s for a in r.attempts)
        busy = sum(a.end_s - a.start_s for a in r.attempts)
        shares.append(1.0 - busy / (allocation * end))
    return float(np.median(shares))


def _static_model(table: Any, prm: DeadlineParams, deadline: float, levels: np.ndarray) -> int:
    """Jockey w/o adaptation: the smallest level with slack × C_q(0, a) within the deadline."""
    ok = np.flatnonzero(prm.slack * table.at_progress(0.0, prm.quantile) <= deadline)
    return int(levels[ok[0]]) if ok.size else int(levels[-1])


def _static_oracle(cluster: CompiledJob, runs: list, util: DeadlineUtility, period: float, width: int) -> int | None:
    """The smallest constant allocation meeting the deadline in every seed Jockey met it (hindsight)."""
    must = [(draws, dist) for _, draws, dist, outs in runs if outs["jockey"].met]
    if not must:
        return None

    def meets(a: int) -> bool:
        return all(run_once(cluster, d, Static("s", a), util, period_s=period, disturbance=x).met for d, x in must)

    lo, hi = 1, max(1, width)
    while not meets(hi):  # more than the widest level may be needed when failures pile up
        if hi >= 64 * max(1, width):
            return None
        lo, hi = hi + 1, hi * 2
    while lo < hi:  # bisection, then a check upward: the greedy scheduler is not always monotone in a
        mid = (lo + hi) // 2
        if meets(mid):
            hi = mid
        else:
            lo = mid + 1
    while not meets(lo):
        lo += 1
    return lo


def _worker(args: tuple[JobSpec, Setup, bool]) -> dict[str, Any]:
    return evaluate_job(*args)


def run_evaluation(specs: Sequence[JobSpec], setup: Setup, workers: int = 1, progress: bool = False) -> dict[str, Any]:
    tasks = [(s, setup, i == setup.example_job) for i, s in enumerate(specs)]
    with Progress(len(tasks), "evaluate jockey", quiet=not progress, unit="jobs") as bar:
        if workers > 1:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(_worker, t) for t in tasks]
                for fut in as_completed(futures):
                    fut.result()
                    bar.advance()
                parts = [f.result() for f in futures]
        else:
            parts = []
            for t in tasks:
                parts.append(_worker(t))
                bar.advance(note=t[0].name or t[0].job_id)
    rows = [r for p in parts for r in p["rows"]]
    return {"setup": _setup_dict(setup), "paper": PAPER, "jobs": [p["info"] for p in parts],
            "rows": rows, "summary": summarize(rows), "examples": next((p["examples"] for p in parts if p["examples"]), {})}


def _setup_dict(setup: Setup) -> dict[str, Any]:
    d = asdict(setup)
    d["injections"] = {k: asdict(v) for k, v in SCENARIOS.items() if k in setup.scenarios}
    return d


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per scenario and policy: deadlines met, lateness of misses, reserved resource-time vs the
    static oracle on the same (job, deadline, seed) runs."""
    out: dict[str, Any] = {}
    for scenario in sorted({r["scenario"] for r in rows}):
        sc = [r for r in rows if r["scenario"] == scenario]
        oracle = {(r["job"], r["factor"], r["seed"]): r for r in sc if r["policy"] == "static-oracle"}
        per: dict[str, Any] = {}
        names = {r["policy"] for r in sc}
        for pol in [p for p in POLICIES if p in names] + sorted(names - set(POLICIES)):
            pr = [r for r in sc if r["policy"] == pol]
            if not pr:
                continue
            late = [(math.inf if r["finish_s"] is None else r["finish_s"]) / r["deadline_s"] - 1 for r in pr if not r["met"]]
            paired = [(r["reserved_cs"], oracle[(r["job"], r["factor"], r["seed"])]["reserved_cs"]) for r in pr
                      if (r["job"], r["factor"], r["seed"]) in oracle]
            fe = [r for r in pr if r["feasible"]]
            per[pol] = {
                "runs": len(pr), "met": sum(r["met"] for r in pr), "met_fraction": sum(r["met"] for r in pr) / len(pr),
                "feasible_runs": len(fe), "feasible_met": sum(r["met"] for r in fe),
                "max_lateness": max(late) if late else 0.0, "median_lateness_of_misses": float(np.median(late)) if late else 0.0,
                "reserved_vs_static_oracle": (sum(a for a, _ in paired) / sum(b for _, b in paired)) if paired else None,
                "paired_runs": len(paired), "mean_changes": float(np.mean([r["changes"] for r in pr])),
            }
        per["oracle_undefined_runs"] = sum(1 for r in sc if r["policy"] == "jockey") - len(oracle)
        out[scenario] = per
    return out


def build_parser(prog: str = "python -m harvester.sim.jockey.evaluate") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    add_traces_and_out(ap, "jockey", "alibaba-2018-batch-dags/; writes jockey-results.json.gz and img/jockey.png")
    ap.add_argument("--job-count", type=int, default=Setup.jobs, metavar="COUNT", help="how many DAGs (spread by task count)")
    add_deprecated(ap, "--jobs", "--job-count", dest="job_count", kind=int,
                   why=" here (elsewhere --jobs names a job trace)")
    add_number_list(ap, "--seeds", int, default=None,
                    help=f"the evaluation's seeds, one run each per job, deadline and scenario (default "
                         f"{Setup.seeds[0]}-{Setup.seeds[-1]}); ONE value alone is still read as a count, the old "
                         "spelling (deprecated): write one seed as a range, e.g. 4-4")
    ap.add_argument("--cpa-runs", type=int, default=Setup.cpa_runs, metavar="COUNT",
                    help="simulated runs per allocation level for the C(p,a) table")
    ap.add_argument("--cpa-levels", type=int, default=Setup.levels, metavar="COUNT",
                    help="allocation levels of the C(p,a) table (a count)")
    add_deprecated(ap, "--levels", "--cpa-levels", dest="cpa_levels", kind=int,
                   why=" here (elsewhere --levels is a list of utilization levels)")
    add_number_list(ap, "--factors", float, default=list(Setup.deadline_factors),
                    help="deadline factors (× the model's median makespan at the widest level)")
    ap.add_argument("--scenarios", default=",".join(Setup.scenarios), help="comma-separated: nominal, injected")
    ap.add_argument("--quantile", type=float, default=DeadlineParams().quantile)
    ap.add_argument("--slack", type=float, default=DeadlineParams().slack)
    ap.add_argument("--early-slack", type=float, default=DeadlineParams().early_slack)
    add_processes(ap, 2)
    ap.add_argument("--limit", type=int, default=None, help="read at most this many trace rows (quick runs)")
    ap.add_argument("--tuning", action="store_true",
                    help="the jobs half way between the evaluation's picks (disjoint: used to choose parameters)")
    ap.add_argument("--below", type=int, default=None, help="then keep only jobs with at most this many tasks")
    ap.add_argument("--policies", default=",".join(Setup.policies),
                    help="controlled/static policies to run (static-oracle and max always run)")
    ap.add_argument("--variant", action="append", default=[], metavar="KEY=VALUE,...",
                    help="also run Jockey with these DeadlineParams changed, e.g. quantile=0.95,slack=1.2 (repeatable)")
    ap.add_argument("--no-figure", action="store_true")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return ap


def seeds_of(given: list[int] | None, given_as: Sequence[str], prog: str) -> tuple[int, ...]:
    """The seeds of `--seeds`: a list, as in every command; one bare integer N alone is the old
    count (seeds 0..N-1), kept for now with a warning (arglists.py, issue 25)."""
    if not given:
        return Setup.seeds
    raw: list[str] = []  # the text given to the last --seeds
    for i, token in enumerate(given_as):
        if token == "--seeds":
            raw = list(itertools.takewhile(lambda t: not t.startswith("--"), given_as[i + 1:]))
        elif token.startswith("--seeds="):
            raw = [token.partition("=")[2]]
    if len(raw) == 1 and raw[0].strip().isdigit():
        n = given[0]
        print(f"{prog}: warning: --seeds {n} as a count is deprecated: it still runs seeds 0-{n - 1}; --seeds takes a "
              f"list everywhere (--seeds 0-{n - 1}; one seed: --seeds {n}-{n})", file=sys.stderr)
        if n < 1:
            raise ValueError(f"--seeds {n}: a count must be >= 1")
        return tuple(range(n))
    return tuple(given)


def main(argv: Sequence[str] | None = None, prog: str = "python -m harvester.sim.jockey.evaluate") -> int:
    a = build_parser(prog).parse_args(argv)
    argv_list = list(sys.argv[1:] if argv is None else argv)
    try:
        scenarios = tuple(s for s in a.scenarios.split(",") if s)
        unknown = [s for s in scenarios if s not in SCENARIOS]
        if unknown:
            raise ValueError(f"unknown scenarios {unknown} (known: {', '.join(SCENARIOS)})")
        policies = tuple(p for p in a.policies.split(",") if p)
        if "jockey" not in policies or any(p not in Setup.policies for p in policies):
            raise ValueError(f"--policies must include jockey and name only {', '.join(Setup.policies)}")
        base = DeadlineParams(quantile=a.quantile, slack=a.slack, early_slack=a.early_slack)
        variants = tuple((f"jockey[{v}]", _params(base, v)) for v in a.variant)
        setup = Setup(jobs=a.job_count, seeds=seeds_of(a.seeds, argv_list, prog), cpa_runs=a.cpa_runs, levels=a.cpa_levels,
                      scenarios=scenarios, policies=policies,
                      variants=variants,
                      deadline_factors=tuple(a.factors),
                      params=base)
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    trace = Path(a.traces) / TRACE
    if not trace.is_file():
        print(f"{prog}: traces not found: {trace} (give --traces DIR)", file=sys.stderr)
        return 2
    note = traces_note(Path(a.traces), [TRACE])
    if note:
        print(note, flush=True)
    t0 = time.perf_counter()
    specs = select_jobs(load_jobs("alibaba-2018-dags", trace, limit=a.limit), setup, offset=0.5 if a.tuning else 0.0)
    specs = [s for s in specs if a.below is None or s.tasks <= a.below]
    result = run_evaluation(specs, setup, workers=a.processes, progress=not a.quiet)
    result["elapsed_s"] = time.perf_counter() - t0
    result["command"] = f"{prog} " + " ".join(argv if argv is not None else sys.argv[1:])
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    save_results(_plain(result), out / "jockey-results.json.gz")
    if not a.no_figure:
        figure(result, out / "img" / "jockey.png")
    print(table(result))
    print(f"{len(specs)} jobs in {result['elapsed_s']:.0f} s")
    return 0


def _params(base: DeadlineParams, text: str) -> DeadlineParams:
    """`quantile=0.95,slack=1.2` applied to `base` (ValueError naming the bad key)."""
    kinds = {f.name: f.type for f in fields(DeadlineParams)}
    change: dict[str, Any] = {}
    for item in (x for x in text.split(",") if x):
        key, _, value = item.partition("=")
        if key not in kinds or not value:
            raise ValueError(f"--variant {text!r}: unknown or empty {key!r} (known: {', '.join(kinds)})")
        kind = str(kinds[key])
        change[key] = (value.lower() in ("1", "true", "yes") if "bool" in kind else
                       int(value) if kind.startswith("int") else float(value))
    return replace(base, **change)


def _plain(o: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, non-finite floats (a failed job's finish) to null."""
    if isinstance(o, dict):
        return {str(k): _plain(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_plain(v) for v in o]
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return float(o) if math.isfinite(o) else None
    return o


if __name__ == "__main__":
    raise SystemExit(main())

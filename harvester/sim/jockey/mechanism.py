"""Jockey's mechanism scenario and its premise dial (issue 27; docs/evaluation/jockey.md, "Mechanism").

    python -m harvester.sim.jockey.mechanism --scenario deploy/scenarios/mechanism-jockey.yaml \\
        [--sweep] [--figure docs/evaluation/img/jockey-dial.png] [--seeds 0-19] [--processes 2]

The premise of EuroSys'12 (§1, §2.3): a static allocation must be sized for the whole job and
for its bad runs, while the control loop, watching progress against C(p, a), holds what the job
needs NOW. The scenario file describes one recurring DAG job whose width swings (a one-task
stage, a wide stage, a one-task stage: a sharp speed-up knee) and whose task times vary
(LogNormal(0, `runtime_sigma`) per task, the "true job" of truth.py). Everything downstream is
the trace evaluation's own code (`evaluate.evaluate_job`): 5 prior runs at the past quota, the
fitted job model, C(p, a), the control decision (decisions/deadline_control.py), the static-model
and hindsight static-oracle allocations, on the `nominal` scenario (the true job as in its
history).

The dial sweeps `runtime_sigma` (the one property issue 27 names for Jockey: task-time
variance). `trace_task_sigma` measures the same property on a real trace that has per-task
durations (Yahoo 2011 `.tr`): the median over jobs of ≥ `min_tasks` tasks of the standard
deviation of log task duration, so the real trace sits on the same axis.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import yaml

from harvester.arglists import add_number_list, add_processes
from harvester.sim.jockey.evaluate import Setup, evaluate_job, summarize
from harvester.sim.jockey.truth import Variability
from harvester.sim.workload import JobSpec, StageSpec

SCENARIO = "deploy/scenarios/mechanism-jockey.yaml"


@dataclass(frozen=True)
class Mechanism:
    name: str
    spec: JobSpec
    runtime_sigma: float
    setup: Setup
    sweep_sigma: tuple[float, ...]


def load_mechanism(path: str | Path) -> Mechanism:
    """The scenario file (deploy/scenarios/mechanism-jockey.yaml) as a job and a `Setup`."""
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    names: list[str] = []
    stages = []
    for st in doc["job"]["stages"]:
        parents = tuple(names.index(p) for p in st.get("parents", ()))
        stages.append(StageSpec(st["name"], np.full(int(st["tasks"]), float(st["duration_s"])), parents=parents))
        names.append(st["name"])
    spec = JobSpec(doc["name"], 0.0, tuple(stages), name=doc["name"])
    sigma = float(doc["job"]["runtime_sigma"])
    lo, _, hi = str(doc.get("seeds", "0-9")).partition("-")
    seeds = tuple(range(int(lo), int(hi or lo) + 1))
    setup = Setup(jobs=1, seeds=seeds, deadline_factors=(float(doc["deadline"]["factor"]),), scenarios=("nominal",),
                  cpa_runs=int(doc.get("cpa_runs", 100)), levels=int(doc.get("levels", 40)),
                  prior=int(doc.get("prior_runs", 5)), history=Variability(runtime_sigma=sigma),
                  seed=int(doc.get("seed", 1)), deadline_at=str(doc["deadline"].get("at", "max")),
                  policies=("jockey", "jockey-no-cap", "static-model"))
    return Mechanism(doc["name"], spec, sigma, setup, tuple(float(s) for s in doc.get("sweep_sigma", ())))


def with_sigma(m: Mechanism, sigma: float) -> Setup:
    return replace(m.setup, history=replace(m.setup.history, runtime_sigma=float(sigma)))


def run(m: Mechanism, setup: Setup | None = None) -> dict[str, Any]:
    """One mechanism evaluation: the figures of issue 27 plus the per-policy summary."""
    setup = setup or m.setup
    t0 = time.perf_counter()
    res = evaluate_job(m.spec, setup, example=True)
    per = summarize(res["rows"])["nominal"]
    j = per["jockey"]
    jr = [r for r in res["rows"] if r["policy"] == "jockey"]
    sm = {(r["seed"], r["factor"]): r["reserved_cs"] for r in res["rows"] if r["policy"] == "static-model"}
    statics = {r["policy"]: r["allocation"] for r in res["rows"] if r["policy"] in ("static-model", "static-oracle")}
    return {"runtime_sigma": setup.history.runtime_sigma, "seconds": time.perf_counter() - t0,
            "runs": j["runs"], "feasible_runs": j["feasible_runs"],
            "deadlines_met_fraction": j["feasible_met"] / max(1, j["feasible_runs"]),
            "deadlines_met_all_fraction": j["met_fraction"],
            "reserved_vs_static_ratio": j["reserved_vs_static_oracle"],
            "reserved_vs_static_model_ratio": sum(r["reserved_cs"] for r in jr) / sum(sm[(r["seed"], r["factor"])] for r in jr),
            "static_oracle_allocation": statics.get("static-oracle"), "static_model_allocation": statics.get("static-model"),
            "static_model_met_fraction": per["static-model"]["met_fraction"],
            "jockey_no_cap_reserved_vs_static_ratio": per["jockey-no-cap"]["reserved_vs_static_oracle"],
            "deadline_s": res["rows"][0]["deadline_s"], "job": res["info"],
            "example_reasons": res["examples"].get("nominal", {}).get("reasons", [])}


def _run_sigma(args: tuple[Mechanism, float]) -> dict[str, Any]:
    m, sigma = args
    out = run(m, with_sigma(m, sigma))
    out.pop("example_reasons", None)
    return out


def sweep(m: Mechanism, sigmas: Sequence[float], processes: int = 1) -> list[dict[str, Any]]:
    """The premise dial: the mechanism at each task-time σ (everything else fixed)."""
    tasks = [(m, s) for s in sigmas]
    if processes > 1:
        with ProcessPoolExecutor(max_workers=processes) as pool:
            return list(pool.map(_run_sigma, tasks))
    return [_run_sigma(t) for t in tasks]


def trace_task_sigma(path: str | Path, min_tasks: int = 10) -> dict[str, float]:
    """σ of log task duration within each job of a `.tr` trace (arrival, tasks, mean, durations…):
    median and quartiles over jobs with ≥ `min_tasks` tasks."""
    sig = []
    with gzip.open(path, "rt") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or int(parts[1]) < min_tasks:
                continue
            d = np.asarray(parts[3:], dtype=np.float64)
            d = d[d > 0]
            if d.size >= min_tasks:
                sig.append(float(np.std(np.log(d))))
    a = np.asarray(sig)
    return {"jobs": int(a.size), "median": float(np.median(a)), "p25": float(np.percentile(a, 25)),
            "p75": float(np.percentile(a, 75))}


def figure(points: list[dict[str, Any]], marks: dict[str, float], mechanism_sigma: float, path: Path) -> None:
    """Reserved resource-time vs the static oracle (left) and deadlines met (right) against σ."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted(points, key=lambda p: p["runtime_sigma"])
    x = [p["runtime_sigma"] for p in pts]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax.plot(x, [p["reserved_vs_static_ratio"] for p in pts], "o-", label="Jockey / static oracle")
    ax.plot(x, [p["reserved_vs_static_model_ratio"] for p in pts], "s--", label="Jockey / static-model")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("task-time σ (log-normal, per task)")
    ax.set_ylabel("reserved resource-time ratio (< 1: Jockey wins)")
    bx.plot(x, [p["deadlines_met_fraction"] for p in pts], "o-", label="Jockey: met where feasible")
    bx.plot(x, [p["static_model_met_fraction"] for p in pts], "s--", label="static-model: met")
    bx.axhline(0.99, color="grey", lw=0.8)
    bx.set_xlabel("task-time σ (log-normal, per task)")
    bx.set_ylabel("deadlines met")
    for axis in (ax, bx):
        axis.axvline(mechanism_sigma, color="C2", ls=":", lw=1)
        for i, (label, s) in enumerate(marks.items()):
            axis.axvline(s, color=f"C{3 + i}", ls="-.", lw=1, label=label if axis is ax else None)
    ax.legend(fontsize=7)
    bx.legend(fontsize=7)
    fig.suptitle("Jockey mechanism scenario: the premise dial (dotted: the mechanism's σ)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harvester.sim.jockey.mechanism", description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default=SCENARIO)
    ap.add_argument("--sweep", action="store_true", help="also sweep runtime_sigma over the scenario's sweep_sigma")
    add_number_list(ap, "--sigmas", float, default=None, help="override the sweep's σ values")
    add_number_list(ap, "--seeds", int, default=None, help="override the scenario's seeds")
    ap.add_argument("--traces", default=None, help="staged traces folder: place the Yahoo 2011 .tr traces on the dial")
    ap.add_argument("--figure", default=None, help="write the dial figure here (with --sweep)")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--before", action="store_true",
                    help="the decision code before issue 27: C(p, a) pooled per time sample, demand look-ahead blind to "
                         "running tasks' ages")
    add_processes(ap, 1)
    a = ap.parse_args(argv)
    m = load_mechanism(a.scenario)
    if a.seeds:
        m = replace(m, setup=replace(m.setup, seeds=tuple(a.seeds)))
    if a.before:
        m = replace(m, setup=replace(m.setup, running_ages=False, per_run_weights=False))
    res = run(m)
    print(f"mechanism σ={m.runtime_sigma:g}, {res['runs']} runs, D={res['deadline_s']:.0f}s: Jockey met "
          f"{res['deadlines_met_fraction']:.3f} of feasible deadlines ({res['feasible_runs']} feasible), reserved "
          f"{res['reserved_vs_static_ratio']:.3f}x the static oracle (allocation {res['static_oracle_allocation']}), "
          f"{res['reserved_vs_static_model_ratio']:.3f}x static-model (allocation {res['static_model_allocation']}, met "
          f"{res['static_model_met_fraction']:.3f}); without the demand cap {res['jockey_no_cap_reserved_vs_static_ratio']:.3f}x "
          f"({res['seconds']:.0f} s)")
    out: dict[str, Any] = {"scenario": a.scenario, "mechanism": res}
    if a.traces:
        marks = {}
        for name in ("YH1_sub", "YH2_sub"):
            p = Path(a.traces) / "hawk-eagle-shortjob-subtraces" / f"{name}.tr.gz"
            if p.is_file():
                out[f"trace_sigma_{name}"] = trace_task_sigma(p)
                marks[f"Yahoo {name}"] = out[f"trace_sigma_{name}"]["median"]
                print(f"{name}: median within-job σ of log task time {marks[f'Yahoo {name}']:.3f} "
                      f"(IQR {out[f'trace_sigma_{name}']['p25']:.3f}-{out[f'trace_sigma_{name}']['p75']:.3f}, "
                      f"{out[f'trace_sigma_{name}']['jobs']} jobs)")
    if a.sweep:
        sigmas = a.sigmas or list(m.sweep_sigma)
        t0 = time.perf_counter()
        pts = sweep(m, sigmas, a.processes)
        out["sweep"] = pts
        for p in pts:
            print(f"  σ={p['runtime_sigma']:.2f}: met {p['deadlines_met_fraction']:.3f} of {p['feasible_runs']} feasible, "
                  f"reserved {p['reserved_vs_static_ratio']:.3f}x oracle (a={p['static_oracle_allocation']}), "
                  f"{p['reserved_vs_static_model_ratio']:.3f}x static-model (a={p['static_model_allocation']}, met "
                  f"{p['static_model_met_fraction']:.2f})")
        print(f"sweep: {len(pts)} points in {time.perf_counter() - t0:.0f} s")
        if a.figure:
            marks = {k: v for k, v in (("Yahoo YH1", out.get("trace_sigma_YH1_sub", {}).get("median")),
                                       ("Yahoo YH2", out.get("trace_sigma_YH2_sub", {}).get("median"))) if v is not None}
            marks["Alibaba evaluation (assumed)"] = Variability().runtime_sigma
            figure(pts, marks, m.runtime_sigma, Path(a.figure))
            print(f"wrote {a.figure}")
    if a.out:
        Path(a.out).write_text(json.dumps(out, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

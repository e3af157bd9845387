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
    sweep_narrow: tuple[float, ...] = ()
    sweep_factor: tuple[float, ...] = ()


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
    return Mechanism(doc["name"], spec, sigma, setup, tuple(float(s) for s in doc.get("sweep_sigma", ())),
                     tuple(float(s) for s in doc.get("sweep_narrow", ())),
                     tuple(float(s) for s in doc.get("sweep_factor", ())))


def with_narrow(m: Mechanism, scale: float) -> Mechanism:
    """The job with its one-task stages' durations × `scale` (0: nothing but the wide stage's work)."""
    stages = tuple(StageSpec(st.name, st.durations_s * scale if st.tasks == 1 else st.durations_s, st.vcores,
                             st.memory_mb, st.parents) for st in m.spec.stages)
    return replace(m, spec=replace(m.spec, stages=stages))


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
            "quota_idle_share": res["info"]["quota_idle_share"],
            "static_idle_share": static_idle_share(res["rows"]),
            "example_reasons": res["examples"].get("nominal", {}).get("reasons", [])}


def static_idle_share(rows: Sequence[dict[str, Any]]) -> float | None:
    """How much the static oracle over-provisions: the share of its reserved container-seconds no
    task used, 1 − Σ busy / Σ reserved over its runs (None without an oracle)."""
    o = [r for r in rows if r["policy"] == "static-oracle" and r.get("busy_cs") is not None]
    res = sum(r["reserved_cs"] for r in o)
    return 1.0 - sum(r["busy_cs"] for r in o) / res if res > 0 else None


def _run_point(args: tuple[Mechanism, str, float]) -> dict[str, Any]:
    m, dial, value = args
    if dial == "sigma":
        out = run(m, with_sigma(m, value))
    elif dial == "narrow":
        out = run(with_narrow(m, value))
    else:
        out = run(m, replace(m.setup, deadline_factors=(value,)))
    out.pop("example_reasons", None)
    out["dial"], out["value"] = dial, value
    return out


def sweep(m: Mechanism, values: Sequence[float], processes: int = 1, dial: str = "sigma") -> list[dict[str, Any]]:
    """A premise dial: the mechanism at each task-time σ (`dial="sigma"`), with its one-task
    stages scaled (`dial="narrow"`, the knee) or at each deadline factor (`dial="factor"`: a looser
    deadline lets a static allocation shrink toward the job's average width), everything else fixed."""
    tasks = [(m, dial, v) for v in values]
    if processes > 1:
        with ProcessPoolExecutor(max_workers=processes) as pool:
            return list(pool.map(_run_point, tasks))
    return [_run_point(t) for t in tasks]


def trace_jobs_on_dial(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each job of a trace evaluation (evaluate.py's results) on the knee dial: its quota idle share
    and Jockey's reserved resource-time / the static oracle's, Σ over its runs, per scenario."""
    oracle = {(r["scenario"], r["job"], r["factor"], r["seed"]): r["reserved_cs"] for r in results["rows"]
              if r["policy"] == "static-oracle"}
    out = []
    for info in results["jobs"]:
        for scenario in sorted({r["scenario"] for r in results["rows"]}):
            pairs = [(r["reserved_cs"], oracle[k]) for r in results["rows"] if r["policy"] == "jockey"
                     and r["job"] == info["job"] and r["scenario"] == scenario
                     and (k := (scenario, r["job"], r["factor"], r["seed"])) in oracle]
            idle = static_idle_share([r for r in results["rows"] if r["job"] == info["job"] and r["scenario"] == scenario])
            if pairs and idle is not None:
                out.append({"job": info["job"], "scenario": scenario, "tasks": info["tasks"],
                            "quota_idle_share": info.get("quota_idle_share"), "static_idle_share": idle,
                            "ratio": sum(a for a, _ in pairs) / sum(b for _, b in pairs)})
    return out


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


def figure(points: list[dict[str, Any]], marks: dict[str, float], mechanism_sigma: float, path: Path,
           knee: list[dict[str, Any]] | None = None, real: list[dict[str, Any]] | None = None) -> None:
    """Left: reserved resource-time vs the static oracle against σ; middle: deadlines met against
    σ; right (with `knee`): the same ratio against the quota idle share, with every real job."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted(points, key=lambda p: p["runtime_sigma"])
    x = [p["runtime_sigma"] for p in pts]
    fig, axes = plt.subplots(1, 3 if knee else 2, figsize=(15 if knee else 10, 4))
    ax, bx = axes[0], axes[1]
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
    if knee:
        cx = axes[2]
        for dial, style, label in (("narrow", "o-", "mechanism: one-task stages × 0…1"),
                                   ("factor", "s-", "mechanism: deadline factor")):
            kp = sorted([p for p in knee if p.get("dial") == dial and p["static_idle_share"] is not None],
                        key=lambda p: p["static_idle_share"])
            cx.plot([p["static_idle_share"] for p in kp], [p["reserved_vs_static_ratio"] for p in kp], style,
                    color="C2" if dial == "narrow" else "C1", label=label)
        for i, scenario in enumerate(sorted({r["scenario"] for r in real or []})):
            rr = [r for r in real or [] if r["scenario"] == scenario]
            cx.scatter([r["static_idle_share"] for r in rr], [r["ratio"] for r in rr], s=14, marker="x^"[i % 2],
                       color=f"C{4 + i}", label=f"Alibaba 2018 jobs, {scenario}")
        cx.axhline(1.0, color="grey", lw=0.8)
        cx.set_yscale("log")
        cx.set_xlabel("idle share of the static oracle's reservation")
        cx.set_ylabel("Jockey / static oracle, reserved resource-time")
        cx.legend(fontsize=7)
    fig.suptitle("Jockey mechanism scenario: the premise dial (dotted: the mechanism's σ)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def follow(m: Mechanism, seed: int, before: bool = False) -> dict[str, Any]:
    """One run of the mechanism job through the control loop: Jockey's allocation steps, its first
    decisions' reasons, and what every policy reserved and used on the same draws."""
    setup = replace(m.setup, seeds=(seed,))
    if before:
        setup = replace(setup, running_ages=False, per_run_weights=False)
    res = evaluate_job(m.spec, setup, example=True)
    ex = res["examples"]["nominal"]
    return {"deadline_s": ex["deadline_s"], "timeline": ex["jockey"]["timeline"], "reasons": ex["reasons"],
            "runs": {r["policy"]: {"finish_s": r["finish_s"], "reserved_cs": r["reserved_cs"], "busy_cs": r["busy_cs"],
                                   "allocation": r["allocation"]} for r in res["rows"]}}


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1]) if x.size > 2 else float("nan")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harvester.sim.jockey.mechanism", description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default=SCENARIO)
    ap.add_argument("--sweep", action="store_true", help="also sweep runtime_sigma over the scenario's sweep_sigma")
    add_number_list(ap, "--sigmas", float, default=None, help="override the sweep's σ values")
    add_number_list(ap, "--seeds", int, default=None, help="override the scenario's seeds")
    ap.add_argument("--seed", type=int, default=None,
                    help="override the scenario's seed (its prior runs, fitted model, C(p, a) and so D)")
    ap.add_argument("--follow", type=int, default=None, metavar="SEED",
                    help="follow one run (this seed) through the control loop, before and after issue 27's fixes")
    ap.add_argument("--knee", action="store_true", help="also sweep the one-task stages' length (sweep_narrow)")
    ap.add_argument("--real", default=None, help="a trace evaluation's jockey-results.json.gz: its jobs on the knee dial")
    ap.add_argument("--traces", default=None, help="staged traces folder: place the Yahoo 2011 .tr traces on the dial")
    ap.add_argument("--figure", default=None, help="write the dial figure here (with --sweep)")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--before", action="store_true",
                    help="the decision code before issue 27: C(p, a) pooled per time sample, demand look-ahead blind to "
                         "running tasks' ages")
    add_processes(ap, 1)
    a = ap.parse_args(argv)
    m = load_mechanism(a.scenario)
    if a.seed is not None:
        m = replace(m, setup=replace(m.setup, seed=a.seed))
    if a.follow is not None:
        for label, before in (("before", True), ("after", False)):
            f = follow(m, a.follow, before)
            print(f"{label} issue 27, seed {a.follow}, D={f['deadline_s']:.0f}s; Jockey's steps (t, a): "
                  + ", ".join(f"({t:.0f}, {x})" for t, x in f["timeline"][:16]))
            for r in f["reasons"][:8]:
                print(f"    {r[:230]}")
            for pol, o in f["runs"].items():
                print(f"    {pol}: finish {o['finish_s']:.0f}s, reserved {o['reserved_cs']:.0f}, used {o['busy_cs']:.0f} "
                      f"container-s" + (f", allocation {o['allocation']}" if o["allocation"] else ""))
        return 0
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
        knee, real = None, None
        if a.knee:
            t0 = time.perf_counter()
            knee = sweep(m, list(m.sweep_narrow), a.processes, dial="narrow") + \
                sweep(m, list(m.sweep_factor), a.processes, dial="factor")
            out["sweep_knee"] = knee
            for p in knee:
                print(f"  {p['dial']} {p['value']:g}: static oracle idle share {_f(p['static_idle_share'])}, met "
                      f"{p['deadlines_met_fraction']:.3f} of {p['feasible_runs']} feasible, reserved "
                      f"{_f(p['reserved_vs_static_ratio'])}x oracle (a={p['static_oracle_allocation']})")
            print(f"knee sweep: {len(knee)} points in {time.perf_counter() - t0:.0f} s")
        if a.real:
            from harvester.sim.jockey.report import load_results
            real = trace_jobs_on_dial(load_results(Path(a.real)))
            out["real_jobs"] = real
            for scenario in sorted({r["scenario"] for r in real}):
                rr = [r for r in real if r["scenario"] == scenario]
                idle = np.array([r["static_idle_share"] for r in rr])
                ratio = np.array([r["ratio"] for r in rr])
                print(f"real ({scenario}): {len(rr)} jobs, static oracle idle share median {np.median(idle):.3f} "
                      f"[{np.percentile(idle, 25):.3f}, {np.percentile(idle, 75):.3f}]; Jockey/oracle per job median "
                      f"{np.median(ratio):.3f}; Spearman(idle, ratio) {_spearman(idle, ratio):.2f}")
        if a.figure:
            marks = {k: v for k, v in (("Yahoo YH1", out.get("trace_sigma_YH1_sub", {}).get("median")),
                                       ("Yahoo YH2", out.get("trace_sigma_YH2_sub", {}).get("median"))) if v is not None}
            marks["Alibaba evaluation (assumed)"] = Variability().runtime_sigma
            figure(pts, marks, m.runtime_sigma, Path(a.figure), knee, real)
            print(f"wrote {a.figure}")
    if a.out:
        Path(a.out).write_text(json.dumps(out, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

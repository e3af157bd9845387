"""Algorithm 1's mechanism run, its premise dial and the real traces' place on it (issue 27).

Helper of bench/harvesting.py (not a benchmark itself; the underscore keeps `make bench` off it) (`--mechanism-only`, `--dial`, `--real`); see
docs/evaluation/harvesting.md, "Where Algorithm 1 wins". Every run is an evaluation cell
(`harvester.sim.harvest.mechanism.compare`): the live loops + decisions.class_selection.

- mechanism: yarn-h vs yarn-pt on deploy/scenarios/mechanism-alg1.yaml, level 30 %, seeds 1, 2;
- dial: the same comparison at each `DIAL` point, x = the contrast (sim/harvest/premise.py);
- real: deploy/scenarios/harvesting-eval.yaml (real Bitbrains + Alibaba series, `--traces`) at
  50 %, seed 1, with the evaluation's within-sample variation (noise 0.10) and without it (the
  traces at their own 2-minute resolution), each placed on the dial by the same measure.
Saved runs (`--runs`) are reused, so a stopped bench resumes.
"""

from __future__ import annotations

from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from harvester.sim.harvest.evaluate import DEFAULT_SCENARIO
from harvester.sim.harvest.mechanism import DIAL, LEVEL, SCENARIO, compare
from harvester.sim.harvest.premise import premise_of
from harvester.sim.scenario import read_yaml

SEEDS = (1, 2)
REAL_LEVEL = 0.5
REAL_NOISE = (("real traces, eval noise 0.10", 0.10), ("real traces, own 2-min resolution", 0.0))


def _levels(level: float) -> dict[str, Any]:
    return {"tenants.mean_utilization": {p: level for p in ("periodic", "constant", "unpredictable")}}


def mechanism(executor: Executor | None, runs: Path | None) -> dict[str, Any]:
    c = compare(seeds=SEEDS, executor=executor, runs_dir=runs)
    p = premise_of(read_yaml(SCENARIO), where=str(SCENARIO), overrides={**_levels(LEVEL), "seed": SEEDS[0]})
    return {
        "mechanism_yarn_h_vs_pt_job_time_ratio": c.job_time_ratio,
        "mechanism_yarn_h_vs_pt_kills_ratio": c.kills_ratio,
        "mechanism_yarn_h_vs_pt_unmet_primary_ratio": c.unmet_primary_ratio,
        "mechanism_calm_share": p.calm_share,
        "mechanism_contrast": p.contrast,
        "mechanism_runs": list(c.per_seed),
    }


def dial(executor: Executor | None, runs: Path | None) -> list[dict[str, Any]]:
    data = read_yaml(SCENARIO)
    out = []
    for label, over in DIAL:
        c = compare(seeds=SEEDS, overrides=over, executor=executor, runs_dir=runs)
        p = premise_of(data, where=str(SCENARIO), overrides={**over, **_levels(LEVEL), "seed": SEEDS[0]})
        out.append({"label": label, "overrides": dict(over), "contrast": p.contrast, "calm_share": p.calm_share,
                    "rise_q95_median": p.rise_q95_median, "job_time_ratio": c.job_time_ratio,
                    "kills_ratio": c.kills_ratio, "unmet_primary_ratio": c.unmet_primary_ratio,
                    "kills": {k: v["task_kills"] for k, v in c.per_policy.items()}})
        print(f"  dial {label:40} contrast {p.contrast:.2f} calm {p.calm_share:.2f}  job time x{c.job_time_ratio:.3f}  kills x{c.kills_ratio:.3f}",
              flush=True)
    return out


def real(executor: Executor | None, runs: Path | None, traces: str) -> list[dict[str, Any]]:
    data = read_yaml(DEFAULT_SCENARIO)
    out = []
    for label, sigma in REAL_NOISE:
        over = {"tenants.noise.sigma": sigma}
        c = compare(scenario=DEFAULT_SCENARIO, level=REAL_LEVEL, seeds=(1,), overrides=over, executor=executor,
                    traces_dir=traces, runs_dir=runs)
        p = premise_of(data, where=str(DEFAULT_SCENARIO), overrides={**over, **_levels(REAL_LEVEL), "seed": 1},
                       traces_dir=traces)
        out.append({"label": label, "noise_sigma": sigma, "level": REAL_LEVEL, "contrast": p.contrast, "calm_share": p.calm_share,
                    "calm_share_by_pattern": dict(p.by_pattern), "rise_q95_median": p.rise_q95_median,
                    "job_time_ratio": c.job_time_ratio, "kills_ratio": c.kills_ratio,
                    "unmet_primary_ratio": c.unmet_primary_ratio,
                    "kills": {k: v["task_kills"] for k, v in c.per_policy.items()}})
        print(f"  {label:40} contrast {p.contrast:.2f} calm {p.calm_share:.2f}  job time x{c.job_time_ratio:.3f}  kills x{c.kills_ratio:.3f}",
              flush=True)
    return out


def plot(points: list[dict[str, Any]], reals: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    mix = [p for p in points if "noise" not in p["label"]]
    noise = [p for p in points if "noise" in p["label"] or p["label"].startswith("mechanism")]
    for series, marker, name in ((mix, "o", "tenant mix (noise 0.02)"), (noise, "s", "within-sample noise 0.02→0.30")):
        s = sorted(series, key=lambda p: p["contrast"])
        ax.plot([p["contrast"] for p in s], [p["kills_ratio"] for p in s], marker=marker, label=f"kills, {name}")
        ax.plot([p["contrast"] for p in s], [p["job_time_ratio"] for p in s], marker=marker, linestyle="--",
                label=f"avg job time, {name}")
    for r in reals:
        ax.scatter([r["contrast"]], [r["kills_ratio"]], marker="*", s=160, zorder=5)
        ax.annotate(f"{r['label']}\nkills ×{r['kills_ratio']:.2f}, job ×{r['job_time_ratio']:.2f}",
                    (r["contrast"], r["kills_ratio"]), textcoords="offset points",
                    xytext=(-150, -30) if r["contrast"] > 0.6 else (6, -28), fontsize=7)
    for p in points:
        ax.annotate(p["label"].split(" (")[0], (p["contrast"], p["kills_ratio"]), textcoords="offset points",
                    xytext=(4, 4), fontsize=6, color="dimgrey")
    ax.axhline(0.7, color="grey", linewidth=0.8, linestyle=":")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("premise: contrast = 1 − q95 1-h rise of the calmest third of servers / of all servers")
    ax.set_ylabel("yarn-h / yarn-pt")
    ax.set_xlim(0.2, 1.0)
    ax.set_title("Algorithm 1's premise dial (mechanism scenario → real traces)", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)

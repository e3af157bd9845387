"""Tables and the figure of the Jockey evaluation (docs/evaluation/jockey.md)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

POLICIES = ("jockey", "jockey-no-cap", "amdahl", "static-model", "static-oracle", "max")


def table(result: dict[str, Any]) -> str:
    """Markdown: per scenario and policy, deadlines met, lateness and reserved vs the static oracle."""
    lines = ["| scenario | policy | deadlines met | met where feasible | worst miss (late by) | reserved vs static oracle | changes/run |",
             "|---|---|---|---|---|---|---|"]
    for scenario, per in result["summary"].items():
        for pol, s in per.items():
            if not isinstance(s, dict):
                continue
            ratio = "—" if s["reserved_vs_static_oracle"] is None else f"{s['reserved_vs_static_oracle']:.3f}"
            worst = "—" if s["met"] == s["runs"] else _pct(s["max_lateness"])
            fe = f"{s['feasible_met']}/{s['feasible_runs']}"
            lines.append(f"| {scenario} | {pol} | {s['met']}/{s['runs']} ({100 * s['met_fraction']:.1f} %) | {fe} | {worst} | "
                         f"{ratio} | {s['mean_changes']:.1f} |")
    return "\n".join(lines)


def _pct(x: float) -> str:
    return "never finished" if not math.isfinite(x) else f"{100 * x:.1f} %"


def figure(result: dict[str, Any], path: str | Path) -> None:
    """Left: one run's allocation over time per policy. Middle: finish/deadline CDF per policy.
    Right: reserved resource-time of Jockey / static oracle per (job, deadline)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    scen = "injected" if any(r["scenario"] == "injected" for r in rows) else rows[0]["scenario"]
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.6))
    ex = result.get("examples", {}).get(scen)
    colors = {"jockey": "tab:blue", "jockey-no-cap": "tab:purple", "amdahl": "tab:orange", "static-model": "tab:gray", "static-oracle": "tab:green",
              "max": "tab:red"}
    if ex:
        d = ex["deadline_s"]
        for pol in ("jockey", "amdahl", "static-oracle"):
            if pol not in ex:
                continue
            tl, fin = ex[pol]["timeline"], ex[pol]["finish_s"]
            end = fin if fin is not None and math.isfinite(fin) else d * 1.5
            xs = [t / d for t, _ in tl] + [end / d]
            ys = [a for _, a in tl] + [tl[-1][1]]
            ax[0].step(xs, ys, where="post", color=colors[pol], label=f"{pol} (ends {end / d:.2f}·D)")
        ax[0].axvline(1.0, color="k", ls="--", lw=1, label="deadline D")
        ax[0].set_xlabel("time / deadline")
        ax[0].set_ylabel("guaranteed containers")
        ax[0].set_title(f"one run ({result['jobs'][0]['job']}, {scen})", fontsize=10)
        ax[0].legend(fontsize=8)
    for pol in POLICIES:
        x = np.sort([(r["finish_s"] if r["finish_s"] is not None else math.inf) / r["deadline_s"]
                     for r in rows if r["scenario"] == scen and r["policy"] == pol])
        if x.size:
            ax[1].step(np.minimum(x, 3.0), np.arange(1, x.size + 1) / x.size, where="post", color=colors[pol], label=pol)
    ax[1].axvline(1.0, color="k", ls="--", lw=1)
    ax[1].set_xlabel("finish / deadline (≤ 1: met)")
    ax[1].set_ylabel("fraction of runs")
    ax[1].set_title(f"completion vs deadline ({scen})", fontsize=10)
    ax[1].legend(fontsize=8)
    pairs: dict[tuple[str, float], list[float]] = {}
    oracle = {(r["job"], r["factor"], r["seed"]): r["reserved_cs"] for r in rows
              if r["scenario"] == scen and r["policy"] == "static-oracle"}
    for r in rows:
        key = (r["job"], r["factor"], r["seed"])
        if r["scenario"] == scen and r["policy"] == "jockey" and key in oracle:
            pairs.setdefault((r["job"], r["factor"]), [0.0, 0.0])
            pairs[(r["job"], r["factor"])][0] += r["reserved_cs"]
            pairs[(r["job"], r["factor"])][1] += oracle[key]
    ratios = np.sort([a / b for a, b in pairs.values() if b > 0])
    if ratios.size:
        ax[2].bar(np.arange(ratios.size), ratios, color="tab:blue")
        ax[2].axhline(1.0, color="tab:green", ls="--", lw=1, label="static oracle")
        ax[2].set_xlabel("(job, deadline), sorted")
        ax[2].set_ylabel("reserved container-s: Jockey / static oracle")
        ax[2].set_title(f"reserved resource-time ({scen})", fontsize=10)
        ax[2].legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)

"""Tables and the figure of the Jockey evaluation (docs/evaluation/jockey.md)."""

from __future__ import annotations

import gzip
import json
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


def _pct(x: float | None) -> str:
    """Lateness as a percentage; None (JSON for infinity) or inf: a job that failed."""
    return "never finished" if x is None or not math.isfinite(x) else f"{100 * x:.1f} %"


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
    for pol in reversed(POLICIES):  # Jockey drawn last, on top
        x = np.sort([(r["finish_s"] if r["finish_s"] is not None else math.inf) / r["deadline_s"]
                     for r in rows if r["scenario"] == scen and r["policy"] == pol])
        if x.size:
            ax[1].step(np.minimum(x, 1.6), np.arange(1, x.size + 1) / x.size, where="post", color=colors[pol], label=pol,
                       lw=2.2 if pol == "jockey" else 1.2)
    ax[1].axvline(1.0, color="k", ls="--", lw=1)
    ax[1].set_xlim(0.1, 1.6)
    ax[1].set_xlabel("finish / deadline (≤ 1: met)")
    ax[1].set_ylabel("fraction of runs")
    ax[1].set_title(f"completion vs deadline ({scen})", fontsize=10)
    ax[1].legend(fontsize=8)
    by_run = {(r["job"], r["factor"], r["seed"], r["policy"]): r["reserved_cs"] for r in rows if r["scenario"] == scen}
    pairs: dict[tuple[str, float], list[float]] = {}
    for (job, factor, seed, pol), v in by_run.items():
        if pol == "jockey" and (job, factor, seed, "static-oracle") in by_run:
            acc = pairs.setdefault((job, factor), [0.0, 0.0, 0.0])
            acc[0] += v
            acc[1] += by_run[(job, factor, seed, "static-oracle")]
            acc[2] += by_run.get((job, factor, seed, "static-model"), math.nan)
    vals = sorted(((a / b, a / c) for a, b, c in pairs.values() if b > 0), key=lambda t: t[0])
    if vals:
        idx = np.arange(len(vals))
        ax[2].bar(idx, [v[0] for v in vals], color="tab:blue", label="Jockey / static oracle")
        ax[2].plot(idx, [v[1] for v in vals], "o", ms=3, color="tab:gray", label="Jockey / static-model")
        ax[2].axhline(1.0, color="k", ls="--", lw=1)
        ax[2].set_yscale("log")
        ax[2].set_xlabel("(job, deadline), sorted by the oracle ratio")
        ax[2].set_ylabel("reserved container-seconds, ratio")
        ax[2].set_title(f"reserved resource-time per (job, deadline) ({scen})", fontsize=10)
        ax[2].legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save_results(result: dict[str, Any], path: str | Path) -> None:
    """gzip'd JSON; rows as columns + data (one list per run), times rounded to 0.1 s."""
    rows = result["rows"]
    cols = list(rows[0]) if rows else []
    packed = [[round(v, 1) if isinstance(v, float) else v for v in (r[c] for c in cols)] for r in rows]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump({**result, "rows": {"columns": cols, "data": packed}}, fh, separators=(",", ":"))


def load_results(path: str | Path) -> dict[str, Any]:
    """The results file `save_results` wrote (rows back to one dict per run)."""
    p = Path(path)
    with (gzip.open(p, "rt", encoding="utf-8") if p.suffix == ".gz" else p.open(encoding="utf-8")) as fh:
        result = json.load(fh)
    rows = result.get("rows")
    if isinstance(rows, dict):
        result["rows"] = [dict(zip(rows["columns"], d)) for d in rows["data"]]
    return result


def main(argv: list[str] | None = None) -> int:
    """`python -m harvester.sim.jockey.report RESULTS.json.gz OUT.png`: redraw the figure, print the table."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m harvester.sim.jockey.report RESULTS.json.gz OUT.png", file=sys.stderr)
        return 2
    result = load_results(args[0])
    figure(result, args[1])
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The figure of the Morpheus evaluation (docs/evaluation/img/morpheus*.png), from the results
document report.py writes: violations against footprint per policy and α; how the missed runs
were served; and, with a sweep, misses against footprint per plan capacity (§9.1 Fig. 10a)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from harvester.sim.morpheus.results import RESERVED_LATE, label, main_alpha, rows_of, sweep_summary
from harvester.sim.morpheus.runner import CUT, EARLY, LATE_INPUT, NO_RESERVATION

STATIC_LATE = "static baseline, finished after d_j"
HOW = (STATIC_LATE, RESERVED_LATE, NO_RESERVATION, EARLY, LATE_INPUT, CUT)
FAMILY = {"user": ("s", "tab:red"), "p95": ("D", "tab:green"), "morpheus": ("o", "tab:blue"),
          "morpheus+dra": ("^", "tab:purple"), "greedy": ("v", "tab:gray"), "greedy+dra": ("<", "tab:orange")}


def figure(doc: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = rows_of(doc)
    main = main_alpha(doc)
    sweep = sweep_summary(doc.get("sweep") or [])
    fig, axes = plt.subplots(1, 3 if sweep else 2, figsize=(17 if sweep else 12, 4.6))
    ax1, ax2 = axes[0], axes[1]
    for name, s in doc["summary"].items():
        fam = name.split("[")[0]
        marker, color = FAMILY.get(fam, ("x", "black"))
        x = s.get("footprint_vcores_vs_p95")
        ax1.scatter([x], [s["violation_pct"]], marker=marker, color=color, s=50, label=fam)
        if "[" in name:
            ax1.annotate(name[name.index("=") + 1:-1], (x, s["violation_pct"]), fontsize=7, xytext=(4, 2),
                         textcoords="offset points")
    handles, labels = ax1.get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    ax1.legend(seen.values(), seen.keys(), fontsize=8)
    ax1.set_xscale("log")
    ax1.set_ylim(bottom=0)
    ax1.set_xlabel("daily peak vcores / p95 static's (Σ over days; labels: α)")
    ax1.set_ylabel("runs missing d_j, worst case (%)")
    ax1.set_title("violations vs footprint")
    names = ["user", "p95"] + [label(p, main) for p in ("morpheus", "morpheus+dra", "greedy", "greedy+dra")]
    names = [n for n in names if n in doc["summary"]]
    bottom = np.zeros(len(names))
    for how in HOW:
        n = np.array([sum(1 for r in rows if label(r["policy"], r["alpha"]) == nm and not r["met"]
                          and (r["note"] or (STATIC_LATE if r["policy"] in ("user", "p95") else RESERVED_LATE)) == how)
                      for nm in names], dtype=float)
        ax2.bar(range(len(names)), n, bottom=bottom, label=how)
        bottom += n
    ax2.set_xticks(range(len(names)), [n.replace("[", "\n[") for n in names], fontsize=7)
    ax2.set_ylabel(f"missed runs (of {sum(1 for r in rows if r['policy'] == 'user')})")
    ax2.set_title(f"how the missed runs were served (α = {main:g})")
    ax2.legend(fontsize=7)
    if sweep:
        ax3 = axes[2]
        for pol in ("morpheus", "morpheus+dra"):
            pts = [r for r in sweep if r["policy"] == pol]
            marker, color = FAMILY[pol]
            ax3.plot([r["footprint_vs_p95"] for r in pts], [r["missed"] for r in pts], marker=marker, color=color,
                     label=pol)
            for r in pts:
                ax3.annotate(f"{r['capacity_factor']:g}", (r["footprint_vs_p95"], r["missed"]), fontsize=7,
                             xytext=(4, 2), textcoords="offset points")
        for base, style in (("user", ":"), ("p95", "--")):
            if base in doc["summary"]:
                ax3.axhline(doc["summary"][base]["violations"], linestyle=style, color=FAMILY[base][1],
                            label=f"{base} static misses")
        ax3.set_xlabel("daily peak vcores / p95 static's (labels: plan capacity × p95's largest peak)")
        ax3.set_ylabel("missed runs")
        ax3.set_title(f"cluster-size sweep (Fig. 10a; α = {main:g})")
        ax3.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)

"""Tables, JSON and the figure of the Morpheus evaluation (docs/evaluation/morpheus-results.{md,json},
docs/evaluation/img/morpheus.png).

    python -m harvester.sim.morpheus.report docs/evaluation/morpheus-results.json [out.png]   # re-print / redraw
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from harvester.sim.morpheus.evaluate import PAPER, EvalPlan, SeedResult
from harvester.sim.morpheus.runner import NO_RESERVATION

ROW_COLUMNS = ("seed", "day", "job", "policy", "alpha", "met", "late_s", "held_cs", "grants", "note")


def label(policy: str, alpha: float | None) -> str:
    return policy if alpha is None else f"{policy}[α={alpha:g}]"


def summary(rows: Iterable[dict[str, Any]], days: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per policy label: runs, violations, container-hours held, grants, and footprint (Σ over
    (seed, day) of the day's peak) with its ratio to the user baseline and to p95."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        s = out[label(r["policy"], r["alpha"])]
        s["runs"] += 1
        s["violations"] += 0 if r["met"] else 1
        s["container_hours"] += r["held_cs"] / 3600.0
        s["grants"] += r["grants"]
    for d in days:
        s = out[label(d["policy"], d["alpha"])]
        s["peak_memory_mb_sum"] += d["peak_memory_mb"]
        s["peak_vcores_sum"] += d["peak_vcores"]
        s["day_count"] += 1
        s["p95_same_jobs_peak_vcores_sum"] += d.get("p95_same_jobs_peak_vcores", d["peak_vcores"])
    for name, s in out.items():
        same = s.pop("p95_same_jobs_peak_vcores_sum")
        s["footprint_vcores_vs_p95_same_jobs"] = s["peak_vcores_sum"] / same if same else None
        s["violation_pct"] = 100.0 * s["violations"] / s["runs"] if s["runs"] else 0.0
        for base in ("user", "p95"):
            b = out.get(base)
            if b is None:
                continue
            # None when the policy missed nothing (the ratio is unbounded)
            s[f"fewer_violations_vs_{base}"] = b["violations"] / s["violations"] if s["violations"] else None
            for res in ("memory_mb", "vcores"):
                s[f"footprint_{res}_vs_{base}"] = s[f"peak_{res}_sum"] / b[f"peak_{res}_sum"] if b[f"peak_{res}_sum"] else None
    return {k: dict(v) for k, v in out.items()}


def order(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda n: (n not in ("user", "p95"), n != "user", "dra" in n, n))


def _x(v: float | None) -> str:
    return "no violations" if v is None else f"{v:.1f}×"


def _r(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def headline_table(summ: dict[str, dict[str, float]]) -> str:
    head = ("| policy | runs | SLO violations | % | fewer than user | fewer than p95 | footprint (peak vcores) vs user "
            "| vs p95 | vs p95 on the jobs it reserved | peak memory vs user | container-hours | DRA grants |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for n in order(summ):
        s = summ[n]
        lines.append(f"| {n} | {s['runs']:.0f} | {s['violations']:.0f} | {s['violation_pct']:.1f} | "
                     f"{_x(s.get('fewer_violations_vs_user'))} | {_x(s.get('fewer_violations_vs_p95'))} | "
                     f"{_r(s.get('footprint_vcores_vs_user'))} | {_r(s.get('footprint_vcores_vs_p95'))} | "
                     f"{_r(s.get('footprint_vcores_vs_p95_same_jobs'))} | "
                     f"{_r(s.get('footprint_memory_mb_vs_user'))} | {s['container_hours']:.0f} | {s['grants']:.0f} |")
    return head + "\n".join(lines) + "\n"


def per_job_table(rows: Sequence[dict[str, Any]], alpha: float) -> str:
    cols = ["user", "p95", label("morpheus", alpha), label("morpheus+dra", alpha)]
    miss: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in rows:
        n = label(r["policy"], r["alpha"])
        if n in cols:
            m = miss[r["job"]][n]
            m[0] += 0 if r["met"] else 1
            m[1] += 1
    head = "| job | " + " | ".join(f"{c} missed" for c in cols) + " |\n|---|" + "---|" * len(cols) + "\n"
    return head + "\n".join(f"| {j} | " + " | ".join(f"{miss[j][c][0]}/{miss[j][c][1]}" for c in cols) + " |"
                            for j in sorted(miss)) + "\n"


def notes_table(rows: Sequence[dict[str, Any]]) -> str:
    count: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        if not r["met"]:
            count[(label(r["policy"], r["alpha"]), r["note"] or "finished after d_j")] += 1
    head = "| policy | why the deadline was missed | runs |\n|---|---|---|\n"
    rank = {n: i for i, n in enumerate(order({p for p, _ in count}))}
    return head + "\n".join(f"| {p} | {w} | {n} |" for (p, w), n in sorted(count.items(), key=lambda x: (rank[x[0][0]], x[0][1]))) + "\n"


def merge(results: Sequence[SeedResult]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"rows": [], "days": [], "slos": [], "excluded": [], "jobs": []}
    for r in results:
        for k in out:
            out[k] += getattr(r, k)
    return out


def write_report(out_dir: Path, plan: EvalPlan, results: Sequence[SeedResult], command: str) -> list[Path]:
    data = merge(results)
    summ = summary(data["rows"], data["days"])
    out_dir.mkdir(parents=True, exist_ok=True)
    setup = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(plan).items()}
    doc = {"command": command, "paper": PAPER, "setup": setup, "summary": summ, "jobs": data["jobs"],
           "slos": data["slos"], "excluded": data["excluded"], "days": data["days"],
           "rows": {"columns": list(ROW_COLUMNS), "data": [[r[c] for c in ROW_COLUMNS] for r in data["rows"]]}}
    js = out_dir / "morpheus-results.json"
    js.write_text(json.dumps(doc, indent=None, default=str, allow_nan=False) + "\n", encoding="utf-8")
    md = out_dir / "morpheus-results.md"
    md.write_text(render(doc), encoding="utf-8")
    png = out_dir / "img" / "morpheus.png"
    figure(doc, png)
    return [md, js, png]


REASONS = ("finished after d_j", NO_RESERVATION, "input after the window", "window ended")
FAMILY = {"user": ("s", "tab:red"), "p95": ("D", "tab:green"), "morpheus": ("o", "tab:blue"),
          "morpheus+dra": ("^", "tab:purple"), "greedy": ("v", "tab:gray"), "greedy+dra": ("<", "tab:orange")}


def figure(doc: dict[str, Any], path: Path) -> None:
    """Left: violations against footprint (vs p95 on the same jobs) per policy and α. Right: why
    the runs missed, at the main α."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [dict(zip(doc["rows"]["columns"], r)) for r in doc["rows"]["data"]]
    alphas = doc["setup"]["alphas"]
    main = 0.01 if 0.01 in alphas else alphas[0]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
    for name, s in doc["summary"].items():
        fam = name.split("[")[0]
        marker, color = FAMILY.get(fam, ("x", "black"))
        x = s.get("footprint_vcores_vs_p95_same_jobs") or s.get("footprint_vcores_vs_p95")
        ax1.scatter([x], [s["violation_pct"]], marker=marker, color=color, s=50, label=fam)
        if "[" in name:
            ax1.annotate(name[name.index("=") + 1:-1], (x, s["violation_pct"]), fontsize=7, xytext=(4, 2),
                         textcoords="offset points")
    handles, labels = ax1.get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    ax1.legend(seen.values(), seen.keys(), fontsize=8)
    ax1.set_xscale("log")
    ax1.set_ylim(bottom=0)
    ax1.set_xlabel("daily peak vcores / p95 static's on the same jobs (Σ over days; labels: α)")
    ax1.set_ylabel("runs missing d_j, worst case (%)")
    ax1.set_title("violations vs footprint")
    names = ["user", "p95"] + [label(p, main) for p in ("morpheus", "morpheus+dra", "greedy", "greedy+dra")]
    bottom = np.zeros(len(names))
    for reason in REASONS:
        n = np.array([sum(1 for r in rows if label(r["policy"], r["alpha"]) == nm and not r["met"]
                          and (r["note"] or "finished after d_j") == reason) for nm in names], dtype=float)
        ax2.bar(range(len(names)), n, bottom=bottom, label=reason)
        bottom += n
    ax2.set_xticks(range(len(names)), [n.replace("[", "\n[") for n in names], fontsize=7)
    ax2.set_ylabel(f"missed runs (of {sum(1 for r in rows if r['policy'] == 'user')})")
    ax2.set_title(f"why runs missed (α = {main:g})")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def render(doc: dict[str, Any]) -> str:
    rows = [dict(zip(doc["rows"]["columns"], r)) for r in doc["rows"]["data"]]
    alphas = doc["setup"]["alphas"]
    main = 0.01 if 0.01 in alphas else alphas[0]
    parts = [f"# Morpheus evaluation — generated results\n\nGenerated by `{doc['command']}`; the report is "
             f"[morpheus.md](morpheus.md). Paper: {doc['paper']}.\n",
             f"Seeds {', '.join(str(s) for s in doc['setup']['seeds'])}; {len({j['job'] for j in doc['jobs']})} daily jobs; "
             f"{len(doc['excluded'])} (seed, day, job[, α]) not evaluated (no actionable SLO or no skyline).\n",
             "## All policies\n", headline_table(doc["summary"]),
             f"\n## Per job (α = {main:g}): missed / runs\n", per_job_table(rows, main),
             "\n## Why deadlines were missed\n", notes_table(rows)]
    if doc["excluded"]:
        parts += ["\n## Not evaluated\n", "| seed | day | job | why |\n|---|---|---|---|\n" +
                  "\n".join(f"| {e['seed']} | {e['day']} | {e['job']} | {e['why']} |" for e in doc["excluded"]) + "\n"]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (1, 2):
        print("usage: python -m harvester.sim.morpheus.report docs/evaluation/morpheus-results.json [out.png]",
              file=sys.stderr)
        return 2
    doc = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    print(render(doc))
    if len(args) == 2:
        figure(doc, Path(args[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

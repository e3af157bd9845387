"""Markdown tables, JSON and PNG figures of the Phoenix evaluation (docs/evaluation/phoenix*.md)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from harvester.sim.phoenix.evaluate import MAIN, Plan, Row, geomean, ratios, rows_json, summary  # noqa: E402
from harvester.sim.phoenix.synthesis import TABLE_II  # noqa: E402

#: Paper 003's numbers the report sets ours beside (abstract, §I, §III-B, Table II).
PAPER = {
    "p99_ratio_vs_eagle_c": 1.9,          # "improves the 99th percentile job response times on an average by 1.9x"
    "p90_ratio_vs_hawk_c": 4.5,           # "... like Hawk, it improves the 90th and 99th percentile ... by 4.5x and 5x"
    "p99_ratio_vs_hawk_c": 5.0,
    "crv_load_threshold": 0.8,            # the Phoenix-derived simulator reorders by CRV above 80% load
    "eagle_c_p99_increase_from_constraints": 1.7,  # §III-B: "99th percentile ... gone up ... by an average of 1.7x"
}


def _mean(rows: Sequence[Row], part: str, pct: str) -> float:
    vals = [getattr(r, part)[pct] for r in rows if not math.isnan(getattr(r, part)[pct])]
    return float(np.mean(vals)) if vals else math.nan


def _f(x: float, digits: int = 1) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def policy_table(rows: Sequence[Row], trace: str, load: float, policies: Sequence[str]) -> str:
    head = ("| policy | short p50 (s) | short p90 | short p99 | constrained p99 | unconstrained p99 | long p50 | long p99 "
            "| relaxed jobs | Eagle-C p99 / p99 |\n|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for p in policies:
        rs = [r for r in rows if (r.trace, r.load, r.policy) == (trace, load, p)]
        if not rs:
            continue
        vs = geomean(ratios([r for r in rows if (r.trace, r.load) == (trace, load)], "Eagle-C", target=p))
        lines.append(f"| {p} | {_f(_mean(rs, 'short', 'p50'))} | {_f(_mean(rs, 'short', 'p90'))} | "
                     f"{_f(_mean(rs, 'short', 'p99'))} | {_f(_mean(rs, 'constrained', 'p99'))} | "
                     f"{_f(_mean(rs, 'unconstrained', 'p99'))} | {_f(_mean(rs, 'long', 'p50'), 0)} | "
                     f"{_f(_mean(rs, 'long', 'p99'), 0)} | {np.mean([r.relaxed_jobs for r in rs]):.0f} | "
                     f"{'1.00' if p == 'Eagle-C' else _f(vs, 2)} |")
    return head + "\n".join(lines) + "\n"


def table_ii(rows: Sequence[Row]) -> str:
    eagle = [r for r in rows if r.policy == "Eagle-C"]
    out = ("| Table II constraint | paper: relative slowdown (Google) | ours: Eagle-C mean response / unconstrained "
           "(short jobs) |\n|---|---|---|\n")
    for t in TABLE_II:
        ours = [r.slowdown_by_type[t.name] for r in eagle if t.name in r.slowdown_by_type]
        out += f"| {t.name} | {t.slowdown:.2f} | {_f(float(np.mean(ours)), 2) if ours else '—'} |\n"
    return out


def tail_table(rows: Sequence[Row], policies: Sequence[str]) -> str:
    out = ("| policy | short jobs at or above p99 (per run) | with hard constraints | only soft | unconstrained "
           "| median workers satisfying their constraints |\n|---|---|---|---|---|---|\n")
    for p in policies:
        rs = [r.tail for r in rows if r.policy == p and r.tail]
        if rs:
            out += (f"| {p} | {np.mean([t['jobs'] for t in rs]):.0f} | {np.mean([t['hard_share'] for t in rs]):.0%} | "
                    f"{np.mean([t['soft_only_share'] for t in rs]):.0%} | "
                    f"{np.mean([t['unconstrained_share'] for t in rs]):.0%} | "
                    f"{np.median([t['median_workers_satisfying'] for t in rs]):.0f} |\n")
    return out


def load_table(rows: Sequence[Row], policies: Sequence[str] = ("Eagle-C", "Phoenix")) -> str:
    """The measured load: busy share of the workers sampled every 5 s (means over seeds)."""
    out = ("| trace, offered load | policy | busy share while jobs arrive | 5 s samples above 80% while jobs arrive "
           "| busy share over the run |\n|---|---|---|---|---|\n")
    for trace, load in sorted({(r.trace, r.load) for r in rows}):
        for p in policies:
            us = [r.utilization for r in rows if (r.trace, r.load, r.policy) == (trace, load, p) and r.utilization]
            if us:
                out += (f"| {trace}, {load:g} | {p} | {np.mean([u['busy_mean_arrivals'] for u in us]):.0%} | "
                        f"{np.mean([u['busy_over_80_arrivals'] for u in us]):.0%} | "
                        f"{np.mean([u['busy_mean_run'] for u in us]):.0%} |\n")
    return out


def plot(rows: Sequence[Row], path: Path) -> Path:
    """Left: short-job p99 per policy for each trace and load. Right: CDF of short-job response
    times of the first trace, highest load, first seed."""
    fig, (ax, cx) = plt.subplots(1, 2, figsize=(12, 4.2))
    groups = sorted({(r.trace, r.load) for r in rows})
    width = 0.8 / len(MAIN)
    for i, p in enumerate(MAIN):
        vals = [_mean([r for r in rows if (r.trace, r.load, r.policy) == (*g, p)], "short", "p99") for g in groups]
        ax.bar(np.arange(len(groups)) + i * width, vals, width, label=p)
    ax.set_xticks(np.arange(len(groups)) + width * (len(MAIN) - 1) / 2, [f"{t}\nload {load:g}" for t, load in groups])
    ax.set_yscale("log")
    ax.set_ylabel("short-job p99 response time (s)")
    ax.set_title("99th percentile, short jobs (mean over seeds)")
    ax.legend(fontsize=8)
    trace = groups[0][0]
    load = max(g[1] for g in groups if g[0] == trace)
    seed = min(r.seed for r in rows)
    for p in MAIN:
        r = next((r for r in rows if (r.trace, r.load, r.seed, r.policy) == (trace, load, seed, p)), None)
        if r is not None and r.short_response_s:
            x = np.sort(np.asarray(r.short_response_s))
            cx.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=p)
    cx.set_xscale("log")
    cx.set_ylim(0.5, 1.0)
    cx.set_xlabel("short-job response time (s)")
    cx.set_ylabel("fraction of short jobs")
    cx.set_title(f"CDF (upper half), {trace}, load {load:g}, seed {seed}")
    cx.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_report(out: Path, plan: Plan, rows: Sequence[Row], command: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    figures = summary(rows)
    png = plot(rows, out / "img" / "phoenix-p99.png")
    doc: dict[str, Any] = {"command": command, "plan": {**asdict(plan), "traces_dir": str(plan.traces_dir)},
                           "summary": figures, "paper": PAPER, "rows": rows_json(rows)}
    js = out / "phoenix-results.json"
    js.write_text(json.dumps(doc, indent=1, sort_keys=True, default=float) + "\n", encoding="utf-8")
    md = out / "phoenix-results.md"
    parts = [f"# Phoenix evaluation — generated results\n\nGenerated by `{command}`; the report is "
             "[phoenix.md](phoenix.md). Times are seconds, means over seeds "
             f"{', '.join(str(s) for s in plan.seeds)}; ratios are geometric means over (trace, load, seed).\n",
             "## Headline\n\n| figure | paper | ours |\n|---|---|---|\n"
             f"| Eagle-C p99 / Phoenix p99 (short jobs) | {PAPER['p99_ratio_vs_eagle_c']} | "
             f"{_f(figures.get('p99_ratio_vs_eagle_c', math.nan), 2)} |\n"
             f"| Eagle-C p90 / Phoenix p90 | — | {_f(figures.get('p90_ratio_vs_eagle_c', math.nan), 2)} |\n"
             f"| Eagle-C p50 / Phoenix p50 | — | {_f(figures.get('p50_ratio_vs_eagle_c', math.nan), 2)} |\n"
             f"| Hawk-C p99 / Phoenix p99 | {PAPER['p99_ratio_vs_hawk_c']} | "
             f"{_f(figures.get('p99_ratio_vs_hawk_c', math.nan), 2)} |\n"
             f"| Hawk-C p90 / Phoenix p90 | {PAPER['p90_ratio_vs_hawk_c']} | "
             f"{_f(figures.get('p90_ratio_vs_hawk_c', math.nan), 2)} |\n"
             f"| Sparrow-C p99 / Phoenix p99 | — | {_f(figures.get('p99_ratio_vs_sparrow_c', math.nan), 2)} |\n"
             f"| FIFO p99 / Phoenix p99 | — | {_f(figures.get('p99_ratio_vs_fifo', math.nan), 2)} |\n"
             f"| Eagle-C p99 with / without constraints | {PAPER['eagle_c_p99_increase_from_constraints']} | "
             f"{_f(figures.get('eagle_c_p99_increase_from_constraints', math.nan), 2)} |\n"]
    for trace, load in sorted({(r.trace, r.load) for r in rows}):
        scale = next(r.time_scale for r in rows if (r.trace, r.load) == (trace, load))
        parts.append(f"## {trace}, load {load:g} (arrivals compressed x{scale:.2f})\n\n"
                     + policy_table(rows, trace, load, plan.policies))
    parts.append("## Measured load\n\n" + load_table(rows))
    parts.append("## Table II: slowdown of constrained short jobs under Eagle-C\n\n" + table_ii(rows))
    parts.append(f"## The slowest 1% of short jobs (all traces, loads and seeds)\n\nOut of "
                 f"{plan.workers} workers.\n\n" + tail_table(rows, plan.policies))
    parts.append(f"![short-job p99 and CDF](img/{png.name})\n")
    md.write_text("\n".join(parts), encoding="utf-8")
    return [md, js, png]

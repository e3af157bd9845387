"""Files of `harvester evaluate harvesting`: tables (Markdown), raw rows (JSON), figures (PNG).

Written into the output folder (docs/evaluation by default):
- `harvesting-results.md`: one table per utilization level (mean ± sd over seeds) with the
  paper's number beside ours, the per-cell table, and the `inputs:` lines of the runs;
- `harvesting-results.json`: every cell's summary row (job time lists left out) and the points;
- `img/harvesting-cdf-<level>.png`: CDF of job execution time per policy (all seeds pooled);
- `img/harvesting-vs-level.png`: average job time and task kills against the primary level.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from harvester.sim.harvest.evaluate import PAPER, POLICIES, Point, aggregate, job_times, level_of, versus, versus_stock
from harvester.sim.metrics.plots import plot_job_cdf, pyplot

NARRATIVE = Path(__file__).resolve().parents[3] / "docs" / "evaluation" / "harvesting.md"
COLUMNS = (
    ("avg job time (s)", "job_time_mean_s", "{:,.0f}"),
    ("p95 job time (s)", "job_time_p95_s", "{:,.0f}"),
    ("task kills", "task_kills", "{:,.0f}"),
    ("wasted batch core-h", "wasted_cpu_hours", "{:,.1f}"),
    ("unmet primary core-h", "primary_not_served_core_hours", "{:,.2f}"),
    ("harvested core-h", "harvested_cpu_hours", "{:,.0f}"),
    ("batch slowed core-h", "batch_slowed_core_hours", "{:,.1f}"),
    ("reserve coverage", "reserve_coverage", "{:.3f}"),
    ("unfinished jobs", "jobs_unfinished", "{:,.1f}"),
)


def _cell(p: Point, key: str, fmt: str) -> str:
    m, s = p.mean[key], p.sd[key]
    if math.isnan(m):
        return "-"
    return fmt.format(m) + (f" ± {fmt.format(s)}" if p.seeds > 1 else "")


def level_tables(points: Sequence[Point]) -> str:
    """One Markdown table per level: policies as rows, the level asked and reached, the paper's
    claim beside ours, and the ablation (yarn-h against yarn-pt: only placement differs)."""
    rel, abl = versus_stock(points), versus(points, "yarn-pt")
    out = []
    for level in sorted({p.level for p in points}):
        ps = [p for p in points if p.level == level]
        reached = [p.mean["level_achieved"] for p in ps if not math.isnan(p.mean["level_achieved"])]
        got = ps[0].mean["primary_utilization"]
        out.append(f"### Primary level {level:.0%} (demand reached {min(reached):.1%}–{max(reached):.1%} "
                   f"over the policies; primary CPU served {got:.1%} under {ps[0].policy}; "
                   f"{ps[0].seeds} seed(s), mean ± sd)\n" if reached else
                   f"### Primary level {level:.0%} ({ps[0].seeds} seed(s), mean ± sd)\n")
        head = ["policy", *(c[0] for c in COLUMNS), "avg job time vs stock", "vs yarn-pt", "paper (YARN-H vs stock)"]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for p in ps:
            r, a = rel.get((level, p.policy)), abl.get((level, p.policy))
            ours = "—" if p.policy == "stock-yarn" or r is None else f"{r:+.0%}"
            vs_pt = "—" if p.policy in ("stock-yarn", "yarn-pt") or a is None else f"{a:+.0%}"
            paper = "up to −90 %" if p.policy == "yarn-h" else ""
            out.append("| " + " | ".join([p.policy, *(_cell(p, k, f) for _, k, f in COLUMNS), ours, vs_pt, paper]) + " |")
        out.append("")
    return "\n".join(out)


def cell_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = ["level", "policy", "seed", "level reached", "primary util", "batch util", "jobs done/submitted",
            "avg job (s)", "kills (rm/guard/substrate)", "AM kills", "wasted CPU-h", "not served (core-h)",
            "coverage", "wall s"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        t = job_times(r)
        out.append("| " + " | ".join([
            f"{r['level']:.0%}", r["policy"], str(r["seed"]), f"{level_of(r)['level_achieved']:.1%}",
            f"{r['primary_utilization']:.1%}", f"{r['batch_utilization']:.1%}", f"{r['jobs_finished']}/{r['jobs_submitted']}",
            f"{t.mean():,.0f}" if t.size else "-",
            f"{r['task_kills_rm_overcommit']:,}/{r['task_kills_controller']:,}/{r['task_kills_primary']:,}",
            str(r.get("am_kills", 0)), f"{r['wasted_cpu_hours']:,.1f}", f"{r['primary_not_served_core_hours']:,.2f}",
            "-" if r.get("reserve_coverage") is None else f"{r['reserve_coverage']:.3f}", f"{r['wall_s']:.0f}",
        ]) + " |")
    return "\n".join(out)


def selection_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Algorithm 1's answers per level, summed over seeds (from each run's `policy_report`)."""
    kinds = ("one", "several", "none", "no class: placed anywhere")
    head = ["level", "runs", "classes", "one class", "several classes", "no class",
            "no class after the wait limit (placed anywhere; yarn-h waits 0 s)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for level in sorted({float(r["level"]) for r in rows}):
        reports = [r["policy_report"] for r in rows if r["level"] == level and "policy_report" in r]
        if not reports:
            continue
        counts = {k: sum(int(rep["selections"].get(k, 0)) for rep in reports) for k in kinds}
        classes = sorted({m["classes"] for rep in reports for m in rep["class_models"]})
        out.append("| " + " | ".join([f"{level:.0%}", str(len(reports)), ", ".join(map(str, classes)) or "-",
                                      *(f"{counts[k]:,}" for k in kinds)]) + " |")
    return "\n".join(out) if len(out) > 2 else ""


def deviations(rows: Sequence[Mapping[str, Any]]) -> str:
    """Every input a run changed or replaced because a flag allowed it (issue 16: loud inputs)."""
    seen = sorted({r.get("sources", {}).get("deviations", "") for r in rows} - {""})
    return "".join(f"DEVIATION: {d}\n" for d in seen)


def inputs_lines(rows: Sequence[Mapping[str, Any]]) -> str:
    """The `inputs:` lines of one run per policy (identical across levels and seeds but for the factor)."""
    seen: dict[str, str] = {}
    for r in rows:
        for k, v in r.get("sources", {}).items():
            seen.setdefault(k if k not in ("policy", "controller") else f"{k} ({r['policy']})", v)
    return "\n".join(["inputs:", *(f"  {k}: {v}" for k, v in seen.items())])


def plot_vs_level(points: Sequence[Point], path: Path) -> Path:
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for policy in [p for p in POLICIES if any(q.policy == p for q in points)]:
        ps = sorted((q for q in points if q.policy == policy), key=lambda q: q.level)
        x = [100 * q.mean["primary_utilization"] for q in ps]
        a1.errorbar(x, [q.mean["job_time_mean_s"] for q in ps], yerr=[q.sd["job_time_mean_s"] for q in ps],
                    marker="o", capsize=3, label=policy)
        a2.errorbar(x, [max(q.mean["task_kills"], 1.0) for q in ps], yerr=[q.sd["task_kills"] for q in ps],
                    marker="o", capsize=3, label=policy)
    a1.set_ylabel("average job execution time (s)")
    a2.set_ylabel("task kills (log)")
    a2.set_yscale("log")
    for a in (a1, a2):
        a.set_xlabel("mean primary CPU utilization (%)")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle("YARN-H evaluation: job time and kills vs primary utilization")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _narrative(out: Path) -> str:
    """The report's narrative (docs/evaluation/harvesting.md) relative to `out`, so the link
    holds wherever the tables are written (docs/evaluation, docs/evaluation/scale, ...)."""
    return Path(os.path.relpath(NARRATIVE, out.resolve())).as_posix()


def write_report(out: Path, rows: Sequence[Mapping[str, Any]], *, command: str, scenario: str,
                 not_run: Sequence[str] = ()) -> list[Path]:
    """Write the files of the module docstring; returns them. `not_run`: cells of the plan the
    report lacks (a report from saved runs), listed at the top."""
    img = out / "img"
    img.mkdir(parents=True, exist_ok=True)
    points = aggregate(rows)
    written = []
    for level in sorted({float(r["level"]) for r in rows}):
        series = {p: [float(x) for r in rows if r["level"] == level and r["policy"] == p for x in job_times(r)]
                  for p in POLICIES if any(r["level"] == level and r["policy"] == p for r in rows)}
        written.append(plot_job_cdf(series, img / f"harvesting-cdf-{round(level * 100):02d}.png",
                                    title=f"job execution time, primary level {level:.0%}"))
    written.append(plot_vs_level(points, img / "harvesting-vs-level.png"))
    md = out / "harvesting-results.md"
    md.write_text("\n".join([
        "# YARN-H evaluation: generated tables",
        "",
        f"Generated by `{command}` from `{scenario}`; the narrative is in [harvesting.md]({_narrative(out)}).",
        f"Paper: {PAPER}.",
        "",
        *([f"**Not run** ({len(not_run)} of the plan's {len(not_run) + len(rows)} cells; the tables average the "
           f"seeds each point has): " + "; ".join(not_run) + ".", ""] if not_run else []),
        *(["Inputs changed by flags:", "", "```", deviations(rows).rstrip(), "```", ""] if deviations(rows) else []),
        level_tables(points),
        "## Every run",
        "",
        cell_table(rows),
        "",
        "## Algorithm 1's answers (yarn-h runs)",
        "",
        "Every time a job asked (first placement, retries after 30 s, moves when its classes were full).",
        "",
        selection_table(rows) or "(no yarn-h runs)",
        "",
        "## Inputs (deviations asked for by flags are listed first)",
        "",
        "```",
        deviations(rows) + inputs_lines(rows),
        "```",
        "",
    ]), encoding="utf-8")
    js = out / "harvesting-results.json"
    js.write_text(json.dumps({
        "command": command, "scenario": scenario, "paper": PAPER, "not_run": list(not_run),
        "points": [{"level": p.level, "policy": p.policy, "seeds": p.seeds, "mean": dict(p.mean), "sd": dict(p.sd)}
                   for p in points],
        "cells": [{k: v for k, v in r.items() if k not in ("job_exec_s", "job_unfinished_s")} for r in rows],
    }, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [*written, md, js]

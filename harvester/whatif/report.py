"""The what-if report: whatif.json (the figures), whatif.md (tables, verdicts, coverage), figures.

Per policy (runs.metrics_of): harvested core-hours, task kills, wasted core-hours, unmet primary
core-hours, mean / p95 job time, SLO misses, footprint (peak allocated vcores); Morpheus's SLO
misses and footprint against static allocations; HDFS-H's blocks lost / unavailable against stock
placement. One verdict per technique (verdicts.py states the rule); the coverage of the history.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from harvester.config_harvesting import HarvestingSettings
from harvester.timefmt import iso_utc
from harvester.whatif.inputs import Coverage
from harvester.whatif.progress import write_atomic
from harvester.whatif.verdicts import MATERIAL, verdicts

COLUMNS = (("harvested_core_hours", "harvested core-h", "{:,.1f}"), ("task_kills", "task kills", "{:,.0f}"),
           ("wasted_core_hours", "wasted core-h", "{:,.1f}"), ("unmet_primary_core_hours", "unmet primary core-h", "{:,.1f}"),
           ("job_time_mean_s", "mean job time (s)", "{:,.0f}"), ("job_time_p95_s", "p95 job time (s)", "{:,.0f}"),
           ("jobs_unfinished", "unfinished jobs", "{:,.0f}"), ("slo_misses", "SLO misses", "{:,.0f}"),
           ("footprint_peak_vcores", "peak batch vcores", "{:,.0f}"))


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def figures_for_verdicts(policies: Mapping[str, Mapping[str, Any]], extras: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per-policy figures keyed as verdicts.TECHNIQUES expects (YARN runs at the current settings,
    Morpheus/static and HDFS-H/stock from their comparisons)."""
    out = {k: dict(v) for k, v in policies.items()}
    m = extras.get("morpheus") or {}
    if m.get("measured"):
        out["morpheus"] = {"slo_misses": m["morpheus"]["slo_misses"], "footprint": m["morpheus"]["footprint_peak_vcores"]}
        out["static"] = {"slo_misses": m["static"]["slo_misses"], "footprint": m["static"]["footprint_peak_vcores"]}
    h = extras.get("hdfs") or {}
    if h.get("measured"):
        for name, key in (("hdfs-h", "grid"), ("hdfs-stock", "stock")):
            out[name] = {"blocks_lost": h[key]["blocks_lost"], "blocks_ever_unavailable": h[key]["blocks_ever_unavailable"]}
    return out


def build(rows: Sequence[Mapping[str, Any]], extras: Mapping[str, Any], cov: Coverage, recommendation: Any, *,
          chosen: Sequence[str], days: float, store: str, started: float, finished: float,
          harvesting: HarvestingSettings) -> dict[str, Any]:
    current = {r["policy"]: {k: v for k, v in r.items() if k != "job_times_s"} for r in rows if r["quantile"] is None}
    variants = {r["label"]: {k: v for k, v in r.items() if k != "job_times_s"} for r in rows if r["quantile"] is not None}
    vs = verdicts(figures_for_verdicts(current, extras))
    return _clean({
        "kind": "harvester-whatif", "version": 1, "store": store, "days": days, "policies_asked": list(chosen),
        "started": started, "finished": finished, "started_utc": iso_utc(started), "wall_s": finished - started,
        "settings": {"reserve": harvesting.reserve.model_dump(mode="json"), "control_period_s": harvesting.control_period_s,
                     "window_days": harvesting.window_days},
        "policies": current, "variants": variants, "recommended_reserve": recommendation,
        "morpheus": extras.get("morpheus"), "hdfs": extras.get("hdfs"),
        "verdicts": [{"technique": v.technique, "candidate": v.candidate, "baseline": v.baseline, "decision": v.decision,
                      "goal_change": v.goal_change, "line": v.line, "changes": dict(v.changes)} for v in vs],
        "verdict_rule": (f"turn a technique on when it improves its goal by more than {MATERIAL:.0%} against its baseline "
                         f"and worsens none of its guarded figures by more than {MATERIAL:.0%}; otherwise leave it off "
                         "(docs/whatif.md)"),
        "coverage": asdict(cov),
    })


def _fmt(v: Any, f: str) -> str:
    return "—" if v is None else f.format(v)


def markdown(doc: Mapping[str, Any]) -> str:
    cov = doc["coverage"]
    lines = [f"# What-if on this cluster's history ({doc['started_utc']})", "",
             f"Store `{doc['store']}`: {cov['replay_days']:.2f} days replayed after {cov['history_days']:.2f} days of "
             f"history, {cov['nodes']} nodes in {cov['tenants']} tenants, {cov['jobs']} finished jobs. "
             f"Run in {doc['wall_s']:.0f} s.", "", "## Verdicts", ""]
    lines += [f"- {v['line']}" for v in doc["verdicts"]]
    lines += ["", f"Rule: {doc['verdict_rule']}.", "", "## Per policy (current settings)", ""]
    rows = {**doc["policies"], **doc.get("variants", {})}
    lines.append("| policy | " + " | ".join(c[1] for c in COLUMNS) + " |")
    lines.append("|---|" + "---:|" * len(COLUMNS))
    for name, r in rows.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(r.get(k), f) for k, _, f in COLUMNS) + " |")
    rec = doc.get("recommended_reserve")
    if rec:
        lines += ["", "## Reserve quantile", "",
                  f"Recommended: **{rec['recommended']:g}** (current {rec['current']:g}): {rec['rule']}."]
    for key, title in (("morpheus", "Morpheus vs static allocations"), ("hdfs", "HDFS-H vs stock placement")):
        part = doc.get(key)
        if part is None:
            continue
        lines += ["", f"## {title}", ""]
        if not part.get("measured"):
            lines.append(f"Not measured: {part.get('why')}.")
        else:
            lines += part.get("markdown", [])
    lines += ["", "## What the history covered", "",
              f"- replay: {cov['replay_days']:.2f} days; history before it (the loops' past): {cov['history_days']:.2f} days",
              f"- nodes: {cov['nodes']} ({cov['nodes_without_data']} without any primary data), tenants: {cov['tenants']}",
              f"- node-slots: {cov['node_slots']:,}: {cov['from_vectors']:,} from the nodes' own polls, "
              f"{cov['from_tenant_slots']:,} from their tenant's average server, {cov['gap_slots']:,} gaps filled from "
              "the nearest known slot",
              f"- jobs: {cov['jobs']} finished runs ({cov['jobs_with_skyline']} with a skyline, "
              f"{cov['jobs_not_succeeded']} not succeeded), {cov['recurring_names']} recurring names, "
              f"{cov['slo_contracts']} SLO contracts; {cov.get('jobs_running_at_end', 0)} apps still running at the "
              "end, replayed holding their last allocation from their submission (or the replay's start) past its end",
              f"- DataNodes: {cov['datanodes']}, reimages: {cov['reimages']}",
              f"- drain after the replay: {cov['drain_s'] / 3600:.1f} h (the last recorded day repeated)",
              *[f"- {n}" for n in cov.get("notes", [])],
              "", "What it cannot know:", ""]
    lines += [f"- {x}" for x in cov["cannot_know"]]
    lines += ["", "Figures: `whatif_policies.png` (per-policy bars), `whatif_job_time_cdf.png`.", ""]
    return "\n".join(lines)


def plots(doc: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    paths = []
    pol = {**doc["policies"], **doc.get("variants", {})}
    names = list(pol)
    keys = [c for c in COLUMNS if c[0] in ("harvested_core_hours", "wasted_core_hours", "unmet_primary_core_hours",
                                           "task_kills", "job_time_mean_s", "slo_misses")]
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.6))
    for ax, (k, title, _) in zip(np.atleast_1d(axes), keys):
        ax.bar(range(len(names)), [pol[n].get(k) or 0.0 for n in names], color="tab:blue")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    p = out / "whatif_policies.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rows:
        t = np.sort(np.asarray(r.get("job_times_s") or [], dtype=float))
        if t.size:
            ax.plot(t, np.arange(1, t.size + 1) / t.size, label=r["label"])
    ax.set_xlabel("job time (s, submission to finish; unfinished: lower bound)")
    ax.set_ylabel("fraction of jobs")
    if ax.lines:
        ax.set_xscale("log")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no YARN run", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    p = out / "whatif_job_time_cdf.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    return paths


def write(doc: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "whatif.json", doc)
    (out / "whatif.md").write_text(markdown(doc))
    return [out / "whatif.json", out / "whatif.md", *plots(doc, rows, out)]

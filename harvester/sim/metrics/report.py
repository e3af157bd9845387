"""Reports of a run: the summary numbers, a table, CSV/JSON files and PNG figures.

Files written to the output folder:
- summary.json: every summary number plus where each input came from (`sources`);
- jobs.csv: one row per job (unfinished jobs have empty finish/exec);
- utilization.csv: one row per primary step (collector.UTIL_COLUMNS);
- tenants.csv: tenant name, generated/classified pattern, servers, where its series came from;
- job_time_cdf.png: CDF of job execution time (the papers' way of showing job times);
- utilization.png: primary and batch CPU over time as shares of all cores.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from harvester.sim.metrics.collector import KILL_CAUSES, UTIL_COLUMNS, JobRecord

TABLE_ROWS = (
    ("jobs finished / submitted", "jobs"),
    ("job time mean (s)", "job_time_mean_s"),
    ("job time p50 / p90 / p99 (s)", "job_time_pcts"),
    ("task kills (primary/rm/controller/reimage)", "kills"),
    ("kills per 1,000 task attempts", "kills_per_1000_attempts"),
    ("wasted CPU-hours", "wasted_cpu_hours"),
    ("harvested CPU-hours (completed tasks)", "harvested_cpu_hours"),
    ("primary / batch / total CPU utilization", "utilization"),
    ("primary not served (core-hours)", "primary_not_served_core_hours"),
    ("overloaded node-hours", "overflow_node_hours"),
    ("batch slowed (core-hours not granted)", "batch_slowed_core_hours"),
    ("reimages", "reimages"),
    ("events / wall s / events per s", "perf"),
)


def summarize(result: Any) -> dict[str, Any]:
    """The summary numbers of a `RunResult` (flat JSON-friendly dict)."""
    st, sc = result.stats, result.scenario
    done = np.array([j.exec_s for j in st.jobs], dtype=np.float64)
    util = np.array(st.utilization, dtype=np.float64).reshape(-1, len(UTIL_COLUMNS))
    cores = result.total_cores or 1.0
    horizon_h = (sc.duration_s + sc.drain_s) / 3600.0

    def pct(q: float) -> float | None:
        return float(np.percentile(done, q)) if done.size else None

    out: dict[str, Any] = {
        "scenario": sc.name, "policy": sc.policy.name, "seed": sc.seed, "servers": sc.cluster.servers,
        "duration_s": sc.duration_s, "drain_s": sc.drain_s,
        "jobs_submitted": result.jobs_submitted, "jobs_finished": int(done.size), "jobs_unfinished": len(result.unfinished),
        "job_time_mean_s": float(done.mean()) if done.size else None,
        "job_time_p50_s": pct(50), "job_time_p90_s": pct(90), "job_time_p99_s": pct(99),
        "task_attempts": st.attempts, "tasks_completed": st.tasks_completed,
        "task_kills": st.kills_total, **{f"task_kills_{c}": st.kills[c] for c in KILL_CAUSES},
        "kills_per_1000_attempts": 1000.0 * st.kills_total / st.attempts if st.attempts else 0.0,
        "wasted_cpu_hours": st.wasted_cpu_s / 3600.0, "harvested_cpu_hours": st.useful_cpu_s / 3600.0,
        "primary_utilization": float(util[:, 1].mean() / cores) if util.size else 0.0,
        "batch_utilization": float(util[:, 2].mean() / cores) if util.size else 0.0,
        "primary_not_served_core_hours": st.unserved_core_s / 3600.0,
        "overflow_node_hours": st.overflow_node_s / 3600.0,
        "batch_slowed_core_hours": st.slowed_core_s / 3600.0,
        "reimages": st.reimages, "scheduling_passes": st.scheduling_passes,
        "controller_ticks": st.controller_ticks, "controller_actions": st.controller_actions,
        "controller_errors": st.controller_errors,
        "events": result.events, "wall_s": result.wall_s, "build_s": result.build_s,
        "events_per_s": result.events / result.wall_s if result.wall_s > 0 else 0.0,
        "peak_rss_mb": result.peak_rss_mb, "simulated_hours": horizon_h,
        "sources": dict(result.sources),
    }
    out["total_utilization"] = out["primary_utilization"] + out["batch_utilization"]
    # issue 16: the primary levels reached and the guard's reserve coverage (None without a guard)
    out["levels"] = {p: {"target": t, "achieved": a} for p, (t, a) in getattr(result, "levels", {}).items()}
    cov = getattr(result, "coverage", {})
    rises, absorbed = sum(r for r, _ in cov.values()), sum(a for _, a in cov.values())
    out["primary_rises"] = rises
    out["reserve_coverage"] = absorbed / rises if rises else None
    out["am_kills"] = getattr(result, "am_kills", 0)
    return out


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.3f}" if abs(x) < 10 else f"{x:,.1f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def format_summary(s: Mapping[str, Any]) -> str:
    """A two-column table of the summary, then where every input came from."""
    cells = {
        "jobs": f"{s['jobs_finished']:,} / {s['jobs_submitted']:,}",
        "job_time_pcts": " / ".join(_fmt(s[k]) for k in ("job_time_p50_s", "job_time_p90_s", "job_time_p99_s")),
        "kills": f"{s['task_kills']:,} ({'/'.join(str(s['task_kills_' + c]) for c in KILL_CAUSES)})",
        "utilization": " / ".join(f"{s[k]:.1%}" for k in ("primary_utilization", "batch_utilization", "total_utilization")),
        "perf": f"{s['events']:,} / {s['wall_s']:.2f} / {s['events_per_s']:,.0f}",
    }
    rows = [(label, cells.get(key, _fmt(s.get(key)))) for label, key in TABLE_ROWS]
    width = max(len(r[0]) for r in rows)
    head = f"scenario {s['scenario']}  policy {s['policy']}  seed {s['seed']}  servers {s['servers']:,}  " \
           f"simulated {s['simulated_hours']:.1f} h"
    lines = [head, "-" * len(head)] + [f"{a:<{width}}  {b}" for a, b in rows]
    lines.append("inputs:")
    lines += [f"  {k}: {v}" for k, v in s.get("sources", {}).items()]
    return "\n".join(lines)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A plain fixed-width table (sweeps): one line per row, the given columns."""
    text = [[c for c in columns]] + [[_fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in text) for i in range(len(columns))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(line, widths)) for line in text)


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def _job_rows(jobs: Sequence[JobRecord]) -> list[list[Any]]:
    return [[j.job_id, j.name, j.source, int(j.recurring), round(j.submit_s, 3),
             "" if j.start_s is None else round(j.start_s, 3), "" if j.finish_s is None else round(j.finish_s, 3),
             "" if j.exec_s is None else round(j.exec_s, 3), j.tasks, j.attempts, j.kills, round(j.wasted_cpu_s, 3)]
            for j in jobs]


def write_outputs(out_dir: Path, result: Any, summary: Mapping[str, Any]) -> list[Path]:
    """Write summary.json (+ CSVs and PNGs when the scenario asks); returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "summary.json"]
    written[0].write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if result.scenario.outputs.csv:
        write_csv(out_dir / "jobs.csv", ["job_id", "name", "source", "recurring", "submit_s", "start_s", "finish_s",
                                         "exec_s", "tasks", "attempts", "kills", "wasted_cpu_s"],
                  _job_rows([*result.stats.jobs, *result.unfinished]))
        write_csv(out_dir / "utilization.csv", UTIL_COLUMNS, result.stats.utilization)
        write_csv(out_dir / "tenants.csv", ["tenant", "pattern", "servers", "source"],
                  [[t.name, t.pattern, t.servers, t.source] for t in result.load.tenants])
        written += [out_dir / n for n in ("jobs.csv", "utilization.csv", "tenants.csv")]
    if result.scenario.outputs.plots:
        from harvester.sim.metrics.plots import plot_job_cdf, plot_utilization

        written.append(plot_job_cdf({summary["policy"]: [j.exec_s for j in result.stats.jobs]}, out_dir / "job_time_cdf.png",
                                    title=f"{summary['scenario']}: job execution time"))
        written.append(plot_utilization(np.array(result.stats.utilization).reshape(-1, len(UTIL_COLUMNS)),
                                        result.total_cores, out_dir / "utilization.png", title=summary["scenario"]))
    return written

"""Tables and JSON of the Morpheus evaluation (docs/evaluation/morpheus-results.{md,json}; the
figure is figure.py).

    python -m harvester.sim.morpheus.report docs/evaluation/morpheus-results.json [out.png]   # re-print / redraw
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from harvester.sim.morpheus.evaluate import PAPER, SWEPT, EvalPlan, SeedResult
from harvester.sim.morpheus.figure import figure
from harvester.sim.morpheus.results import RESERVED_LATE, label, main_alpha, rows_of, sweep_summary
from harvester.sim.morpheus.runner import NO_RESERVATION

ROW_COLUMNS = ("seed", "day", "job", "policy", "alpha", "met", "late_s", "held_cs", "grants", "note", "static_cs")


def summary(rows: Iterable[dict[str, Any]], days: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per policy label: runs, violations, runs served static (all of it, or after the window),
    container-hours held (of which static fallback), grants, and footprint (Σ over (seed, day) of
    the day's peak) with its ratio to the user baseline and to p95 (over all jobs, and over the
    jobs the policy reserved)."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        s = out[label(r["policy"], r["alpha"])]
        s["runs"] += 1
        s["violations"] += 0 if r["met"] else 1
        s["container_hours"] += r["held_cs"] / 3600.0
        s["static_container_hours"] += r.get("static_cs", 0.0) / 3600.0
        s["grants"] += r["grants"]
        s["static_runs"] += 1 if r["note"] and r["policy"] not in ("user", "p95") else 0
        s["unreserved_runs"] += 1 if r["note"] == NO_RESERVATION else 0
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
            "| vs p95 | vs p95 on the jobs it reserved | peak memory vs p95 | runs served static (not reserved) "
            "| container-hours (static) | DRA grants |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for n in order(summ):
        s = summ[n]
        lines.append(f"| {n} | {s['runs']:.0f} | {s['violations']:.0f} | {s['violation_pct']:.1f} | "
                     f"{_x(s.get('fewer_violations_vs_user'))} | {_x(s.get('fewer_violations_vs_p95'))} | "
                     f"{_r(s.get('footprint_vcores_vs_user'))} | {_r(s.get('footprint_vcores_vs_p95'))} | "
                     f"{_r(s.get('footprint_vcores_vs_p95_same_jobs'))} | {_r(s.get('footprint_memory_mb_vs_p95'))} | "
                     f"{s.get('static_runs', 0):.0f} ({s.get('unreserved_runs', 0):.0f}) | "
                     f"{s['container_hours']:.0f} ({s.get('static_container_hours', 0):.0f}) | {s['grants']:.0f} |")
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
    count: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    static_met = _static_met(rows)
    for r in rows:
        if not r["met"]:
            c = count[(label(r["policy"], r["alpha"]),
                       r["note"] or ("finished after d_j" if r["policy"] in ("user", "p95") else RESERVED_LATE))]
            c[0] += 1
            c[1] += 1 if static_met.get((r["seed"], r["day"], r["job"])) else 0
    head = "| policy | how the run was served, and missed | runs | of which both static baselines met |\n|---|---|---|---|\n"
    rank = {n: i for i, n in enumerate(order({p for p, _ in count}))}
    return head + "\n".join(f"| {p} | {w} | {n} | {s} |" for (p, w), (n, s) in
                            sorted(count.items(), key=lambda x: (rank[x[0][0]], x[0][1]))) + "\n"


def _static_met(rows: Sequence[dict[str, Any]]) -> dict[tuple[int, int, str], bool]:
    """(seed, day, job) → whether BOTH static baselines met it."""
    met: dict[tuple[int, int, str], bool] = {}
    for r in rows:
        if r["policy"] in ("user", "p95"):
            k = (r["seed"], r["day"], r["job"])
            met[k] = met.get(k, True) and bool(r["met"])
    return met


def worse_than_static(rows: Sequence[dict[str, Any]], policy: str, alpha: float) -> list[dict[str, Any]]:
    """The runs `policy` missed that both static baselines met."""
    met = _static_met(rows)
    return [r for r in rows if r["policy"] == policy and r["alpha"] == alpha and not r["met"]
            and met.get((r["seed"], r["day"], r["job"]))]


def sweep_table(sweep: Sequence[dict[str, Any]], static_misses: dict[str, int]) -> str:
    if not sweep:
        return ""
    rows = sweep_summary(sweep)
    head = ("| policy | plan capacity (× p95's largest peak) | missed | runs served static (not reserved) "
            "| footprint (Σ daily peak vcores) vs p95 |\n|---|---|---|---|---|\n")
    body = "\n".join(f"| {r['policy']} | {r['capacity_factor']:g} | {r['missed']:.0f}/{r['runs']:.0f} | "
                     f"{r['static_runs']:.0f} ({r['unreserved']:.0f}) | {_r(r['footprint_vs_p95'])} |" for r in rows)
    lines = []
    for base, bar in sorted(static_misses.items()):
        best = [f"{p}: " + next((f"{r['capacity_factor']:g} (footprint {_r(r['footprint_vs_p95'])} of p95's)"
                                 for r in rows if r["policy"] == p and r["missed"] <= bar), "none swept")
                for p in SWEPT]
        lines.append(f"Smallest plan capacity missing no more than {base} static ({bar}): " + "; ".join(best) + ".")
    return head + body + "\n\n" + "\n".join(lines) + "\n"


def merge(results: Sequence[SeedResult]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"rows": [], "days": [], "slos": [], "excluded": [], "jobs": [], "sweep": []}
    for r in results:
        for k in out:
            out[k] += getattr(r, k)
    return out


def stem(plan: EvalPlan) -> str:
    """File stem of a workload's report: `morpheus` (the Alibaba 2018 daily jobs), else `morpheus-<workload>`."""
    return "morpheus" if plan.workload == "alibaba-2018" else f"morpheus-{plan.workload}"


def write_report(out_dir: Path, plan: EvalPlan, results: Sequence[SeedResult], command: str) -> list[Path]:
    data = merge(results)
    summ = summary(data["rows"], data["days"])
    out_dir.mkdir(parents=True, exist_ok=True)
    setup = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(plan).items()}
    doc = {"command": command, "paper": PAPER, "setup": setup, "summary": summ, "jobs": data["jobs"],
           "slos": data["slos"], "excluded": data["excluded"], "days": data["days"], "sweep": data["sweep"],
           "sweep_summary": sweep_summary(data["sweep"]),
           "rows": {"columns": list(ROW_COLUMNS), "data": [[r[c] for c in ROW_COLUMNS] for r in data["rows"]]}}
    name = stem(plan)
    js = out_dir / f"{name}-results.json"
    js.write_text(json.dumps(doc, indent=None, default=str, allow_nan=False) + "\n", encoding="utf-8")
    md = out_dir / f"{name}-results.md"
    md.write_text(render(doc), encoding="utf-8")
    png = out_dir / "img" / f"{name}.png"
    figure(doc, png)
    return [md, js, png]


def render(doc: dict[str, Any]) -> str:
    rows = rows_of(doc)
    main = main_alpha(doc)
    summ = doc["summary"]
    worse = worse_than_static(rows, "morpheus+dra", main)
    parts = [f"# Morpheus evaluation — generated results\n\nGenerated by `{doc['command']}`; the report is "
             f"[morpheus.md](morpheus.md). Paper: {doc['paper']}.\n",
             f"Workload {doc['setup'].get('workload', 'alibaba-2018')}; seeds {', '.join(str(s) for s in doc['setup']['seeds'])}; "
             f"{len({j['job'] for j in doc['jobs']})} recurring jobs; "
             f"{len(doc['excluded'])} (seed, period, job[, α]) not evaluated or without a skyline.\n",
             "## All policies\n", headline_table(summ),
             f"\n## Per job (α = {main:g}): missed / runs\n", per_job_table(rows, main),
             "\n## Why deadlines were missed\n", notes_table(rows),
             f"\n## morpheus+dra (α = {main:g}) missed, where both static baselines met: {len(worse)}\n"]
    if worse:
        parts.append("| seed | period | job | how it was served | late by (s) | DRA grants |\n|---|---|---|---|---|---|\n" +
                     "\n".join(f"| {r['seed']} | {r['day']} | {r['job']} | {r['note'] or RESERVED_LATE} | "
                               f"{'never finished' if r['late_s'] is None else r['late_s']} | {r['grants']} |"
                               for r in worse) + "\n")
    if doc.get("sweep"):
        static = {b: int(summ[b]["violations"]) for b in ("user", "p95") if b in summ}
        parts += [f"\n## Cluster-size sweep (§9.1 Fig. 10a; α = {main:g})\n", sweep_table(doc["sweep"], static)]
    if doc["excluded"]:
        parts += ["\n## Not evaluated, or no skyline (served static)\n", "| seed | period | job | why |\n|---|---|---|---|\n" +
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

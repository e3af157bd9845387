"""Fit the simulator's generators to real traces: `harvester simulate-fit` writes harvester/sim/data.

- patterns.json: one `PatternFit` per real utilization series (Bitbrains VMs, Alibaba
  machines; whole days resampled to the 2-minute grid), grouped by pattern. The generator
  draws a tenant's parameters from its pattern's rows (a bootstrap over real series).
- workload.json: `WorkloadParams` fitted to the Alibaba 2018 DAG jobs.
Both files record their sources; re-running the command on the same traces reproduces them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

from harvester.observability.progress import Progress
from harvester.sim.synthetic import DATA_DIR, WorkloadParams, fit_workload
from harvester.sim.tenants import PATTERNS
from harvester.sim.tenants.patterns import PatternFit, fit_series
from harvester.sim.traces import load_jobs, load_utilization
from harvester.sim.traces.utilization import UtilSeries, whole_days

STEP_S = 120.0
SOURCES = {
    "bitbrains": "bitbrains-rnd-7d/bitbrains_rnd_2013-08_7days_500vms.csv.gz",
    "alibaba-machines": "alibaba-2018-machines/machine_usage_first100000rows.csv.gz",
    "alibaba-2018-dags": "alibaba-2018-batch-dags/batch_task_selected_2119_DAG_jobs.csv.gz",
}


def fit_patterns(series: Sequence[UtilSeries], step_s: float = STEP_S) -> dict[str, list[PatternFit]]:
    """Fit every series with at least one whole day of data; grouped by pattern."""
    out: dict[str, list[PatternFit]] = {p: [] for p in PATTERNS}
    for s in series:
        u = whole_days(s, step_s)
        if u is not None:
            f = fit_series(u, step_s, s.origin_s + float(s.times_s[0]), s.name)
            out[f.pattern].append(f)
    return out


def save_patterns(fits: Mapping[str, Sequence[PatternFit]], path: Path, sources: Sequence[str]) -> None:
    doc = {"step_s": STEP_S, "sources": list(sources), "fits": {p: [f.to_dict() for f in fs] for p, fs in fits.items()}}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def load_patterns(path: str | Path | None = None) -> dict[str, list[PatternFit]]:
    """The fitted pattern rows (default: the shipped harvester/sim/data/patterns.json)."""
    p = Path(path) if path is not None else DATA_DIR / "patterns.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    return {k: [PatternFit.from_dict(d) for d in v] for k, v in doc["fits"].items()}


def fit_all(traces_dir: Path, out_dir: Path = DATA_DIR, limit: int | None = None) -> tuple[Path, Path]:
    """Fit both generators from the staged traces under `traces_dir`; returns the files written."""
    with Progress(4, "simulate-fit", unit="stages") as bar:
        series = load_utilization("bitbrains", traces_dir / SOURCES["bitbrains"], limit)
        series += load_utilization("alibaba-machines", traces_dir / SOURCES["alibaba-machines"], limit)
        bar.advance(note="utilization traces read")
        out_dir.mkdir(parents=True, exist_ok=True)
        pat = out_dir / "patterns.json"
        save_patterns(fit_patterns(series), pat, [SOURCES["bitbrains"], SOURCES["alibaba-machines"]])
        bar.advance(note="patterns fitted")
        jobs = load_jobs("alibaba-2018-dags", traces_dir / SOURCES["alibaba-2018-dags"], limit)
        bar.advance(note="job trace read")
        params = fit_workload(jobs, source=SOURCES["alibaba-2018-dags"])
        bar.advance(note="workload fitted")
    wl = out_dir / "workload.json"
    params = WorkloadParams(**{**params.__dict__, "notes": {
        "sample": "size-stratified Alibaba v2018 DAG sample (SOURCE.md): per-job sizes lean large",
        "durations": "stage wall time end-start (per-instance durations are not in batch_task)",
        "within_stage_sigma": "0.3 from the Yahoo Hawk/Eagle sub-traces' median within-job CV 0.31",
    }})
    wl.write_text(params.to_json() + "\n", encoding="utf-8")
    return pat, wl

"""Benchmark: one sweep on the local process pool vs on a Dask cluster of 2 worker processes.

    .venv/bin/python bench/sweep_dask.py [--repeats 3] [--seeds 4]

Sweep: deploy/scenarios/small-stock-yarn.yaml (200 servers, 6 simulated hours + 1 h drain, 300
jobs) x policies stock-yarn, primary-aware x `--seeds` seeds. It runs through the code path of
`harvester sweep` (harvester/sim/sweep.py: `make_executor` + `run_sweep`) three ways:
  serial        the local pool with 1 process (the baseline of the speed-ups)
  local_pool_2  the local pool with 2 processes (`--processes 2`; its processes start per sweep)
  dask_2        a `dask.distributed.LocalCluster` of 2 worker processes, 1 thread each
                (`--dask ADDRESS`); the cluster is started once, before the timed runs, as an
                existing cluster would be, and its start time is reported on its own.
Wall time is from opening the executor to the last result; figures are medians over
`--repeats`, the three ways interleaved in each repeat. Every way must return the same figures
per cell (except the run's own timings), or the benchmark stops. The machine's load average is
recorded: on a shared machine other processes take cores from both ways alike.
Writes bench/results/sweep_dask.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harvester.sim.scenario import read_yaml  # noqa: E402
from harvester.sim.sweep import Cell, grid, make_executor, run_sweep  # noqa: E402

SCENARIO = ROOT / "deploy" / "scenarios" / "small-stock-yarn.yaml"
POLICIES = ("stock-yarn", "primary-aware")
MEASURED = {"wall_s", "build_s", "events_per_s", "peak_rss_mb"}  # the run's own timings


def timed(cells: list[Cell], workers: int | None = None, dask: str | None = None) -> tuple[float, list[dict[str, Any]]]:
    t0 = time.perf_counter()
    with make_executor(workers, dask) as ex:
        rows = run_sweep(cells, ex)
    return time.perf_counter() - t0, rows


def figures_of(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in MEASURED} for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=4)
    args = ap.parse_args()
    from dask.distributed import LocalCluster

    cells = grid([(str(SCENARIO), read_yaml(SCENARIO))], policies=POLICIES, seeds=range(1, args.seeds + 1))
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    cluster_start = time.perf_counter() - t0
    walls: dict[str, list[float]] = {"serial": [], "local_pool_2": [], "dask_2": []}
    cell_s: dict[str, list[float]] = {way: [] for way in walls}
    reference: list[dict[str, Any]] | None = None
    try:
        for rep in range(args.repeats):
            for way, kw in (("serial", {"workers": 1}), ("local_pool_2", {"workers": 2}),
                            ("dask_2", {"dask": cluster.scheduler_address})):
                wall, rows = timed(cells, **kw)
                walls[way].append(wall)
                cell_s[way] += [r["wall_s"] + r["build_s"] for r in rows]
                if reference is None:
                    reference = figures_of(rows)
                elif figures_of(rows) != reference:
                    raise SystemExit(f"{way}: results differ from the first run's for the same seeds")
                print(f"  run {rep + 1}/{args.repeats} {way:<13} {len(cells)} cells  wall {wall:6.1f} s", flush=True)
    finally:
        cluster.close()
    load_after = os.getloadavg()
    med = {way: statistics.median(w) for way, w in walls.items()}
    figures = {
        "cells": len(cells),
        **{f"cell_seconds_median_{way}": statistics.median(c) for way, c in cell_s.items()},
        "wall_seconds_dask_2_workers_first_run": walls["dask_2"][0],
        "wall_seconds_serial": med["serial"],
        "wall_seconds_local_pool_2": med["local_pool_2"],
        "wall_seconds_dask_2_workers": med["dask_2"],
        "speedup_local_pool_2_vs_serial": med["serial"] / med["local_pool_2"],
        "speedup_dask_2_workers_vs_serial": med["serial"] / med["dask_2"],
        "dask_2_workers_vs_local_pool_2": med["local_pool_2"] / med["dask_2"],
        "dask_cluster_start_seconds": cluster_start,
        "identical_results": True,
        "load_average_1min_before": load_before[0],
        "load_average_1min_after": load_after[0],
    }
    doc = {
        "name": "sweep_dask",
        "command": "python bench/sweep_dask.py " + " ".join(sys.argv[1:]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "figures": figures,
        "targets": {},
        "notes": {
            "sweep": f"{SCENARIO.relative_to(ROOT)} x {', '.join(POLICIES)} x seeds 1..{args.seeds}",
            "dask_2_workers_vs_local_pool_2": "> 1: Dask faster than the local pool; < 1: slower (local wall / Dask wall)",
            "wall": "median over repeats; from opening the executor to the last result (pool processes start inside it)",
            "dask_cluster_start_seconds": "LocalCluster start, once, outside the timed runs (an existing cluster)",
            "cell_seconds_median": "one cell's build + event loop inside its worker: the same work everywhere, so a "
                                   "higher figure means the worker got less CPU (other processes on the machine)",
            "wall_seconds_dask_2_workers_first_run": "the workers' first sweep: they import harvester then; later "
                                                     "sweeps reuse the warm processes, the local pool starts new ones",
        },
        "runs": walls,
    }
    out = ROOT / "bench" / "results" / "sweep_dask.json"
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"{len(cells)} cells, median of {args.repeats}: serial {med['serial']:.1f} s, local pool x2 "
          f"{med['local_pool_2']:.1f} s ({figures['speedup_local_pool_2_vs_serial']:.2f}x), Dask 2 workers "
          f"{med['dask_2']:.1f} s ({figures['speedup_dask_2_workers_vs_serial']:.2f}x); "
          f"Dask vs local pool {figures['dask_2_workers_vs_local_pool_2']:.2f}x; cluster start {cluster_start:.1f} s; "
          f"load {load_before[0]:.1f} -> {load_after[0]:.1f}")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

"""Durability and availability of HDFS-H's grid placement vs stock HDFS vs greedy (OSDI'16 §4.2, §6).

    harvester hdfs evaluate --traces ../shared/traces --out docs/evaluation      (harvester/cli_hdfs.py)
    (without --traces: the vendored samples, Bitbrains cut; without --out: var/eval/hdfs)

What one *cell* (a utilization level and a seed, plus any sensitivity override) runs:

1. Primary tenants from REAL utilization series: Bitbrains GWA-T-12 Rnd VMs and Alibaba 2018
   machines, through the simulator's loaders and tenant builder (harvester.sim.traces,
   harvester.sim.tenants.layout: N servers in N/20 tenants, each tenant following a group of
   real series at its own day offset and phase). The whole load is scaled by one factor so
   that the servers' mean primary CPU over the evaluated month is the cell's level (spiky
   series saturate at 100 %, so the factor is found iteratively). Two months are built:
   month 0 is history, month 1 is evaluated.
2. Reimages from `hdfs_placement.reimage.generate_reimages`: correlated per tenant (waves of
   a few % of a tenant, repurposing of 30-100 %), FITTED TO THE PAPER'S PUBLISHED FIGURES
   (§3.3, Figs. 4-6), NOT TO A REAL LOG — none is public. Month 0 feeds the policies' history
   (reimages per server per month, peak CPU), month 1 is what they live through.
3. Blocks written uniformly over month 1 by random servers, replication R in {2, 3, 4},
   re-replication of a lost replica after `rereplication_delay_s` (15 min: the NameNode's
   10.5-min dead-node timeout plus queueing), busy = primary CPU above 0.9. Free space per
   server is set so that R=3 fills `fill_at_r3` of the harvestable space by the month's end
   (R=2 fills 2/3 of that, R=4 4/3): without space pressure a best-first policy never leaves
   its best tenants, which is not the regime the paper's critique of greedy is about.
4. The three policies of `hdfs_placement.policies` — Grid (Algorithm 2 on a grid fitted to
   month 0), Stock (BlockPlacementPolicyDefault: writer, remote rack, same remote rack) and
   Greedy best-first — through `hdfs_placement.durability.simulate`, each with the same
   cluster, reimages, utilization and writes.

Racks hold `rack_size` consecutive servers and tenants own consecutive servers, so a tenant
spans one or a few racks, as a datacenter's environments do (the `topology` sensitivity stripes
racks across tenants instead). Cells run in parallel on a process
pool (harvester.sim.sweep.make_executor). The report (evaluate_hdfs_report.py) writes
docs/evaluation/hdfs_grid.md, its figures and the raw rows (hdfs_grid_results.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harvester.eval_paths import traces_note
from harvester.observability.progress import Progress
from harvester.sim.fit import SOURCES, load_patterns
from harvester.sim.sweep import make_executor
from harvester.sim.tenants.layout import PrimaryLoad, TraceRows, build_primary_load, trace_rows
from harvester.sim.traces import load_utilization
from hdfs_placement.durability import BLOCK_BYTES, DurabilityConfig, simulate, tenant_history, uniform_workload
from hdfs_placement.policies import GreedyPolicy, GridPolicy, SimCluster, StockHdfsPolicy
from hdfs_placement.reimage import MONTH_S, ReimageParams, generate_reimages

STEP_S = 120.0
START_S = 1_700_000_000.0  # any epoch start; periodic tenants keep the traces' time of day
POLICIES = ("grid", "stock", "greedy")
Row = dict[str, Any]  # one (cell, policy, replication) result


def select(rows: Sequence[Row], **match: Any) -> list[Row]:
    """The rows whose fields equal every `match`."""
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


@dataclass(frozen=True)
class Setup:
    """Everything a cell needs besides its level and seed (defaults = the report's setup)."""

    servers: int = 2000
    servers_per_tenant: int = 20
    rack_size: int = 20
    rack_layout: str = "contiguous"   # contiguous: a rack = consecutive servers; striped: server i on rack i mod racks
    blocks_per_server: int = 100
    fill_at_r3: float = 0.6
    replications: tuple[int, ...] = (2, 3, 4)
    rereplication_delay_s: float = 900.0
    busy_cpu_threshold: float = 0.9
    refresh_interval_s: float = 3600.0
    reimage: Mapping[str, Any] = field(default_factory=dict)   # ReimageParams overrides

    @property
    def blocks(self) -> int:
        return self.servers * self.blocks_per_server


@dataclass(frozen=True)
class Cell:
    index: int
    study: str            # "main" or the sensitivity axis ("delay", "correlation", ...)
    value: str            # the axis value shown in tables
    level: float
    seed: int
    setup: Setup


def load_trace_rows(traces_dir: Path, limit: int | None, rng: np.random.Generator) -> tuple[TraceRows, str]:
    """Bitbrains + Alibaba machine series on the 2-minute grid, grouped by pattern."""
    series = load_utilization("bitbrains", traces_dir / SOURCES["bitbrains"], limit)
    series += load_utilization("alibaba-machines", traces_dir / SOURCES["alibaba-machines"], limit)
    rows = trace_rows(series, STEP_S, 4, rng)
    groups = ", ".join(f"{len(v)} {k}" for k, v in rows.groups.items())
    return rows, f"{len(series)} real series ({SOURCES['bitbrains']}, {SOURCES['alibaba-machines']}); groups: {groups}"


def scale_to_level(load: PrimaryLoad, level: float, iterations: int = 12) -> float:
    """Scale every series by one factor (clipped to [0, 1]) until the mean is `level`; returns it."""
    mean = load.mean_utilization()
    for _ in range(iterations):
        if mean <= 0 or abs(mean - level) < 0.002:
            break
        np.clip(load.rows * (level / mean), 0.0, 1.0, out=load.rows)
        mean = load.mean_utilization()
    return mean


def tenant_matrix(load: PrimaryLoad, first: int, last: int, chunk: int = 720) -> np.ndarray:
    """float32[tenant, step] of the tenants' average-server utilization (`PrimaryLoad.tenant_means`
    of `util_at(k)`) for steps first..last-1, a day of steps at a time."""
    if not -load.history_steps <= first <= last <= load.steps:
        raise IndexError(f"steps {first}..{last} outside -{load.history_steps}..{load.steps}")
    order = np.argsort(load.tenant_of, kind="stable")
    tenants = load.tenant_of[order]
    starts = np.flatnonzero(np.r_[True, tenants[1:] != tenants[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    row_of, offset_of = load.row_of[order], load.offset_of[order]
    len_of = load.row_len[row_of]
    out = np.zeros((len(load.tenants), last - first), dtype=np.float32)
    for a in range(first, last, chunk):
        ks = np.arange(a, min(a + chunk, last)) + load.history_steps
        util = load.rows[row_of[:, None], (offset_of[:, None] + ks[None, :]) % len_of[:, None]]
        # float64 sums in server order, as PrimaryLoad.tenant_means does: the same numbers bit for bit
        sums = np.add.reduceat(util.astype(np.float64), starts, axis=0)
        out[tenants[starts], a - first:a - first + len(ks)] = sums / sizes[:, None]
    return out


def run_cell(cell: Cell, rows: TraceRows) -> list[dict[str, Any]]:
    """Build one cell's inputs and run every policy at every replication (module docstring)."""
    s = cell.setup
    rng = np.random.default_rng([cell.seed, int(cell.level * 1000)])
    t0 = time.perf_counter()
    load = build_primary_load(servers=s.servers, tenants=max(1, s.servers // s.servers_per_tenant), step_s=STEP_S,
                              horizon_s=MONTH_S, history_s=MONTH_S, start_s=START_S, rng=rng,
                              fits=load_patterns(None), traces=rows,
                              allow_generated=True)  # counted per row below (from_traces)
    achieved = scale_to_level(load, cell.level)
    history_util = tenant_matrix(load, -load.history_steps, 0)
    month_util = tenant_matrix(load, 0, load.steps)
    n, tenants = load.servers, len(load.tenants)
    free = BLOCK_BYTES * 3 * s.blocks / (s.fill_at_r3 * n)
    n_racks = max(1, n // s.rack_size)
    racks = np.arange(n) // s.rack_size if s.rack_layout == "contiguous" else np.arange(n) % n_racks
    cluster = SimCluster(load.tenant_of.astype(np.int64), racks, np.arange(tenants),
                         (free * rng.uniform(0.5, 1.5, n)).astype(np.int64))
    params = ReimageParams(**{k: tuple(v) if isinstance(v, list) else v for k, v in s.reimage.items()})
    log = generate_reimages(load.tenant_of, 2 * MONTH_S, rng, params)
    past, month = log.window(0.0, MONTH_S), log.window(MONTH_S, 2 * MONTH_S)
    rate, peak = tenant_history(past, cluster, history_util)
    writes = uniform_workload(s.blocks, MONTH_S, n, rng)
    from_traces = sum(t.source.startswith("trace:") for t in load.tenants)
    common = {
        "study": cell.study, "value": cell.value, "level": cell.level, "seed": cell.seed, "servers": n,
        "tenants": tenants, "tenants_from_traces": from_traces, "achieved_mean_util": round(float(achieved), 4),
        "busy_step_fraction": round(float(np.mean(month_util > s.busy_cpu_threshold)), 4),
        "reimage_events": len(month), "servers_wiped": int(len(month.servers)),
        "largest_event": int(np.diff(month.offsets).max()) if len(month) else 0,
        "rereplication_delay_s": s.rereplication_delay_s, "setup_s": round(time.perf_counter() - t0, 2),
    }
    out = []
    for r in s.replications:
        config = DurabilityConfig(replication=r, rereplication_delay_s=s.rereplication_delay_s,
                                  busy_cpu_threshold=s.busy_cpu_threshold, util_step_s=STEP_S,
                                  refresh_interval_s=s.refresh_interval_s)
        for name in POLICIES:
            policy = {"grid": lambda: GridPolicy(cluster, rate, peak), "stock": lambda: StockHdfsPolicy(cluster),
                      "greedy": lambda: GreedyPolicy(cluster, rate, peak)}[name]()
            t1 = time.perf_counter()
            res = simulate(cluster, writes, month, month_util, policy, config, np.random.default_rng([cell.seed, r]))
            block_seconds = float(np.sum(MONTH_S - writes.write_times_s))
            out.append({
                **common, "policy": name, "replication": r, "blocks_written": res.blocks_written,
                "blocks_lost": res.blocks_lost, "loss_fraction": res.loss_fraction,
                "write_failures": res.write_failures, "under_replicated_writes": res.under_replicated_writes,
                "replicas_destroyed": res.replicas_destroyed, "rereplications": res.rereplications,
                "rereplication_failures": res.rereplication_failures,
                "unavailable_block_minutes": res.block_unavailable_minutes,
                "unavailable_fraction": res.unavailable_block_seconds / block_seconds if block_seconds else 0.0,
                "blocks_ever_unavailable": res.blocks_ever_unavailable, "sim_s": round(time.perf_counter() - t1, 2),
            })
    return out


# --- the studies ------------------------------------------------------------------------------

def cells(setup: Setup, *, levels: Sequence[float], seeds: Sequence[int], sensitivity: bool,
          sensitivity_level: float = 0.5) -> list[Cell]:
    """The main grid (level x seed) and, with `sensitivity`, one axis at a time at one level, R in {2, 3}."""
    out: list[Cell] = []

    def add(study: str, value: str, level: float, seed: int, s: Setup) -> None:
        out.append(Cell(len(out), study, value, level, seed, s))

    for level in levels:
        for seed in seeds:
            add("main", "base", level, seed, setup)
    if not sensitivity:
        return out
    small = dataclasses.replace(setup, replications=(2, 3))
    axes: list[tuple[str, str, Setup]] = [
        ("delay", f"{d / 3600:g} h", dataclasses.replace(small, rereplication_delay_s=d))
        for d in (3600.0, 6 * 3600.0, 24 * 3600.0)
    ]
    axes += [
        ("correlation", "waves 20-50 % of a tenant",
         dataclasses.replace(small, reimage={**small.reimage, "group_fraction": [0.2, 0.5]})),
        ("correlation", "repurposing 10x more often",
         dataclasses.replace(small, reimage={**small.reimage, "repurpose_per_month": 1 / 6})),
        ("history", "tenant rates drift month to month (sigma 1.0)",
         dataclasses.replace(small, reimage={**small.reimage, "monthly_sigma": 1.0})),
        ("topology", "racks striped across tenants", dataclasses.replace(small, rack_layout="striped")),
        ("fill", f"R=3 fills {0.95:.0%}", dataclasses.replace(small, fill_at_r3=0.95)),
        ("size", f"{setup.servers // 2} servers", dataclasses.replace(small, servers=setup.servers // 2)),
        ("size", f"{setup.servers * 2} servers", dataclasses.replace(small, servers=setup.servers * 2)),
        ("blocks", f"{setup.blocks_per_server * 4} blocks/server",
         dataclasses.replace(small, blocks_per_server=setup.blocks_per_server * 4)),
    ]
    for study, value, s in axes:
        for seed in seeds:
            add(study, value, sensitivity_level, seed, s)
    return out


def run_cells(todo: Sequence[Cell], rows: TraceRows, executor: Executor, *, quiet: bool = True) -> list[dict[str, Any]]:
    """Every cell on the executor; rows in cell order. A failed cell raises (never swallowed)."""
    futures = {executor.submit(run_cell, c, rows): c for c in todo}
    results: list[tuple[int, list[dict[str, Any]]]] = []
    with Progress(len(todo), "hdfs evaluate", quiet=quiet, unit="cells") as bar:
        for fut in as_completed(futures):
            c = futures[fut]
            results.append((c.index, fut.result()))
            bar.advance(note=f"{c.study} {c.value} level {c.level:.2f} seed {c.seed}")
    return [row for _, rs in sorted(results, key=lambda x: x[0]) for row in rs]


def run(args: argparse.Namespace, write_report) -> int:
    if args.from_results is not None:
        return rerender(args.from_results, args.out, write_report)
    if not (args.traces / SOURCES["bitbrains"]).is_file():
        print(f"harvester: no Bitbrains trace under {args.traces} (expected {SOURCES['bitbrains']}; give --traces DIR)",
              file=sys.stderr)
        return 2
    if any(not 0 < x < 1 for x in args.levels) or (args.servers or 40) < 40 or (args.blocks_per_server or 1) < 1:
        print("harvester: --levels must be in (0, 1), --servers >= 40, --blocks-per-server >= 1", file=sys.stderr)
        return 2
    note = traces_note(args.traces, [SOURCES["bitbrains"], SOURCES["alibaba-machines"]])  # what load_trace_rows reads
    if note:
        print(note, flush=True)
    t0 = time.perf_counter()
    rows, provenance = load_trace_rows(args.traces, args.trace_limit, np.random.default_rng(0))
    setup = Setup(servers=args.servers or Setup.servers, blocks_per_server=args.blocks_per_server or Setup.blocks_per_server)
    todo = cells(setup, levels=args.levels, seeds=args.seeds, sensitivity=not args.no_sensitivity)
    with make_executor(args.processes) as pool:
        results = run_cells(todo, rows, pool, quiet=args.quiet)
    command = (f"harvester hdfs evaluate --traces {args.traces} --out {args.out} "
               f"--levels {' '.join(f'{x:g}' for x in args.levels)} --seeds {' '.join(map(str, args.seeds))} "
               f"--servers {setup.servers} --blocks-per-server {setup.blocks_per_server}"
               + (" --no-sensitivity" if args.no_sensitivity else "")
               + (f" --trace-limit {args.trace_limit}" if args.trace_limit else ""))
    written = write_report(results, setup, args.out, provenance=provenance, command=command,
                           wall_s=time.perf_counter() - t0, workers=args.processes)
    for p in written:
        print(p)
    return 0


def rerender(results: Path, out: Path, write_report) -> int:
    """Write the page again from saved rows (after a change to the report's text, not to the model)."""
    import json

    try:
        doc = json.loads(results.read_text())
        setup = Setup(**{k: tuple(v) if k == "replications" else v for k, v in doc["setup"].items()})
        rows = doc["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"harvester: --from-results {results}: not a results file ({exc})", file=sys.stderr)
        return 2
    for p in write_report(rows, setup, out, provenance=doc["provenance"], command=doc["command"],
                          wall_s=doc["wall_s"], workers=doc.get("workers")):
        print(p)
    return 0


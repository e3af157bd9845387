"""Sweeps: scenario × policy × parameter values × seed, run in parallel, gathered into one table.

One code path for every engine: cells are submitted to a `concurrent.futures.Executor` —
a local `ProcessPoolExecutor` by default, or, when a Dask scheduler address is given, the
executor of a `dask.distributed.Client` (`Client.get_executor()`, the same interface). Dask is
the optional extra `harvester[dask]`; it is imported only when asked for. Cells carry the
parsed scenario data (not a file path), so remote workers need only the traces the scenario
names, at the same paths (a shared filesystem or `--traces` pointing at the same place).
"""

from __future__ import annotations

import copy
import itertools
import multiprocessing
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from harvester.observability.progress import Progress
from harvester.sim.scenario import parse_scenario

SWEEP_COLUMNS = ("scenario", "policy", "seed", "jobs_finished", "jobs_submitted", "job_time_mean_s", "job_time_p50_s",
                 "job_time_p90_s", "task_kills", "kills_per_1000_attempts", "wasted_cpu_hours", "harvested_cpu_hours",
                 "primary_not_served_core_hours", "wall_s")


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: scenario data plus dotted-key overrides (policy, params, seed)."""

    index: int
    scenario: Mapping[str, Any]
    where: str
    overrides: Mapping[str, Any]
    traces_dir: str | None = None
    base_dir: str | None = None
    labels: Mapping[str, Any] = field(default_factory=dict)


def grid(scenarios: Sequence[tuple[str, Mapping[str, Any]]], *, policies: Sequence[str] = (),
         params: Mapping[str, Sequence[Any]] | None = None, seeds: Sequence[int] = (),
         traces_dir: str | None = None) -> list[Cell]:
    """The full product; an empty axis keeps the scenario's own value."""
    params = dict(params or {})
    keys = sorted(params)
    cells = []
    for (where, data), policy, values, seed in itertools.product(
            scenarios, list(policies) or [None], list(itertools.product(*(params[k] for k in keys))) or [()],
            list(seeds) or [None]):
        over: dict[str, Any] = dict(zip(keys, values))
        if policy is not None:
            over["policy.name"] = policy
        if seed is not None:
            over["seed"] = seed
        cells.append(Cell(len(cells), data, where, over, traces_dir, str(Path(where).resolve().parent), dict(over)))
    return cells


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one cell in this process; returns its summary row (+ labels and job times)."""
    from harvester.sim.metrics.report import summarize
    from harvester.sim.simulation import Simulation

    sc = parse_scenario(copy.deepcopy(dict(cell.scenario)), where=cell.where, overrides=cell.overrides)
    sc = sc.model_copy(update={"outputs": sc.outputs.model_copy(update={"plots": False, "csv": False})})
    sim = Simulation(sc, traces_dir=cell.traces_dir, base_dir=cell.base_dir)
    result = sim.run()
    row = summarize(result)
    explain = getattr(sim.policy, "report", None)  # optional: what a policy says about its own run
    if explain is not None:
        row["policy_report"] = explain()
    row.update({f"param:{k}": v for k, v in cell.labels.items() if k not in ("policy.name", "seed")})
    row["cell"] = cell.index
    row["job_exec_s"] = [j.exec_s for j in result.stats.jobs]
    end = sc.duration_s + sc.drain_s  # unfinished jobs: time from submission to the end of the run (a lower bound)
    row["job_unfinished_s"] = [end - j.submit_s for j in result.unfinished]
    return row


@contextmanager
def make_executor(workers: int | None = None, dask_address: str | None = None) -> Iterator[Executor]:
    """A process pool, or a Dask cluster's executor when `dask_address` is set (lazy import)."""
    if dask_address:
        try:
            from dask.distributed import Client
        except ImportError:
            raise RuntimeError("Dask is not installed: pip install 'harvester[dask]' to sweep on a Dask cluster") from None
        client = Client(dask_address)
        try:
            yield client.get_executor()
        finally:
            client.close()
    else:
        # forkserver, not fork: a worker forked from a parent that already ran k-means or BLAS
        # inherits their thread pools' locks and hangs in its first fit (libgomp is not fork-safe)
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
            yield pool


def run_sweep(cells: Sequence[Cell], executor: Executor, *, quiet: bool = True, label: str = "sweep") -> list[dict[str, Any]]:
    """Submit every cell, gather rows in cell order. A failed cell raises (never swallowed).
    Progress (cells done, the last one's policy and seed) on a terminal unless `quiet`."""
    futures = {executor.submit(run_cell, c): c for c in cells}
    rows: list[dict[str, Any]] = []
    with Progress(len(cells), label, quiet=quiet, unit="runs") as bar:
        for fut in as_completed(futures):
            row = fut.result()
            rows.append(row)
            bar.advance(note=f"{row['policy']} seed {row['seed']} {row['wall_s']:.0f} s")
    return sorted(rows, key=lambda r: r["cell"])

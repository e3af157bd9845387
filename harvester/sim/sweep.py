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
import hashlib
import itertools
import json
import multiprocessing
import os
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


def fingerprint(cell: Cell) -> str:
    """What determines a cell's result (scenario data, overrides, trace folder), hashed: a saved
    run is reused only for exactly the same inputs."""
    blob = json.dumps({"scenario": cell.scenario, "overrides": cell.overrides, "traces": cell.traces_dir,
                       "base": cell.base_dir}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _saved(cell: Cell, runs_dir: Path) -> dict[str, Any] | None:
    path = runs_dir / f"{fingerprint(cell)}.json"
    if not path.exists():
        return None
    try:
        row = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RuntimeError(f"saved run {path} is unreadable ({exc}): delete it to run that cell again") from None
    if not isinstance(row, dict) or "policy" not in row:
        raise RuntimeError(f"saved run {path} is not a run's row: delete it to run that cell again")
    row["cell"] = cell.index  # the same inputs may sit at another position of this sweep
    return row


def _save(row: Mapping[str, Any], cell: Cell, runs_dir: Path) -> None:
    """Write the row atomically (a killed sweep never leaves half a file that looks finished)."""
    path = runs_dir / f"{fingerprint(cell)}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(row, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def saved_runs(cells: Sequence[Cell], runs_dir: Path) -> tuple[list[dict[str, Any]], list[Cell]]:
    """The rows saved in `runs_dir` for these cells, and the cells that have none."""
    saved = {c.index: _saved(c, runs_dir) for c in cells}
    return [r for r in saved.values() if r is not None], [c for c in cells if saved[c.index] is None]


def run_sweep(cells: Sequence[Cell], executor: Executor | None, *, quiet: bool = True, label: str = "sweep",
              runs_dir: Path | None = None) -> list[dict[str, Any]]:
    """Submit every cell, gather rows in cell order. A failed cell raises (never swallowed).
    Progress (cells done, the last one's policy and seed) on a terminal unless `quiet`.

    With `runs_dir`, each finished cell's row is saved there as it arrives, and a cell whose
    inputs match a saved row is not run again: a long sweep that is stopped resumes where it was.
    Without an executor only saved rows are returned (the caller reports the cells missing)."""
    rows: list[dict[str, Any]] = []
    todo = list(cells)
    if runs_dir is not None:
        runs_dir.mkdir(parents=True, exist_ok=True)
        rows, todo = saved_runs(cells, runs_dir)
    if executor is None:
        if runs_dir is None:
            raise ValueError("run_sweep: no executor and no saved runs to read")
        return sorted(rows, key=lambda r: r["cell"])
    futures = {executor.submit(run_cell, c): c for c in todo}
    with Progress(len(todo), label, quiet=quiet, unit="runs") as bar:
        for fut in as_completed(futures):
            row = fut.result()
            if runs_dir is not None:
                _save(row, futures[fut], runs_dir)
            rows.append(row)
            bar.advance(note=f"{row['policy']} seed {row['seed']} {row['wall_s']:.0f} s")
    return sorted(rows, key=lambda r: r["cell"])

"""`run_sweep(runs_dir=…)` / `harvester evaluate harvesting --runs DIR`: a stopped sweep resumes.

Finished cells are saved as they arrive and reused only when their inputs are identical; a
changed override runs again. Runs in-process (a thread pool) on a 40-server, 1-hour scenario.
"""

from __future__ import annotations

import copy
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from harvester.sim.scenario import read_yaml
from harvester.sim.sweep import fingerprint, grid, run_sweep

SMALL = {"cluster.servers": 40, "duration_s": 3600, "drain_s": 600, "workload.synthetic.jobs": 20}
MEASURED = {"wall_s", "build_s", "events_per_s", "peak_rss_mb"}


class CountingPool(ThreadPoolExecutor):
    """A thread pool that counts what it was asked to run."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def _cells(repo_root: Path, **extra: Any) -> list[Any]:
    path = repo_root / "deploy/scenarios/small-stock-yarn.yaml"
    data = read_yaml(path)
    cells = grid([(str(path), data)], policies=["stock-yarn"], seeds=[1, 2])
    return [type(c)(c.index, c.scenario, c.where, {**SMALL, **c.overrides, **extra}, c.traces_dir, c.base_dir, c.labels)
            for c in cells]


def _figures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in MEASURED} for r in rows]


def test_saved_runs_are_reused_and_changed_inputs_run_again(repo_root: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with CountingPool() as pool:
        first = run_sweep(_cells(repo_root), pool, runs_dir=runs)
    assert pool.submitted == 2 and len(list(runs.glob("*.json"))) == 2

    with CountingPool() as pool:
        again = run_sweep(_cells(repo_root), pool, runs_dir=runs)
    assert pool.submitted == 0, "identical cells must come from the saved runs"
    assert _figures(json.loads(json.dumps(first))) == _figures(again)

    changed = _cells(repo_root, **{"cluster.servers": 48})
    assert {fingerprint(c) for c in changed}.isdisjoint(fingerprint(c) for c in _cells(repo_root))
    with CountingPool() as pool:
        rows = run_sweep(changed, pool, runs_dir=runs)
    assert pool.submitted == 2 and [r["servers"] for r in rows] == [48, 48]


def test_a_half_written_run_is_not_taken_for_a_finished_one(repo_root: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cells = _cells(repo_root)[:1]
    (runs).mkdir()
    (runs / f"{fingerprint(cells[0])}.tmp").write_text('{"cell": 0, "pol', encoding="utf-8")  # killed mid-write
    with CountingPool() as pool:
        rows = run_sweep(copy.deepcopy(cells), pool, runs_dir=runs)
    assert pool.submitted == 1 and rows[0]["policy"] == "stock-yarn"


def test_an_unreadable_saved_run_is_a_clear_error_and_is_kept(repo_root: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    cells = _cells(repo_root)[:1]
    broken = runs / f"{fingerprint(cells[0])}.json"
    broken.write_text("not json", encoding="utf-8")
    with CountingPool() as pool, pytest.raises(RuntimeError, match="delete it to run that cell again") as err:
        run_sweep(cells, pool, runs_dir=runs)
    assert str(broken) in str(err.value) and pool.submitted == 0 and broken.read_text(encoding="utf-8") == "not json"

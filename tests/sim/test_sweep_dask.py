"""`harvester sweep --dask ADDRESS` on a real Dask cluster gives the local pool's results.

A `dask.distributed.LocalCluster` with two worker processes (nannies, one thread each) stands
in for an existing cluster: the CLI connects to its scheduler address like to any other. The
same sweep runs on the local process pool; every figure of every cell must be identical except
the ones that measure the run itself (wall time, build time, events per second, peak RSS). A
scheduler plugin records which worker finished each cell, so the cells provably ran in the
cluster's worker processes and not in this one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harvester.cli import main

distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the test extra (pyproject.toml)")
from distributed.diagnostics.plugin import SchedulerPlugin  # noqa: E402

SMALL = {"cluster.servers": 40, "duration_s": 3600, "drain_s": 900, "workload.synthetic.jobs": 30}
MEASURED = {"wall_s", "build_s", "events_per_s", "peak_rss_mb"}  # figures of the run, not of the cluster simulated


class FinishedOn(SchedulerPlugin):
    """Worker address of every task that reached memory (a result)."""

    def __init__(self) -> None:
        self.workers: list[str] = []

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if finish == "memory":
            self.workers.append(kwargs.get("worker", ""))


def _sweep(repo_root: Path, out: Path, *executor: str) -> list[dict[str, Any]]:
    sets = [x for k, v in SMALL.items() for x in ("--set", f"{k}={v}")]
    code = main(["sweep", "--scenario", str(repo_root / "deploy/scenarios/small-stock-yarn.yaml"),
                 "--policy", "stock-yarn", "--policy", "primary-aware", "--seeds", "1,2", "--quiet",
                 "--out", str(out), *sets, *executor])
    assert code == 0
    return json.loads((out / "sweep.json").read_text())


def test_sweep_on_a_dask_cluster_matches_the_local_pool(repo_root: Path, tmp_path: Path) -> None:
    local = _sweep(repo_root, tmp_path / "local", "--processes", "2")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        finished = FinishedOn()
        cluster.scheduler.add_plugin(finished)
        on_dask = _sweep(repo_root, tmp_path / "dask", "--dask", cluster.scheduler_address)
        workers = set(cluster.scheduler.workers)
    assert len(finished.workers) == len(on_dask) == 4
    assert set(finished.workers) <= workers, f"cells finished on {finished.workers}, cluster workers {workers}"

    def figures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in MEASURED} for r in rows]

    assert figures(on_dask) == figures(local)
    assert [(r["policy"], r["seed"]) for r in on_dask] == [
        ("stock-yarn", 1), ("stock-yarn", 2), ("primary-aware", 1), ("primary-aware", 2)]
    # different seeds give different runs, so equal figures are not a constant compared with itself
    assert (on_dask[0]["task_kills"], on_dask[0]["job_time_mean_s"]) != (on_dask[1]["task_kills"], on_dask[1]["job_time_mean_s"])


def test_without_the_dask_extra_sweep_exits_1_naming_it(repo_root: Path) -> None:
    """The test extra installs Dask, so a child interpreter that cannot import it plays the
    machine without `harvester[dask]`."""
    code = ("import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None\n"
            "from harvester.cli import main\n"
            f"sys.exit(main(['sweep', '--scenario', {str(repo_root / 'deploy/scenarios/small-stock-yarn.yaml')!r}, "
            "'--dask', 'tcp://127.0.0.1:1', '--quiet', '--set', 'cluster.servers=20', '--set', 'duration_s=600']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=repo_root)
    assert out.returncode == 1, out.stderr
    assert "harvester[dask]" in out.stderr and "Traceback" not in out.stderr

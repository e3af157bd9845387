"""The HDFS-H evaluation on a tiny setup (real trace samples, 80 servers): it runs end to end
through the process pool and writes a page, figures and raw rows whose numbers agree."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from harvester.cli_hdfs import add_evaluate_arguments
from harvester.sim.evaluate_hdfs import Cell, Setup, load_trace_rows, run, run_cell, scale_to_level
from harvester.sim.evaluate_hdfs_report import write_report
from harvester.sim.fit import load_patterns
from harvester.sim.tenants.layout import build_primary_load
from hdfs_placement.reimage import MONTH_S
from shared_paths import TRACES_DIR


def test_a_tiny_evaluation_writes_a_consistent_report(tmp_path: Path) -> None:
    ap = argparse.ArgumentParser()
    add_evaluate_arguments(ap)
    args = ap.parse_args(["--traces", str(TRACES_DIR), "--out", str(tmp_path), "--levels", "0.5", "--seeds", "3",
                          "--servers", "80", "--blocks-per-server", "4", "--no-sensitivity", "--processes", "1",
                          "--quiet"])
    assert run(args, write_report) == 0
    raw = json.loads((tmp_path / "hdfs_grid_results.json").read_text())
    rows = raw["rows"]
    assert {(r["policy"], r["replication"]) for r in rows} == {(p, r) for p in ("grid", "stock", "greedy") for r in (2, 3, 4)}
    assert all(r["blocks_written"] == 320 and r["servers"] == 80 for r in rows), "every policy writes every block"
    assert all(r["tenants_from_traces"] >= 1 for r in rows), "tenants follow real series (the vendored sample lacks some patterns)"
    assert len({(r["reimage_events"], r["servers_wiped"]) for r in rows}) == 1, "one reimage log for all policies"
    page = (tmp_path / "hdfs_grid.md").read_text()
    assert "not a real log" in page and "| blocks lost, stock HDFS ÷ HDFS-H, R=3 | > 100x |" in page
    lost3 = sum(r["blocks_lost"] for r in rows if r["policy"] == "grid" and r["replication"] == 3)
    assert f"HDFS-H grid {lost3}," in page, "the page's numbers are the rows' numbers"
    for png in ("hdfs_grid_losses.png", "hdfs_grid_unavailability.png"):
        assert (tmp_path / "img" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_scaling_hits_the_level_and_a_cell_is_deterministic() -> None:
    rows, _ = load_trace_rows(TRACES_DIR, None, np.random.default_rng(0))
    load = build_primary_load(servers=40, tenants=2, step_s=120.0, horizon_s=MONTH_S / 30, history_s=0.0,
                              start_s=0.0, rng=np.random.default_rng(1), fits=load_patterns(None), traces=rows,
                              allow_generated=True)
    assert abs(scale_to_level(load, 0.4) - 0.4) < 0.01
    setup = Setup(servers=40, blocks_per_server=2, replications=(2,))
    a = run_cell(Cell(0, "main", "base", 0.3, 5, setup), rows)
    b = run_cell(Cell(0, "main", "base", 0.3, 5, setup), rows)
    strip = lambda rs: [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rs]  # noqa: E731 (timings differ)
    assert strip(a) == strip(b)

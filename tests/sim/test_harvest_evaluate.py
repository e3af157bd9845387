"""`harvester evaluate harvesting` end to end on a tiny scenario: every policy, tables, figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harvester.cli import main
from harvester.sim.harvest.evaluate import DEFAULT_POLICIES, policy_overrides

TINY = {
    "name": "tiny-harvest", "seed": 1, "duration_s": 2400, "drain_s": 2400, "start_time": 1375315200,
    "cluster": {"servers": 16, "cores": 8},
    "tenants": {"count": 5, "history_s": 86400},
    "workload": {"synthetic": {"jobs": 15, "max_tasks_per_stage": 20}, "target_utilization": 0.4,
                 "target_basis": "cluster", "allow_rescaled_durations": True},
    "policy": {"name": "harvester.sim.harvest:algorithm1", "params": {"harvesting": {"reserve": {"floor": 0.1}}}},
    "controller": {"factory": "harvester.sim.live:loops", "period_s": 60, "offset_s": 6, "include_containers": False},
}


def test_the_evaluation_runs_every_policy_and_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    out = tmp_path / "eval"
    code = main(["evaluate", "harvesting", "--scenario", str(scenario), "--levels", "0.3,0.6", "--seeds", "1,2",
                 "--processes", "2", "--out", str(out), "--quiet"])
    assert code == 0
    md = (out / "harvesting-results.md").read_text(encoding="utf-8")
    for level in ("30%", "60%"):
        section = md.split(f"### Primary level {level}")[1].split("###")[0].split("\n## ")[0]
        rows = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ") and "policy" not in line]
        assert rows == list(DEFAULT_POLICIES)
    assert "up to −90 %" in md and "inputs:" in md and "controller (yarn-h): harvester.sim.live:loops" in md
    for name in ("harvesting-cdf-30.png", "harvesting-cdf-60.png", "harvesting-vs-level.png"):
        assert (out / "img" / name).stat().st_size > 1000
    data = json.loads((out / "harvesting-results.json").read_text(encoding="utf-8"))
    assert len(data["cells"]) == 2 * 4 * 2 and len(data["points"]) == 2 * 4
    cells = {(c["level"], c["policy"], c["seed"]): c for c in data["cells"]}
    hb = cells[(0.6, "yarn-h", 1)]
    assert hb["controller_ticks"] > 0 and hb["jobs_finished"] > 0
    assert hb["levels"] and all(abs(v["achieved"] - 0.6) <= 0.05 for v in hb["levels"].values())
    assert hb["primary_rises"] >= 0 and cells[(0.6, "stock-yarn", 1)]["reserve_coverage"] is None
    assert cells[(0.6, "stock-yarn", 1)]["controller_ticks"] == 0
    answers = hb["policy_report"]["selections"]  # Algorithm 1 answered every job at least once
    assert sum(answers.get(k, 0) for k in ("one", "several", "none")) >= hb["jobs_submitted"]
    assert hb["policy_report"]["class_models"][0]["classes"] >= 1
    assert "policy_report" not in cells[(0.6, "yarn-pt", 1)]
    assert "## Algorithm 1's answers" in md and "| 60% | 2 |" in md
    assert "--levels 0.3,0.6 --seeds 1,2" in data["command"]
    assert "### Primary level 30%" in capsys.readouterr().out


def test_the_ablation_differs_only_in_placement_and_fixed_reserve_only_in_the_reserve() -> None:
    assert policy_overrides(TINY, "stock-yarn")["controller"] is None
    assert policy_overrides(TINY, "yarn-h") == {}
    pt = policy_overrides(TINY, "yarn-pt")
    assert pt["policy"]["name"] == "harvester.sim.harvest:guard_only"
    assert pt["controller"]["params"] == {"harvesting": {"reserve": {"floor": 0.1}}}, "the same settings as yarn-h"
    fixed = policy_overrides(TINY, "fixed-reserve")
    assert fixed["controller"]["params"] == {"harvesting": {"reserve": {"floor": 0.1, "method": "fixed",
                                                                        "fixed_fraction": 0.10}}}
    wait = policy_overrides(TINY, "yarn-h-wait")["policy"]
    assert wait["params"]["no_class_wait_s"] == 600.0 and wait["params"]["harvesting"] == {"reserve": {"floor": 0.1}}


def test_a_report_from_saved_runs_lists_the_cells_not_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    runs, base = tmp_path / "runs", ["evaluate", "harvesting", "--scenario", str(scenario), "--levels", "0.3", "--quiet"]
    assert main([*base, "--seeds", "1", "--policy", "yarn-pt", "--policy", "stock-yarn", "--processes", "1",
                 "--runs", str(runs), "--out", str(tmp_path / "first")]) == 0
    assert len(list(runs.glob("*.json"))) == 2
    assert main([*base, "--seeds", "1,2", "--policy", "yarn-pt", "--policy", "stock-yarn", "--runs", str(runs),
                 "--saved-only", "--out", str(tmp_path / "saved")]) == 0
    assert len(list(runs.glob("*.json"))) == 2, "--saved-only must run nothing"
    md = (tmp_path / "saved" / "harvesting-results.md").read_text(encoding="utf-8")
    assert "**Not run** (2 of the plan's 4 cells" in md and "30% yarn-pt seed 2; 30% stock-yarn seed 2" in md
    data = json.loads((tmp_path / "saved" / "harvesting-results.json").read_text(encoding="utf-8"))
    assert data["not_run"] == ["30% yarn-pt seed 2", "30% stock-yarn seed 2"] and len(data["cells"]) == 2
    assert "--saved-only" in data["command"] and "not run (2 cells)" in capsys.readouterr().err
    first = json.loads((tmp_path / "first" / "harvesting-results.json").read_text(encoding="utf-8"))
    assert [p["mean"]["task_kills"] for p in first["points"]] == [p["mean"]["task_kills"] for p in data["points"]]
    # nothing saved for another plan: a clear failure, not an empty report
    assert main([*base, "--seeds", "7", "--runs", str(runs), "--saved-only", "--out", str(tmp_path / "none")]) != 0
    assert main([*base, "--saved-only", "--out", str(tmp_path / "x")]) != 0  # --saved-only needs --runs

"""`harvester evaluate harvesting` end to end on a tiny scenario: every policy, tables, figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harvester.cli import main
from harvester.sim.harvest.evaluate import POLICIES, policy_overrides

TINY = {
    "name": "tiny-harvest", "seed": 1, "duration_s": 2400, "drain_s": 2400, "start_time": 1375315200,
    "cluster": {"servers": 16, "cores": 8},
    "tenants": {"count": 5, "history_s": 86400},
    "workload": {"synthetic": {"jobs": 15, "max_tasks_per_stage": 20}, "target_utilization": 0.4,
                 "target_basis": "cluster"},
    "policy": {"name": "harvester.sim.harvest:algorithm1", "params": {"harvesting": {"reserve": {"floor": 0.1}}}},
    "controller": {"factory": "harvester.sim.live:loops", "period_s": 60, "offset_s": 6, "include_containers": False},
}


def test_the_evaluation_runs_every_policy_and_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    out = tmp_path / "eval"
    code = main(["evaluate", "harvesting", "--scenario", str(scenario), "--levels", "0.3,0.6", "--seeds", "1,2",
                 "--workers", "2", "--out", str(out), "--quiet"])
    assert code == 0
    md = (out / "harvesting-results.md").read_text(encoding="utf-8")
    for level in ("30%", "60%"):
        section = md.split(f"### Primary level {level}")[1].split("###")[0].split("\n## ")[0]
        rows = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ") and "policy" not in line]
        assert rows == list(POLICIES)
    assert "up to −90 %" in md and "inputs:" in md and "controller (history-based): harvester.sim.live:loops" in md
    for name in ("harvesting-cdf-30.png", "harvesting-cdf-60.png", "harvesting-vs-level.png"):
        assert (out / "img" / name).stat().st_size > 1000
    data = json.loads((out / "harvesting-results.json").read_text(encoding="utf-8"))
    assert len(data["cells"]) == 2 * 4 * 2 and len(data["points"]) == 2 * 4
    cells = {(c["level"], c["policy"], c["seed"]): c for c in data["cells"]}
    hb = cells[(0.6, "history-based", 1)]
    assert hb["controller_ticks"] > 0 and hb["jobs_finished"] > 0
    assert cells[(0.6, "stock-yarn", 1)]["controller_ticks"] == 0
    answers = hb["policy_report"]["selections"]  # Algorithm 1 answered every job at least once
    assert sum(answers.get(k, 0) for k in ("one", "several", "none")) >= hb["jobs_submitted"]
    assert hb["policy_report"]["class_models"][0]["classes"] >= 1
    assert "policy_report" not in cells[(0.6, "guard-only", 1)]
    assert "## Algorithm 1's answers" in md and "| 60% | 2 |" in md
    assert "--levels 0.3,0.6 --seeds 1,2" in data["command"]
    assert "### Primary level 30%" in capsys.readouterr().out


def test_baselines_drop_the_guard_and_the_ablation_keeps_it_with_the_policy_settings() -> None:
    assert policy_overrides(TINY, "stock-yarn")["controller"] is None
    assert policy_overrides(TINY, "primary-aware")["policy"] == {"name": "primary-aware", "params": {"reserve_fraction": 0.10}}
    ablation = policy_overrides(TINY, "guard-only")
    assert ablation["policy"]["name"] == "harvester.sim.harvest:guard_only"
    assert ablation["controller"]["params"] == {"harvesting": {"reserve": {"floor": 0.1}}}
    assert policy_overrides(TINY, "history-based") == {}


def test_bad_arguments_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump({**TINY, "policy": {"name": "stock-yarn"}}), encoding="utf-8")
    assert main(["evaluate", "harvesting", "--scenario", str(scenario), "--quiet"]) == 2
    assert "policy.name must be harvester.sim.harvest:algorithm1" in capsys.readouterr().err
    scenario.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    assert main(["evaluate", "harvesting", "--scenario", str(scenario), "--policy", "nope", "--quiet"]) == 2
    assert main(["evaluate", "harvesting", "--scenario", str(scenario), "--levels", "1.5", "--quiet"]) == 2

"""Scenario files, the `harvester simulate` / `sweep` commands, and the shipped examples."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from harvester.cli import main
from harvester.sim.scenario import ScenarioError, load_scenario, parse_scenario

SMALL = {"cluster.servers": 40, "duration_s": 3600, "drain_s": 900, "workload.synthetic.jobs": 30}


#: Mechanism scenarios of the other simulators (issue 27), each read by its own loader.
OTHER_SIMULATORS = {"mechanism-jockey.yaml", "mechanism-phoenix.yaml"}


def scenarios(repo_root: Path) -> list[Path]:
    """The harvesting simulator's scenarios (harvester/sim/scenario.py)."""
    return sorted(f for f in (repo_root / "deploy" / "scenarios").glob("*.yaml") if f.name not in OTHER_SIMULATORS)


def test_the_other_simulators_mechanism_scenarios_load_with_their_own_loaders(repo_root: Path) -> None:
    from harvester.sim.jockey.mechanism import load_mechanism
    from harvester.sim.phoenix.mechanism import load_scenario as load_phoenix

    d = repo_root / "deploy" / "scenarios"
    assert {f.name for f in d.glob("mechanism-*.yaml")} >= OTHER_SIMULATORS | {"mechanism-alg1.yaml"}
    assert load_mechanism(d / "mechanism-jockey.yaml") is not None
    assert load_phoenix(d / "mechanism-phoenix.yaml").pressure >= 1.5  # constraints scarcer than their demand
    for name in OTHER_SIMULATORS:  # the premise in one line at the top (issue 27)
        assert (d / name).read_text(encoding="utf-8").startswith("# Premise")


def test_every_example_scenario_validates(repo_root: Path) -> None:
    files = scenarios(repo_root)
    assert {f.name for f in files} >= {"small-stock-yarn.yaml", "small-primary-aware.yaml", "small-traces.yaml",
                                       "bench-10k.yaml"}
    for f in files:
        assert load_scenario(f).name == f.stem


@pytest.mark.parametrize("data,message", [
    ({"name": "x", "duration_s": 10, "clustr": {}}, "clustr: unknown key"),
    ({"name": "x"}, "duration_s: missing value"),
    ({"name": "x", "duration_s": 10, "tenants": {"mix": {"periodic": 0.5, "constant": 0.6}}}, "shares must sum to 1"),
    ({"name": "x", "duration_s": 10, "tenants": {"mix": {"weekly": 1.0}}}, "tenants.mix: unknown pattern(s) weekly"),
    ({"name": "x", "duration_s": 10, "tenants": {"source": "traces"}}, "tenants.traces: missing value"),
    ({"name": "x", "duration_s": 10, "workload": {"source": "trace"}}, "workload.trace: missing value"),
    ({"name": "x", "duration_s": -1}, "duration_s: Input should be greater than 0"),
    ({"name": "x", "duration_s": 10, "cluster": {"servers": 5}, "tenants": {"count": 9}}, "tenants.count: 9 tenants for 5"),
])
def test_bad_scenarios_are_one_line_naming_the_key(data: dict, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, where="s.yaml")
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith("s.yaml: ")


def test_cli_bad_scenario_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("name: x\nduration_s: 10\npolicy: {name: nope}\n", encoding="utf-8")
    assert main(["simulate", "--scenario", str(f), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "policy" in err and "nope" in err
    f.write_text("name: x\nduration_s: 10\nworkload: {source: trace, trace: {format: swim, path: missing.tsv}}\n",
                 encoding="utf-8")
    assert main(["simulate", "--scenario", str(f), "--quiet"]) == 2
    assert "workload.trace.path: no such trace file" in capsys.readouterr().err


def test_simulate_example_end_to_end(repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sets = [x for k, v in SMALL.items() for x in ("--set", f"{k}={v}")]
    code = main(["simulate", "--scenario", str(repo_root / "deploy/scenarios/small-primary-aware.yaml"), "--quiet",
                 "--out", str(tmp_path), *sets])
    out = capsys.readouterr().out
    assert code == 0
    assert "policy primary-aware" in out and "task kills" in out and "inputs:" in out and "reimage:" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["servers"] == 40 and summary["jobs_submitted"] == 30
    for name in ("jobs.csv", "utilization.csv", "tenants.csv", "job_time_cdf.png", "utilization.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert len((tmp_path / "utilization.csv").read_text().splitlines()) == 1 + math.ceil((3600 + 900) / 120)


def test_simulate_takes_trace_paths_as_arguments(repo_root: Path, traces_dir: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    hawk = traces_dir / "hawk-eagle-shortjob-subtraces/YH1_sub.tr.gz"
    util = tmp_path / "u.csv"
    util.write_text("timestamp,server,cpu_util\n" + "".join(
        f"{t},s{i},{0.2 + 0.1 * ((t // 600 + i) % 3)}\n" for i in range(4) for t in range(0, 2 * 86400, 300)), encoding="utf-8")
    code = main(["simulate", "--scenario", str(repo_root / "deploy/scenarios/small-stock-yarn.yaml"), "--quiet",
                 "--no-plots", "--out", str(tmp_path / "o"), "--utilization", f"utilization-csv={util}",
                 "--jobs", f"hawk-eagle={hawk}", "--set", "cluster.servers=20", "--set", "tenants.count=2",
                 "--set", "duration_s=1800", "--set", "drain_s=0", "--set", "workload.target_utilization=null",
                 "--set", "workload.trace.options={max_tasks_per_stage: 20}", "--set", "workload.duration_scale=0.05",
                 "--set", "workload.allow_dropped_jobs=true", "--set", "workload.allow_rescaled_durations=true",
                 "--set", "tenants.allow_generated=true"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "trace hawk-eagle:YH1_sub.tr.gz" in out and "from real series (utilization-csv:u.csv)" in out


def test_sweep_runs_cells_in_a_process_pool_into_one_table(repo_root: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    sets = [x for k, v in SMALL.items() for x in ("--set", f"{k}={v}")]
    code = main(["sweep", "--scenario", str(repo_root / "deploy/scenarios/small-stock-yarn.yaml"), "--policy", "stock-yarn",
                 "--policy", "primary-aware", "--param", "substrate.reaction_delay_s=1,10", "--seeds", "1",
                 "--processes", "2", "--quiet", "--out", str(tmp_path), *sets])
    out = capsys.readouterr().out
    assert code == 0
    rows = json.loads((tmp_path / "sweep.json").read_text())
    assert [(r["policy"], r["param:substrate.reaction_delay_s"]) for r in rows] == [
        ("stock-yarn", 1), ("stock-yarn", 10), ("primary-aware", 1), ("primary-aware", 10)]
    assert len((tmp_path / "sweep.csv").read_text().splitlines()) == 5 and (tmp_path / "job_time_cdf.png").exists()
    assert "param:substrate.reaction_delay_s" in out
    stock = [r for r in rows if r["policy"] == "stock-yarn"]
    assert stock[0]["primary_not_served_core_hours"] < stock[1]["primary_not_served_core_hours"], \
        "a slower reaction leaves the primary unserved longer"


def test_sweep_bad_param_exits_2(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """(The missing-Dask message is checked in a child process without Dask: tests/sim/test_sweep_dask.py.)"""
    f = str(repo_root / "deploy/scenarios/small-stock-yarn.yaml")
    assert main(["sweep", "--scenario", f, "--param", "substrate.reaction_delay_s=-3", "--quiet"]) == 2
    assert "reaction_delay_s" in capsys.readouterr().err


def test_example_yaml_keys_are_all_in_the_schema(repo_root: Path) -> None:
    for f in scenarios(repo_root):
        data = yaml.safe_load(f.read_text())
        assert isinstance(data, dict) and "name" in data and "duration_s" in data


def _keys(model: type, prefix: str = "") -> list[str]:
    from pydantic import BaseModel

    out = []
    for name, f in model.model_fields.items():  # type: ignore[attr-defined]
        out.append(prefix + name)
        for cand in (*getattr(f.annotation, "__args__", ()), f.annotation):
            if isinstance(cand, type) and issubclass(cand, BaseModel) and cand.__name__ != "TraceRef":
                out += _keys(cand, prefix + name + ".")
    return out


def test_docs_document_every_scenario_key(repo_root: Path) -> None:
    from harvester.sim.scenario import Scenario, TraceRef

    doc = (repo_root / "docs" / "simulator.md").read_text(encoding="utf-8")
    missing = [k for k in _keys(Scenario) if f"`{k}`" not in doc]
    missing += [k for k in TraceRef.model_fields if f"`<trace>.{k}`" not in doc]
    assert not missing, f"undocumented scenario keys: {missing}"

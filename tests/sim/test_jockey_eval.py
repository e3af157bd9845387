"""The Jockey evaluation loop in the simulator: runs, policies, the static oracle, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harvester.decisions.deadline_control import DeadlineParams
from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.models.completion_time import precompute
from harvester.models.job_model import Edge, JobModel, Quantiles, StageModel
from harvester.models.job_sim import CompiledJob, draw
from harvester.sim.jockey.evaluate import Setup, evaluate_job, main, summarize
from harvester.sim.jockey.report import figure, load_results, table
from harvester.sim.jockey.runner import Controlled, Static, reserved, run_once
from harvester.sim.workload import build_job


def two_phase() -> JobModel:
    """40 tasks of 10 s, then one 100 s task: containers help only in the first phase."""
    q0 = Quantiles.constant(0.0)
    return JobModel("j", (StageModel("wide", 40, Quantiles.constant(10.0), q0),
                          StageModel("tail", 1, Quantiles.constant(100.0), q0, (0,), (Edge.BARRIER,))))


def test_reserved_integrates_the_allocation_until_the_end() -> None:
    assert reserved([(0.0, 4), (10.0, 2), (30.0, 8)], 35.0) == pytest.approx(4 * 10 + 2 * 20 + 8 * 5)
    assert reserved([(0.0, 4)], 12.5) == pytest.approx(50.0)


def test_static_run_reserves_allocation_times_makespan() -> None:
    job = CompiledJob(two_phase())
    o = run_once(job, draw(job, np.random.default_rng(0)), Static("s", 8), DeadlineUtility(200.0), period_s=5.0)
    assert o.finish_s == pytest.approx(150.0) and o.met and o.reserved_cs == pytest.approx(8 * 150.0)


def test_controlled_run_releases_containers_in_the_narrow_tail() -> None:
    model = two_phase()
    table_ = precompute(model, [1, 2, 4, 8, 20, 40], runs=2, samples_per_run=400)
    job = CompiledJob(model)
    pol = Controlled("jockey", table_, DeadlineParams(quantile=1.0, slack=1.0, early_slack=0.0), table_.indicator)
    o = run_once(job, draw(job, np.random.default_rng(0)), pol, DeadlineUtility(160.0), period_s=5.0, keep_decisions=True)
    assert o.met
    assert o.timeline[0] == (0.0, 8)  # 8 containers: 50 s + 100 s = 150 <= 160; 4 would take 200
    # once the tail runs the job needs one container: the demand cap releases the rest
    assert o.timeline[-1][1] == 1 and o.reserved_cs < 8 * o.finish_s
    assert all(d.reason for d in o.decisions)


def test_evaluate_job_rows_and_the_static_oracle_meets_what_jockey_met() -> None:
    spec = build_job("tiny", 0.0, [("a", np.full(30, 40.0), 1, 1024, []), ("b", np.full(5, 60.0), 1, 1024, [0]),
                                   ("c", np.full(1, 80.0), 1, 1024, [1])])
    setup = Setup(jobs=1, seeds=(0, 1, 2), deadline_factors=(2.5,), cpa_runs=8, levels=8, prior=2)
    out = evaluate_job(spec, setup, example=True)
    rows = out["rows"]
    assert {r["policy"] for r in rows} >= {"jockey", "jockey-no-cap", "amdahl", "static-model", "max"}
    assert len({(r["scenario"], r["seed"]) for r in rows}) == 2 * 3
    for scenario in ("nominal", "injected"):
        jockey_met = {r["seed"] for r in rows if r["scenario"] == scenario and r["policy"] == "jockey" and r["met"]}
        oracle = {r["seed"]: r["met"] for r in rows if r["scenario"] == scenario and r["policy"] == "static-oracle"}
        assert all(oracle[s] for s in jockey_met)
    assert out["examples"] and out["info"]["tasks"] == 36
    summary = summarize(rows)
    assert summary["nominal"]["jockey"]["runs"] == 3
    assert "| nominal | jockey |" in table({"summary": summary})


def test_cli_writes_results_and_rejects_bad_input(tmp_path: Path, traces_dir: Path) -> None:
    args = ["--traces", str(traces_dir), "--out", str(tmp_path), "--job-count", "1", "--seeds", "0-0", "--cpa-runs", "3",
            "--cpa-levels", "5", "--processes", "1", "--scenarios", "nominal", "--factors", "3", "--limit", "3000"]
    assert main(args) == 0
    result = load_results(tmp_path / "jockey-results.json.gz")
    assert result["rows"][0]["policy"] and result["rows"][0]["job"] == result["jobs"][0]["job"]
    assert result["summary"]["nominal"]["jockey"]["runs"] == 1 and result["jobs"][0]["tasks"] >= 200
    assert (tmp_path / "img" / "jockey.png").stat().st_size > 0
    assert main(args[:4] + ["--scenarios", "nope"]) == 2
    assert main(["--traces", str(tmp_path / "none"), "--out", str(tmp_path)]) == 2


def test_figure_from_rows_without_examples(tmp_path: Path) -> None:
    rows = [{"job": "j", "scenario": "nominal", "factor": 2.0, "seed": 0, "policy": p, "deadline_s": 100.0,
             "finish_s": f, "met": f <= 100, "feasible": True, "reserved_cs": r, "changes": 0}
            for p, f, r in (("jockey", 90.0, 900.0), ("static-oracle", 99.0, 1200.0), ("max", 50.0, 5000.0))]
    figure({"rows": rows, "jobs": [{"job": "j"}], "examples": {}}, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0


def test_a_dependency_named_twice_in_a_trace_is_one_edge() -> None:
    from harvester.models.job_model import fit_job_model
    from harvester.sim.jockey.truth import Variability, run_from_jobspec, true_model

    spec = build_job("dup", 0.0, [("a", np.full(2, 5.0), 1, 1024, []), ("b", np.full(1, 5.0), 1, 1024, [0, 0])])
    assert true_model(spec, Variability(samples=100, points=11)).stages[1].parents == (0,)
    assert fit_job_model([run_from_jobspec(spec)]).stages[1].parents == (0,)


def test_report_cli_redraws_from_the_results_file(tmp_path: Path) -> None:
    from harvester.sim.jockey.report import main as report_main

    rows = [{"job": "j", "scenario": "injected", "factor": 2.0, "seed": 0, "policy": p, "deadline_s": 100.0,
             "finish_s": f, "met": f is not None and f <= 100, "feasible": True, "reserved_cs": 100.0, "changes": 0}
            for p, f in (("jockey", None), ("static-oracle", 90.0), ("static-model", 95.0), ("max", 60.0))]
    res = {"rows": rows, "jobs": [{"job": "j"}], "examples": {}, "summary": summarize(rows)}
    (tmp_path / "r.json").write_text(json.dumps(res))
    assert report_main([str(tmp_path / "r.json"), str(tmp_path / "f.png")]) == 0
    assert report_main([]) == 2

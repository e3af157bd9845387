"""The Phoenix evaluation end to end on a small cut of the Yahoo trace (every policy, the
report files and the CLI's errors); the full run is `harvester evaluate phoenix`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harvester.cli import main
from harvester.sim.phoenix.evaluate import DEFAULT_POLICIES, POLICIES, Plan, geomean, ratios, run_plan, summary, utilization


@pytest.fixture(scope="module")
def rows(traces_dir_module: Path):
    plan = Plan(traces_dir=traces_dir_module, traces=("YH1_sub.tr.gz",), workers=400, loads=(2.0,), seeds=(1,), limit=250,
                policies=tuple(POLICIES))
    return run_plan(plan)


@pytest.fixture(scope="module")
def traces_dir_module() -> Path:
    from shared_paths import TRACES_DIR

    return TRACES_DIR


def test_every_policy_runs_every_job(rows) -> None:
    assert [r.policy for r in rows] == list(POLICIES)
    for r in rows:
        assert r.short["n"] + r.long["n"] == 250 and r.short["p50"] <= r.short["p90"] <= r.short["p99"]
    by = {r.policy: r for r in rows}
    assert by["Eagle (no constraints)"].constrained["n"] == 0 and by["Eagle-C"].constrained["n"] > 0
    assert by["FIFO"].probes == 0 and by["Sparrow-C"].probes > by["Eagle-C"].probes // 2
    assert by["Phoenix: reorder only"].relaxed_jobs == 0


def test_the_default_leaves_out_only_the_first_reviews_slow_mg1_variants() -> None:
    assert Plan(Path(".")).policies == DEFAULT_POLICIES and set(DEFAULT_POLICIES) <= set(POLICIES)
    assert {p for p in POLICIES if p not in DEFAULT_POLICIES} == {p for p in POLICIES if "first review's" in p}


def test_measured_load_is_the_busy_share_sampled_every_5_s() -> None:
    # samples at 0, 5, 10, 15 s; jobs arrive until 10 s: the first three count as "while jobs arrive"
    u = utilization([0.5, 0.9, 0.9, 0.1], last_arrival_s=10.0)
    assert u == pytest.approx({"busy_mean_arrivals": 2.3 / 3, "busy_over_80_arrivals": 2 / 3, "busy_mean_run": 0.6})
    assert utilization([], last_arrival_s=1.0) == {}


def test_ratios_are_per_seed_and_summarized_geometrically(rows) -> None:
    by = {r.policy: r for r in rows}
    assert ratios(rows, "Eagle-C") == [by["Eagle-C"].short["p99"] / by["Phoenix"].short["p99"]]
    s = summary(rows)
    assert s["p99_ratio_vs_eagle_c"] == pytest.approx(ratios(rows, "Eagle-C")[0])
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)


def test_cli_writes_the_report(traces_dir_module: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "phoenix", "--traces", str(traces_dir_module), "--servers", "300", "--loads", "2",
                 "--seeds", "1", "--limit", "120", "--policy", "Eagle-C", "--policy", "Phoenix", "--policy", "Sparrow-C",
                 "--out", str(tmp_path), "--quiet"])
    assert code == 0
    doc = json.loads((tmp_path / "phoenix-results.json").read_text())
    assert doc["command"].startswith("harvester evaluate phoenix --traces") and "--limit 120" in doc["command"]
    assert {r["policy"] for r in doc["rows"]} == {"Eagle-C", "Phoenix", "Sparrow-C"}
    md = (tmp_path / "phoenix-results.md").read_text()
    assert "| Eagle-C p99 / Phoenix p99 (short jobs) | 1.9 |" in md and "## Measured load" in md
    assert (tmp_path / "img" / "phoenix-p99.png").stat().st_size > 10_000
    assert "p99_ratio_vs_eagle_c" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--traces", "/nonexistent"], "traces not found"),
    (["--policy", "Yacc-d"], "unknown policy 'Yacc-d'"),
    (["--short-partition", "1.5"], "--short-partition in [0, 1)"),
])
def test_cli_refuses_bad_arguments(traces_dir_module: Path, args, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["evaluate", "phoenix", "--traces", str(traces_dir_module)]
    assert main(base + args) == 2
    assert message in capsys.readouterr().err

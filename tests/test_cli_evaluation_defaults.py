"""Issue 25, the evaluations on a fresh clone: without --traces they read the samples vendored in
the repository (and say so, naming the files cut for size), without --out they write under
var/eval/<name> — never into the tracked docs/evaluation —, a missing trace is one line and exit
2 (it was a 50-line traceback from the process pool), and every command spells the same option
the same way (--processes, --seeds lists) with the old spellings kept as deprecated aliases."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from harvester.cli import build_parser, main

TINY_TRACES = {
    "name": "tiny-traces", "seed": 1, "duration_s": 2400, "drain_s": 2400, "start_time": 1375315200,
    "cluster": {"servers": 16, "cores": 8},
    "tenants": {"source": "traces", "count": 4, "history_s": 86400, "allow_generated": True,
                "traces": [{"format": "bitbrains", "path": "bitbrains-rnd-7d/bitbrains_rnd_2013-08_7days_500vms.csv.gz"}]},
    "workload": {"synthetic": {"jobs": 15, "max_tasks_per_stage": 20}, "target_utilization": 0.4,
                 "target_basis": "cluster", "allow_rescaled_durations": True},
    "policy": {"name": "harvester.sim.harvest:algorithm1", "params": {}},
    "controller": {"factory": "harvester.sim.live:loops", "period_s": 60, "offset_s": 6, "include_containers": False},
}


def _vendored() -> Path:
    from harvester.eval_paths import VENDORED_TRACES  # imported late: absent before issue 25

    return VENDORED_TRACES


@pytest.fixture()
def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny scenario naming a vendored trace by its relative path, in a folder without traces,
    run from a current directory like a fresh clone's (no ../shared)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARVESTER_TRACES_DIR", raising=False)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY_TRACES), encoding="utf-8")
    return path


def test_evaluate_harvesting_reads_the_vendored_traces_and_writes_under_var_eval(
        scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "harvesting", "--scenario", str(scenario), "--levels", "0.3", "--seeds", "1",
                 "--policy", "yarn-h", "--processes", "1", "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "traces from the samples vendored in the repository" in out.out
    assert "CUT for size: bitbrains-rnd-7d/bitbrains_rnd_2013-08_7days_500vms.csv.gz" in out.out
    assert (tmp_path / "var" / "eval" / "harvesting" / "harvesting-results.md").is_file()
    assert not (tmp_path / "docs").exists(), "never the tracked docs/evaluation by default"


def test_a_missing_trace_is_one_line_and_exit_2(scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    code = main(["evaluate", "harvesting", "--scenario", str(scenario), "--levels", "0.3", "--seeds", "1",
                 "--policy", "yarn-h", "--processes", "1", "--quiet", "--traces", str(tmp_path / "empty")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "no such trace file 'bitbrains-rnd-7d/" in err


def test_evaluate_phoenix_runs_on_a_fresh_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["evaluate", "phoenix", "--limit", "150", "--servers", "300", "--loads", "1.5", "--seeds", "1",
                 "--policy", "FIFO", "--quiet"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "traces from the samples vendored" in out.out and "CUT" not in out.out, "the Yahoo traces are whole"
    assert (tmp_path / "var" / "eval" / "phoenix" / "phoenix-results.md").is_file() and not (tmp_path / "docs").exists()


@pytest.mark.parametrize(("argv", "name"), [
    (["evaluate", "harvesting"], "harvesting"), (["evaluate", "phoenix"], "phoenix"),
    (["evaluate", "morpheus"], "morpheus"), (["hdfs", "evaluate"], "hdfs"),
])
def test_every_evaluation_defaults_to_the_vendored_traces_and_var_eval(argv: list[str], name: str) -> None:
    args = build_parser().parse_args(argv)
    assert args.traces == _vendored() and args.out == Path("var") / "eval" / name


def test_evaluate_jockey_too(tmp_path: Path) -> None:
    from harvester.sim.jockey.evaluate import build_parser as jockey_parser

    args = jockey_parser().parse_args([])
    assert args.traces == _vendored() and args.out == Path("var") / "eval" / "jockey"


# --- one spelling ------------------------------------------------------------------------------

PROCESSES = [["evaluate", "harvesting"], ["evaluate", "phoenix"], ["evaluate", "morpheus"], ["hdfs", "evaluate"],
             ["sweep", "--scenario", "s.yaml"]]


@pytest.mark.parametrize("argv", PROCESSES, ids=[" ".join(a[:2]) for a in PROCESSES])
def test_processes_is_the_one_spelling_of_local_processes(argv: list[str]) -> None:
    assert build_parser().parse_args([*argv, "--processes", "3"]).processes == 3


@pytest.mark.parametrize("argv", [a for a in PROCESSES if a[1] != "phoenix"], ids=lambda a: " ".join(a[:2]))
def test_workers_still_works_with_a_warning(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args([*argv, "--workers", "3"]).processes == 3
    assert "--workers is deprecated; use --processes" in capsys.readouterr().err


def test_phoenix_cluster_size_is_servers(capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["evaluate", "phoenix", "--servers", "500"]).servers == 500
    args = build_parser().parse_args(["evaluate", "phoenix", "--workers", "500"])
    assert args.servers == 500 and args.processes == 1
    err = capsys.readouterr().err
    assert "--workers is deprecated here: it is the simulated cluster's size" in err and "--servers" in err


def test_jockey_takes_the_shared_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    from harvester.sim.jockey.evaluate import build_parser as jockey_parser, seeds_of

    def parse(*argv: str) -> tuple[argparse.Namespace, tuple[int, ...]]:
        args = jockey_parser().parse_args(list(argv))
        return args, seeds_of(args.seeds, list(argv), "jockey")

    args, seeds = parse("--seeds", "3,5", "--processes", "4", "--job-count", "6", "--cpa-levels", "12")
    assert seeds == (3, 5) and (args.processes, args.job_count, args.cpa_levels) == (4, 6, 12)
    assert capsys.readouterr().err == ""
    assert parse("--seeds", "2-4")[1] == (2, 3, 4) and parse("--seeds", "4-4")[1] == (4,)
    args, seeds = parse("--seeds", "3", "--workers", "2", "--jobs", "5", "--levels", "8")
    assert seeds == (0, 1, 2) and (args.processes, args.job_count, args.cpa_levels) == (2, 5, 8)
    err = capsys.readouterr().err
    assert "--seeds 3 as a count is deprecated" in err and "--workers is deprecated" in err
    assert "--jobs is deprecated" in err and "--levels is deprecated" in err


def test_integer_lists_take_ranges() -> None:
    assert build_parser().parse_args(["evaluate", "harvesting", "--seeds", "1-3,7"]).seeds == [1, 2, 3, 7]

"""`harvester simulate`, `sweep`, `evaluate harvesting|phoenix|jockey|morpheus`, `simulate-fit` (registered by harvester/cli.py).

Exit status: 0 ok, 1 runtime failure (one line), 2 bad scenario or arguments (one line naming
the key). Progress goes to stderr, only when stderr is a terminal and --quiet is not given.
Everything but argparse is imported inside the commands: `harvester --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Callable

from harvester.arglists import add_number_list, add_processes
from harvester.eval_paths import add_traces_and_out, traces_note
from harvester.sim.formats import JOB_FORMAT_NAMES, UTILIZATION_FORMAT_NAMES
from harvester.cli_morpheus import register as register_morpheus
from harvester.cli_phoenix import register as register_phoenix

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


def _fail(code: int, message: str) -> int:
    from harvester.cli_common import fail

    return fail(code, message)


def _trace_arg(text: str, formats: tuple[str, ...], flag: str) -> dict[str, str]:
    from harvester.sim.scenario import ScenarioError

    fmt, sep, path = text.partition("=")
    if not sep or fmt not in formats:
        raise ScenarioError(f"{flag} {text!r}: expected FORMAT=PATH with FORMAT one of {', '.join(formats)}")
    return {"format": fmt, "path": str(Path(path).resolve())}


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    import yaml

    from harvester.sim.scenario import ScenarioError

    over: dict[str, Any] = {}
    for item in args.set or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE")
        over[key] = yaml.safe_load(raw)
    if args.utilization:
        over["tenants.source"] = "traces"
        over["tenants.traces"] = [_trace_arg(u, UTILIZATION_FORMAT_NAMES, "--utilization") for u in args.utilization]
    if args.jobs:
        over["workload.source"] = "trace"
        over["workload.trace"] = _trace_arg(args.jobs, JOB_FORMAT_NAMES, "--jobs")
    return over


def cmd_simulate(args: argparse.Namespace) -> int:
    from harvester.sim.metrics.report import format_summary, summarize, write_outputs
    from harvester.sim.policies import PolicyError
    from harvester.sim.scenario import ScenarioError, load_scenario
    from harvester.sim.simulation import Simulation
    from harvester.sim.traces import TraceError

    try:
        over = _overrides(args)
        if args.seed is not None:
            over["seed"] = args.seed
        if args.no_plots:
            over["outputs.plots"] = False
        sc = load_scenario(args.scenario, over)
        sim = Simulation(sc, traces_dir=args.traces, base_dir=Path(args.scenario).resolve().parent)
    except (ScenarioError, TraceError) as exc:
        return _fail(EXIT_CONFIG, f"scenario error: {exc}")
    try:
        result = sim.run(progress=not args.quiet)
    except PolicyError as exc:
        return _fail(EXIT_FAILURE, f"simulation failed: {exc}")
    summary = summarize(result)
    out = args.out or Path("var") / "sim" / sc.name / f"seed{sc.seed}"
    try:
        write_outputs(out, result, summary)
    except OSError as exc:
        return _fail(EXIT_FAILURE, f"cannot write results to {out}: {exc}")
    print(format_summary(summary))
    print(f"results: {out}")
    return EXIT_OK


def _pooled(args: argparse.Namespace, run: Callable[[Executor, bool], list[dict[str, Any]]]) -> list[dict[str, Any]] | int:
    """`run(executor, quiet)` on a process pool or Dask (--processes / --dask); an exit code if
    that fails: 2 and one line for a scenario or trace a worker could not use (a missing trace
    file gave a 50-line traceback from the pool), 1 for a failed run."""
    from harvester.sim.scenario import ScenarioError
    from harvester.sim.sweep import make_executor
    from harvester.sim.traces import TraceError

    try:
        with make_executor(args.processes, args.dask) as ex:
            return run(ex, args.quiet)
    except (ScenarioError, TraceError) as exc:
        return _fail(EXIT_CONFIG, f"scenario error: {exc}")
    except RuntimeError as exc:
        return _fail(EXIT_FAILURE, str(exc))


def cmd_sweep(args: argparse.Namespace) -> int:
    import yaml

    from harvester.sim.metrics.plots import plot_job_cdf
    from harvester.sim.metrics.report import format_table, write_csv
    from harvester.sim.scenario import ScenarioError, parse_scenario, read_yaml, set_path
    from harvester.sim.sweep import SWEEP_COLUMNS, grid, run_sweep

    try:
        over = _overrides(args)
        scenarios = []
        for path in args.scenario:
            data = read_yaml(path)
            if isinstance(data, dict):
                for k, v in over.items():
                    set_path(data, k, v)
            parse_scenario(json.loads(json.dumps(data)), where=str(path))  # fail fast, before any worker starts
            scenarios.append((str(path), data))
        params: dict[str, list[Any]] = {}
        for item in args.param or []:
            key, sep, raw = item.partition("=")
            if not sep or not key:
                raise ScenarioError(f"--param {item!r}: expected KEY=V1,V2,...")
            params[key] = [yaml.safe_load(v) for v in raw.split(",")]
        cells = grid(scenarios, policies=args.policy or [], params=params, seeds=args.seeds or [],
                     traces_dir=str(Path(args.traces).resolve()) if args.traces else None)
        for c in cells:  # validate every combination up front: exit 2 names the bad key
            parse_scenario(json.loads(json.dumps(dict(c.scenario))), where=c.where, overrides=c.overrides)
    except ScenarioError as exc:
        return _fail(EXIT_CONFIG, f"scenario error: {exc}")
    rows = _pooled(args, lambda ex, quiet: run_sweep(cells, ex, quiet=quiet))
    if isinstance(rows, int):
        return rows
    param_cols = sorted({k for r in rows for k in r if k.startswith("param:")})
    columns = [*SWEEP_COLUMNS[:3], *param_cols, *SWEEP_COLUMNS[3:]]
    out = args.out or Path("var") / "sim" / "sweep"
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "sweep.csv", columns, [[r.get(c) for c in columns] for r in rows])
    (out / "sweep.json").write_text(json.dumps([{k: v for k, v in r.items() if k not in ("job_exec_s", "job_unfinished_s")} for r in rows],
                                               indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if len(rows) <= 16:
        labels = {f"{r['policy']} s{r['seed']} {' '.join(str(r[c]) for c in param_cols)}".strip(): r["job_exec_s"] for r in rows}
        plot_job_cdf(labels, out / "job_time_cdf.png", title="job execution time")
    print(format_table(rows, columns))
    print(f"results: {out}")
    return EXIT_OK


def cmd_fit(args: argparse.Namespace) -> int:
    from harvester.sim.fit import fit_all
    from harvester.sim.synthetic import DATA_DIR
    from harvester.sim.traces import TraceError

    try:
        pat, wl = fit_all(args.traces, args.out or DATA_DIR, args.limit)
    except (TraceError, OSError, ValueError) as exc:
        return _fail(EXIT_FAILURE, f"fit failed: {exc}")
    print(f"wrote {pat} and {wl}")
    return EXIT_OK


def cmd_evaluate_harvesting(args: argparse.Namespace) -> int:
    from harvester.sim.harvest.evaluate import (DEFAULT_LEVELS, DEFAULT_POLICIES, DEFAULT_SCENARIO, DEFAULT_SEEDS, load_plan,
                                                missing_cells, run_plan)
    from harvester.sim.harvest.report import write_report
    from harvester.sim.scenario import ScenarioError

    scenario = args.scenario or DEFAULT_SCENARIO
    try:
        plan = load_plan(scenario, levels=args.levels or DEFAULT_LEVELS, policies=args.policy or DEFAULT_POLICIES,
                         seeds=args.seeds or DEFAULT_SEEDS, overrides=_overrides(args),
                         traces_dir=str(Path(args.traces).resolve()))
    except ScenarioError as exc:
        return _fail(EXIT_CONFIG, f"scenario error: {exc}")
    note = traces_note(args.traces, [json.dumps(plan.scenario, default=str), *(args.utilization or [])])
    if note:
        print(note, flush=True)
    if args.saved_only:
        if args.runs is None:
            return _fail(EXIT_CONFIG, "--saved-only reports from saved runs: give --runs DIR")
        try:
            rows = run_plan(plan, None, runs_dir=args.runs)
        except RuntimeError as exc:
            return _fail(EXIT_FAILURE, str(exc))
        if not rows:
            return _fail(EXIT_FAILURE, f"no saved run in {args.runs} matches this plan (same scenario, overrides and traces)")
    else:
        rows = _pooled(args, lambda ex, quiet: run_plan(plan, ex, quiet=quiet, runs_dir=args.runs))
    if isinstance(rows, int):
        return rows
    not_run = missing_cells(plan, rows)
    if not_run:
        print(f"not run ({len(not_run)} cells): " + "; ".join(not_run), file=sys.stderr)
    out = args.out
    try:
        files = write_report(out, rows, command=_evaluate_command(args), scenario=str(scenario), not_run=not_run)
    except OSError as exc:
        return _fail(EXIT_FAILURE, f"cannot write the report to {out}: {exc}")
    print((out / "harvesting-results.md").read_text(encoding="utf-8").split("## Every run")[0].rstrip())
    print("wrote " + ", ".join(str(f) for f in files))
    return EXIT_OK


def cmd_evaluate_jockey(args: argparse.Namespace) -> int:
    from harvester.sim.jockey.evaluate import main

    return main(args.args, prog="harvester evaluate jockey")


def _evaluate_command(args: argparse.Namespace) -> str:
    """The command line that reproduces this evaluation (for the report)."""
    parts = ["harvester evaluate harvesting"]
    if args.scenario:
        parts.append(f"--scenario {args.scenario}")
    parts.append(f"--traces {args.traces}")
    parts += [f"--utilization {u}" for u in args.utilization or []] + ([f"--jobs {args.jobs}"] if args.jobs else [])
    if args.levels:
        parts.append("--levels " + ",".join(f"{x:g}" for x in args.levels))
    parts += [f"--policy {p}" for p in args.policy or []]
    if args.seeds:
        parts.append("--seeds " + ",".join(str(x) for x in args.seeds))
    parts += [f"--set {x}" for x in args.set or []]
    if args.runs:
        parts.append(f"--runs {args.runs}" + (" --saved-only" if args.saved_only else ""))
    parts.append(f"--out {args.out}")
    return " ".join(parts)


def _common(p: argparse.ArgumentParser, evaluation: str | None = None) -> None:
    """The scenario options of simulate, sweep and `evaluate harvesting` (`evaluation`: its
    --traces and --out defaults are the evaluations', harvester/eval_paths.py)."""
    if evaluation:
        add_traces_and_out(p, evaluation, "the trace paths the scenario names (relative paths resolve against it)")
    else:
        p.add_argument("--traces", type=Path, default=None, help="folder relative trace paths resolve against")
    p.add_argument("--utilization", action="append", metavar="FORMAT=PATH",
                   help=f"use this utilization trace for the primary tenants (repeatable; {', '.join(UTILIZATION_FORMAT_NAMES)})")
    p.add_argument("--jobs", metavar="FORMAT=PATH", help=f"use this job trace ({', '.join(JOB_FORMAT_NAMES)})")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario key, e.g. cluster.servers=500")
    if not evaluation:
        p.add_argument("--out", type=Path, default=None, help="output folder")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def register(sub: Any) -> None:
    """Add the simulator's commands to the `harvester` CLI's subparsers."""
    p = sub.add_parser("simulate", help="run a simulation scenario (YAML) and print its summary")
    p.add_argument("--scenario", type=Path, required=True, help="scenario YAML (see deploy/scenarios/)")
    p.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    p.add_argument("--no-plots", action="store_true", help="skip PNG figures")
    _common(p)
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("sweep", help="run scenario x policy x parameter x seed in parallel, one table")
    p.add_argument("--scenario", type=Path, action="append", required=True, help="scenario YAML (repeatable)")
    p.add_argument("--policy", action="append", help="policy name (repeatable)")
    p.add_argument("--param", action="append", metavar="KEY=V1,V2", help="sweep a scenario key over values (repeatable)")
    add_number_list(p, "--seeds", int, help="seeds")
    add_processes(p, None)
    p.add_argument("--dask", metavar="ADDRESS", default=None, help="run on this Dask scheduler (needs harvester[dask])")
    _common(p)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("evaluate", help="evaluation reports run in the simulator (docs/evaluation)")
    esub = p.add_subparsers(dest="evaluation", required=True)
    e = esub.add_parser("harvesting", help="YARN-H vs yarn-pt (same guard, stock placement), fixed-reserve and stock YARN")
    e.add_argument("--scenario", type=Path, default=None, help="evaluation scenario (default deploy/scenarios/harvesting-eval.yaml)")
    add_number_list(e, "--levels", float, help="primary utilization levels (default 0.2,0.35,0.5,0.8)")
    e.add_argument("--policy", action="append",
                   help="policy to run (repeatable; default stock-yarn, fixed-reserve, yarn-pt, yarn-h; also yarn-h-wait)")
    add_number_list(e, "--seeds", int, help="seeds (default 1,2,3)")
    add_processes(e, None)
    e.add_argument("--dask", metavar="ADDRESS", default=None, help="run on this Dask scheduler (needs harvester[dask])")
    e.add_argument("--runs", type=Path, default=None, metavar="DIR",
                   help="save each finished run here and reuse saved runs with the same inputs (resume a stopped evaluation)")
    e.add_argument("--saved-only", action="store_true",
                   help="run nothing: report the plan's runs saved in --runs, listing the cells not run")
    _common(e, evaluation="harvesting")
    e.set_defaults(func=cmd_evaluate_harvesting)
    register_phoenix(esub)  # harvester evaluate phoenix (harvester/cli_phoenix.py)
    # harvester evaluate jockey ARGS…: the arguments are python -m harvester.sim.jockey.evaluate's
    # own (parsed there, so that registering them here does not import the simulator)
    e = esub.add_parser("jockey", add_help=False, prefix_chars="+",
                        help="Jockey (C(p,a) control) vs static quotas on the Alibaba DAGs (`harvester evaluate jockey --help`)")
    e.add_argument("args", nargs="*", metavar="ARG", help="see `harvester evaluate jockey --help`")
    e.set_defaults(func=cmd_evaluate_jockey)
    register_morpheus(esub)  # harvester evaluate morpheus (harvester/cli_morpheus.py)

    p = sub.add_parser("simulate-fit", help="refit the simulator's generators to the staged traces")
    p.add_argument("--traces", type=Path, required=True, help="the staged traces folder (../shared/traces)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: harvester/sim/data)")
    p.add_argument("--limit", type=int, default=None, help="rows per trace file (quick checks)")
    p.set_defaults(func=cmd_fit)

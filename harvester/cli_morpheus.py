"""`harvester evaluate morpheus` / `python -m harvester.cli_morpheus` (registered by
harvester/cli_sim.py). Only argparse here: the simulator is imported when the command runs.

Exit status: 0 ok, 1 runtime failure, 2 bad arguments or traces (one line).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any, Sequence

from harvester.arglists import add_number_list, add_processes
from harvester.eval_paths import add_traces_and_out, default_out, traces_note

DEFAULT_OUT = default_out("morpheus")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_traces_and_out(p, "morpheus", "alibaba-2018-batch-dags/")
    p.add_argument("--workload", choices=("alibaba-2018", "alibaba-2017"), default="alibaba-2018",
                   help="alibaba-2018: the daily DAG jobs (default); alibaba-2017: the hourly batch jobs")
    add_number_list(p, "--sweep", float, help="plan capacities for the cluster-size sweep (Fig. 10a), as fractions of "
                                              "the p95 baseline's largest peak, e.g. 0.1,0.2,0.3,0.5,1 (default: none)")
    p.add_argument("--policies", default=None, help="reservation policies, comma-separated (default: morpheus,"
                                                    "morpheus+dra,greedy,greedy+dra)")
    p.add_argument("--early-start", default=None, help="ablation: when a run starts at once on its static share "
                                                       "before its window, comma-separated of cannot-hold, "
                                                       "over-before-window, or none (default: both)")
    add_number_list(p, "--alphas", float, help="skyline LP α values (default 0.001,0.01,0.1,0.5)")
    add_number_list(p, "--seeds", int, help="seeds (default 1,2,3)")
    p.add_argument("--min-days", type=int, default=None, help="periods with a run for a job to count (default: 6 days, "
                                                                   "10 hours)")
    add_number_list(p, "--slack", float, help="the consumers' slack ratio range LO,HI, U(LO, HI) per job (default 0.25,3)")
    p.add_argument("--tick", type=float, default=20.0, help="DRA's look at the running jobs, seconds (default 20)")
    p.add_argument("--job", action="append", default=None, help="only this job (repeatable; names as in the report)")
    add_processes(p, 1, "local worker processes, one seed each (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harvester.cli_morpheus", description=__doc__.splitlines()[0])
    add_arguments(p)
    return p


def register(esub: Any) -> None:
    """Add `evaluate morpheus` to the `harvester evaluate` subcommands."""
    e = esub.add_parser("morpheus", help="Morpheus (with and without DRA, several α) vs static provisioning "
                                         "on the Alibaba 2018 daily (or 2017 hourly) recurring jobs")
    add_arguments(e)
    e.set_defaults(func=run_command)


def command_line(args: argparse.Namespace) -> str:
    parts = ["harvester evaluate morpheus", f"--traces {args.traces}"]
    if args.workload != "alibaba-2018":
        parts.append(f"--workload {args.workload}")
    if args.sweep:
        parts.append("--sweep " + ",".join(f"{x:g}" for x in args.sweep))
    if args.policies:
        parts.append(f"--policies {args.policies}")
    if args.early_start:
        parts.append(f"--early-start {args.early_start}")
    if args.alphas:
        parts.append("--alphas " + ",".join(f"{x:g}" for x in args.alphas))
    if args.seeds:
        parts.append("--seeds " + ",".join(str(x) for x in args.seeds))
    if args.min_days is not None:
        parts.append(f"--min-days {args.min_days}")
    if args.slack:
        parts.append("--slack " + ",".join(f"{x:g}" for x in args.slack))
    if args.tick != 20.0:
        parts.append(f"--tick {args.tick:g}")
    parts += [f"--job {shlex.quote(j)}" for j in args.job or []]
    if args.processes != 1:
        parts.append(f"--processes {args.processes}")
    if args.out != DEFAULT_OUT:
        parts.append(f"--out {args.out}")
    return " ".join(parts)


def run_command(args: argparse.Namespace) -> int:
    from harvester.decisions.static_fallback import EARLY_START
    from harvester.sim.morpheus.evaluate import RESERVING, EvalPlan, run_plan
    from harvester.sim.morpheus.report import write_report
    from harvester.sim.morpheus.workload import WORKLOADS
    from harvester.sim.traces import TraceError

    trace = WORKLOADS[args.workload].trace
    if not (args.traces / trace).is_file():
        print(f"harvester: traces not found: {args.traces / trace} (give --traces DIR)", file=sys.stderr)
        return 2
    alphas = args.alphas or EvalPlan.alphas
    slack = args.slack or EvalPlan.slack
    policies = tuple(p.strip() for p in args.policies.split(",")) if args.policies else EvalPlan.policies
    early = EvalPlan.early_start if args.early_start is None else \
        tuple(x.strip() for x in args.early_start.split(",") if x.strip() not in ("", "none"))
    if not alphas or any(not 0 <= a <= 1 for a in alphas) or (args.min_days is not None and args.min_days < 2) \
            or not 0 < args.tick <= 60 or 60 % args.tick or len(slack) != 2 or not 0 <= slack[0] <= slack[1] \
            or any(f <= 0 for f in args.sweep or ()) or not policies or any(p not in RESERVING for p in policies) \
            or any(x not in EARLY_START for x in early):
        print("harvester: --alphas in [0, 1], --min-days >= 2, --tick in (0, 60] dividing 60, --slack LO,HI with "
              f"0 <= LO <= HI, --sweep fractions > 0, --policies of {', '.join(RESERVING)}, --early-start of "
              f"{', '.join(EARLY_START)} or none", file=sys.stderr)
        return 2
    note = traces_note(args.traces, [trace])
    if note:
        print(note, flush=True)
    plan = EvalPlan(traces_dir=args.traces, alphas=tuple(alphas), seeds=tuple(args.seeds or EvalPlan.seeds),
                    min_days=args.min_days, tick_s=args.tick, slack=(slack[0], slack[1]), jobs=tuple(args.job or ()),
                    workload=args.workload, sweep=tuple(args.sweep or ()), policies=policies, early_start=early)
    try:
        results = run_plan(plan, args.processes, progress=not args.quiet)
    except (TraceError, ValueError) as exc:
        print(f"harvester: evaluation failed: {exc}", file=sys.stderr)
        return 1
    if not any(r.rows for r in results):
        print("harvester: evaluation failed: no job was evaluated (no daily recurring job, or none actionable)",
              file=sys.stderr)
        return 1
    files = write_report(args.out, plan, results, command_line(args))
    print(files[0].read_text(encoding="utf-8").split("## Per job")[0].rstrip())
    print("wrote " + ", ".join(str(f) for f in files))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_command(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())

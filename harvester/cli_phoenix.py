"""`harvester evaluate phoenix` / `python -m harvester.cli_phoenix` (registered by
harvester/cli_sim.py). Only argparse here: the simulator is imported when the command runs.

Exit status: 0 ok, 1 runtime failure, 2 bad arguments or traces (one line).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any, Sequence

from harvester.arglists import add_deprecated, add_number_list, add_processes
from harvester.eval_paths import add_traces_and_out, default_out, traces_note

DEFAULT_OUT = default_out("phoenix")
SERVERS = 15000


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_traces_and_out(p, "phoenix", "hawk-eagle-shortjob-subtraces/")
    p.add_argument("--servers", type=int, default=SERVERS, help=f"the simulated cluster's one-slot workers (default "
                                                                 f"{SERVERS}, as the paper)")
    add_deprecated(p, "--workers", "--servers", dest="servers", kind=int,
                   why=" here: it is the simulated cluster's size (local worker processes are --processes)")
    add_number_list(p, "--loads", float, help="offered loads (default 1.5,3)")
    add_number_list(p, "--seeds", int, help="seeds (default 1,2,3)")
    p.add_argument("--policy", action="append", default=None,
                   help="policy to run (repeatable; default all but the first review's M/G/1 variants)")
    p.add_argument("--short-partition", type=float, default=0.02,
                   help="share of workers only short jobs use (Eagle/Hawk/Phoenix; default 0.02, the Eagle simulator's Yahoo setting)")
    p.add_argument("--constrained-fraction", type=float, default=None,
                   help="share of short jobs with a Table II constraint (default 0.7881, the Phoenix-derived simulator's)")
    p.add_argument("--limit", type=int, default=None, help="jobs per trace (quick checks)")
    add_processes(p, 1, alias=False)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harvester.cli_phoenix", description=__doc__.splitlines()[0])
    add_arguments(p)
    return p


def register(esub: Any) -> None:
    """Add `evaluate phoenix` to the `harvester evaluate` subcommands."""
    e = esub.add_parser("phoenix", help="Phoenix (CRV, M/G/1) vs FIFO, Sparrow-C, Eagle-C on the Yahoo short-job traces")
    add_arguments(e)
    e.set_defaults(func=run_command)


def command_line(args: argparse.Namespace) -> str:
    parts = ["harvester evaluate phoenix", f"--traces {args.traces}"]
    if args.servers != SERVERS:
        parts.append(f"--servers {args.servers}")
    if args.loads:
        parts.append("--loads " + ",".join(f"{x:g}" for x in args.loads))
    if args.seeds:
        parts.append("--seeds " + ",".join(str(x) for x in args.seeds))
    parts += [f"--policy {shlex.quote(p)}" for p in args.policy or []]
    if args.short_partition != 0.02:
        parts.append(f"--short-partition {args.short_partition:g}")
    if args.constrained_fraction is not None:
        parts.append(f"--constrained-fraction {args.constrained_fraction:g}")
    if args.limit:
        parts.append(f"--limit {args.limit}")
    if args.processes != 1:
        parts.append(f"--processes {args.processes}")
    if args.out != DEFAULT_OUT:
        parts.append(f"--out {args.out}")
    return " ".join(parts)


def run_command(args: argparse.Namespace) -> int:
    from harvester.sim.phoenix.evaluate import POLICIES, TRACE_DIR, TRACES, Plan, run_plan, summary
    from harvester.sim.phoenix.report import write_report
    from harvester.sim.traces import TraceError

    missing = [t for t in TRACES if not (args.traces / TRACE_DIR / t).is_file()]
    if missing:
        print(f"harvester: traces not found: {args.traces / TRACE_DIR} lacks {', '.join(missing)} (give --traces DIR)",
              file=sys.stderr)
        return 2
    unknown = sorted(set(args.policy or ()) - set(POLICIES))
    if unknown:
        print(f"harvester: unknown policy {unknown[0]!r} (known: {', '.join(POLICIES)})", file=sys.stderr)
        return 2
    if args.servers < 1 or not 0 <= args.short_partition < 1 or not 0 <= (args.constrained_fraction or 0) <= 1:
        print("harvester: --servers >= 1, --short-partition in [0, 1), --constrained-fraction in [0, 1]", file=sys.stderr)
        return 2
    note = traces_note(args.traces, [f"{TRACE_DIR}/{t}" for t in TRACES])
    if note:
        print(note, flush=True)
    fraction = Plan.constrained_fraction if args.constrained_fraction is None else args.constrained_fraction
    plan = Plan(traces_dir=args.traces, workers=args.servers, loads=tuple(args.loads or Plan.loads),
                seeds=tuple(args.seeds or Plan.seeds), policies=tuple(args.policy or Plan.policies),
                short_partition=args.short_partition,
                constrained_fraction=fraction, limit=args.limit)
    try:
        rows = run_plan(plan, args.processes, progress=not args.quiet)
    except (TraceError, ValueError) as exc:
        print(f"harvester: evaluation failed: {exc}", file=sys.stderr)
        return 1
    files = write_report(args.out, plan, rows, command_line(args))
    for k, v in summary(rows).items():
        print(f"{k}: {v:.3f}")
    print("wrote " + ", ".join(str(f) for f in files))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_command(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())

"""`harvester whatif [--config FILE | --store PATH] [--days N] [--policies a,b] [--out DIR]
[--processes N] [--progress-json PATH]`: replay the history store through the simulator (issue 28).

The store is the settings file's (`store.path`; no --config: the embedded default's, the one
`make run` fills) or `--store PATH` (read with the embedded default's harvesting settings unless
--config is given too). Writes `<out>/whatif.json`, `<out>/whatif.md` and figures; default out
`var/whatif/<UTC timestamp>`. Progress: a bar on a terminal's stderr; `--progress-json PATH`
(atomic JSON, whatif/progress.py) for another process; a failure ends it with stage "failed: <why>". Exit 0 ok, 1 a run failed, 2 bad input
(missing or empty store, too little history, bad settings or options) with one line.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from harvester.cli_common import EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, fail


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("whatif", help="replay the sidecar's history through the simulator: what each technique "
                                      "would give on this cluster (docs/whatif.md)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", default=None, help="settings file: its store, tenant rules, node sizes and "
                                                    "harvesting settings (default: the embedded default)")
    src.add_argument("--store", default=None, help="history store file to read (with the embedded default's settings)")
    p.add_argument("--days", type=float, default=7.0, help="days of history to replay, ending at the newest (default 7); "
                                                           "the class model's window before them is the loops' past")
    p.add_argument("--policies", default=None, help="comma list of stock, yarn-pt, yarn-h, fixed-reserve, morpheus, "
                                                    "hdfs-h (default: all)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default var/whatif/<UTC timestamp>)")
    p.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--progress-json", type=Path, default=None, help="write progress as JSON to this file (atomically)")
    p.add_argument("--no-recommend", action="store_true", help="skip the reserve-quantile runs (yarn-pt at the "
                                                               "neighbouring quantiles, yarn-h at the recommended one)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_whatif)


def cmd_whatif(args: argparse.Namespace) -> int:
    from harvester.config import ConfigError, load_settings
    from harvester.observability.progress import interactive
    from harvester.whatif.progress import ProgressFile

    if args.processes < 1:
        return fail(EXIT_CONFIG, f"--processes: must be at least 1, got {args.processes}")
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        return fail(EXIT_CONFIG, str(exc))
    from harvester.app import harvesting_settings
    from harvester.whatif import WhatifInputError, run_whatif

    if args.store is None and settings.store.backend == "memory":
        return fail(EXIT_CONFIG, "store.backend is memory: the history lives in the sidecar's process; "
                                 "pass --store PATH of a SQLite store")
    store = Path(args.store) if args.store else Path(settings.store.path)
    out = args.out or Path("var/whatif") / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    progress = ProgressFile(args.progress_json, bar=not args.quiet and interactive())
    try:
        doc = run_whatif(store, harvesting=harvesting_settings(settings),
                         poll_interval_s=settings.telemetry.poll_interval_s, days=args.days, policies=args.policies,
                         out=out, processes=args.processes, recommend=not args.no_recommend, progress=progress)
    except WhatifInputError as exc:
        progress(progress.fraction, f"failed: {exc}")
        return fail(EXIT_CONFIG, str(exc))
    except Exception as exc:  # noqa: BLE001 - one line, exit 1 (a run failed)
        progress(progress.fraction, f"failed: {type(exc).__name__}: {exc}")
        return fail(EXIT_FAILURE, f"whatif failed: {type(exc).__name__}: {exc}")
    finally:
        progress.close()
    for v in doc["verdicts"]:
        print(v["line"])
    print(f"report: {out / 'whatif.md'} (json: {out / 'whatif.json'})")
    return EXIT_OK

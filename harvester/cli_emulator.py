"""`harvester emulator serve`: the YARN ResourceManager emulator alone, as a test double.

Serves Hadoop 3.3.6's RM REST API (docs/emulator.md) for `--size` NodeManagers
(`nm-00000:45454`, ... 8192 MB / 8 vcores on 8-core hosts, one rack) on `--host`/`--port`
(0 = a free port), on a clock running `--speed` times real time, seeded by `--seed` (NM
heartbeat, monitor and plan-follower phases). Prints its URL on stdout, serves until SIGINT or
SIGTERM, then stops cleanly. Apps, reservations and node updates come from clients over REST.
`--subclusters a,b` serves one such RM per name instead (emulator/subclusters.py), the same
node ids in each, on `--port`, `--port`+1, ... (0: free ports), printing `name url` lines.
"""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_CONFIG = 0, 2


def cmd_serve(args: argparse.Namespace) -> int:
    from harvester.cli_common import stop_on_signals, wait_until
    from harvester.clock import RealClock, ScaledClock
    from harvester.domain import Resources
    from harvester.emulator import Emulator, EmulatorConfig, EmulatorServer, Workload

    if args.size < 1 or args.speed <= 0:
        print("harvester: emulator serve needs --size >= 1 and --speed > 0", file=sys.stderr)
        return EXIT_CONFIG
    clock = RealClock() if args.speed == 1.0 else ScaledClock(speed=args.speed)
    if args.subclusters:
        return _serve_subclusters(args, clock)
    emu = Emulator(clock, EmulatorConfig(seed=args.seed))
    Workload(emu).add_cluster(args.size, Resources(args.node_memory_mb, args.node_vcores),
                              physical_cores=float(args.node_cores))
    stop = stop_on_signals()
    try:
        server = EmulatorServer(emu, args.host, args.port).start()
    except OSError as exc:
        print(f"harvester: cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(server.url, flush=True)
    print(f"YARN RM emulator: {args.size} NodeManagers, clock x{args.speed}, seed {args.seed}; Ctrl-C stops.",
          file=sys.stderr, flush=True)
    wait_until(stop)
    server.stop()
    return EXIT_OK


def _serve_subclusters(args: argparse.Namespace, clock: object) -> int:
    """`--subclusters a,b`: one RM per name (emulator/subclusters.py), on --port, --port + 1, ...
    (0: free ports); prints `name url` per line."""
    from harvester.cli_common import stop_on_signals, wait_until
    from harvester.config import SUBCLUSTER_NAME
    from harvester.domain import Resources
    from harvester.emulator.subclusters import start_subclusters
    import re

    names = [n.strip() for n in args.subclusters.split(",") if n.strip()]
    bad = [n for n in names if not re.match(SUBCLUSTER_NAME, n)]
    if not names or bad or len(set(names)) != len(names):
        print(f"harvester: --subclusters needs unique names of letters, digits, . _ - (got {args.subclusters!r})",
              file=sys.stderr)
        return EXIT_CONFIG
    stop = stop_on_signals()
    try:
        running = start_subclusters(clock, names, size=args.size, host=args.host, port=args.port,  # type: ignore[arg-type]
                                    node=Resources(args.node_memory_mb, args.node_vcores),
                                    physical_cores=float(args.node_cores), seed=args.seed)
    except OSError as exc:
        print(f"harvester: cannot serve on {args.host}:{args.port}...: {exc}", file=sys.stderr)
        return 1
    for name, url in running.urls().items():
        print(f"{name} {url}", flush=True)
    print(f"YARN RM emulator: {len(names)} sub-clusters of {args.size} NodeManagers each, clock x{args.speed}; "
          "Ctrl-C stops.", file=sys.stderr, flush=True)
    wait_until(stop)
    running.stop()
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("emulator", help="the YARN ResourceManager emulator as a stand-alone test double")
    esub = p.add_subparsers(dest="emulator_command", required=True, metavar="ACTION")
    s = esub.add_parser("serve", help="serve the RM REST API on a port until SIGINT/SIGTERM")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8088, help="port (0 = any free port; default 8088)")
    s.add_argument("--size", type=int, default=2, help="how many NodeManagers (default 2)")
    s.add_argument("--seed", type=int, default=0, help="seed of the heartbeat and monitor phases")
    s.add_argument("--speed", type=float, default=1.0, help="clock speed (60 = one real second is a minute)")
    s.add_argument("--node-memory-mb", type=int, default=8192, help="each NodeManager's memory (default 8192)")
    s.add_argument("--node-vcores", type=int, default=8, help="each NodeManager's vcores (default 8)")
    s.add_argument("--node-cores", type=int, default=8, help="physical cores of each NM's host (default 8)")
    s.add_argument("--subclusters", default="", metavar="A,B",
                   help="serve one RM per name (YARN Federation sub-clusters for rm.clusters), on --port, --port+1, ...; "
                        "prints 'name url' per line")
    s.set_defaults(func=cmd_serve)

"""The `harvester` command line (also `python -m harvester`).

Exit status: 0 ok, 1 runtime failure (one line on stderr), 2 bad configuration or usage.
Commands import what they need when they run, so `harvester --help` starts fast
(bench/cli_start.py measures it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from harvester import __version__

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


def _fail(code: int, message: str) -> int:
    print(f"harvester: {message}", file=sys.stderr)
    return code


def cmd_version(args: argparse.Namespace) -> int:
    print(f"harvester {__version__}")
    return EXIT_OK


def cmd_config_check(args: argparse.Namespace) -> int:
    from harvester.config import ConfigError, load_settings, schema_paths
    from harvester.preflight import PreflightError, preflight

    try:
        settings = load_settings(args.file)
        preflight(settings, bind=True)  # every check `serve` makes, so that ok means it starts
    except (ConfigError, PreflightError) as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    print(f"ok: {args.file} is valid ({len(schema_paths())} settings; cluster.source={settings.cluster.source})")
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from harvester.app import Harvester
    from harvester.config import ConfigError, load_settings
    from harvester.history.store import StoreError
    from harvester.observability.logs import configure_logging
    from harvester.preflight import PreflightError, listen_problem, preflight

    try:
        settings = load_settings(args.config)
        token = preflight(settings)
    except (ConfigError, PreflightError) as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    keytab = settings.kerberos.keytab
    configure_logging(settings.logging.level, settings.logging.format,
                      secrets=[s for s in (token, str(keytab) if keytab else None) if s])
    problem = listen_problem(settings)
    if problem is not None:
        return _fail(EXIT_FAILURE, f"cannot start: {problem}")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        app = Harvester(settings)
    except (StoreError, OSError, ValueError) as exc:  # ValueError: e.g. RMConfigError (Kerberos credentials)
        return _fail(EXIT_FAILURE, f"cannot start: {exc}")
    app.start()
    estimator = "" if app.estimator is None else f", Resource Estimator API {app.estimator.url}/resourceestimator/"
    print(
        f"harvester {__version__} serving: gRPC {app.grpc.address}, admin http://{app.admin.address} "
        f"(/healthz /readyz /metrics /status){estimator}; cluster source: {app.source.name}. Ctrl-C stops.",
        file=sys.stderr,
        flush=True,
    )
    stop.wait()
    app.stop()
    return EXIT_OK


Command = Callable[[argparse.Namespace], int]

#: Modules that add their own subcommands with `register(subparsers)`.
COMMAND_MODULES = (
    "harvester.cli_rm",        # rm nodes|apps|reservations|queues|record
    "harvester.cli_emulator",  # emulator serve
    "harvester.cli_estimator",  # estimator serve (the Hadoop Resource Estimator's REST API)
    "harvester.cli_tenants",   # tenants [--refit]
    "harvester.cli_explain",   # explain node|tenant|job|reservation ID
    "harvester.cli_hdfs",      # hdfs datanodes|table|choose|evaluate
    "harvester.cli_sim",       # simulate, sweep, evaluate harvesting|phoenix|jockey|morpheus, simulate-fit
    "harvester.cli_slo",       # slo list|show|accept|override|reject|reset
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harvester", description="History-based harvesting advisor for Hadoop 3.3.x.")
    parser.add_argument("--version", action="version", version=f"harvester {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("serve", help="run the sidecar (gRPC advice, admin HTTP, control loops)")
    p.add_argument("--config", type=Path, default=None, help="YAML settings file (default: the embedded default)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("config", help="configuration tools")
    csub = p.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    c = csub.add_parser("check", help="validate a settings file (exit 2 with one line if it is bad)")
    c.add_argument("file", type=Path)
    c.set_defaults(func=cmd_config_check)

    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub)

    p = sub.add_parser("version", help="print the version")
    p.set_defaults(func=cmd_version)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Command = args.func
    try:
        return func(args)
    except BrokenPipeError:
        # the reader went away (`harvester rm nodes | head`): not an error, and no traceback
        # when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())

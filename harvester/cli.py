"""The `harvester` command line (also `python -m harvester`).

Exit status: 0 ok, 1 runtime failure (one line on stderr), 2 bad configuration or usage.
Commands import what they need when they run, so `harvester --help` starts fast
(bench/cli_start.py measures it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from harvester import __version__

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


def _fail(code: int, message: str) -> int:
    from harvester.cli_common import fail

    return fail(code, message)


def cmd_version(args: argparse.Namespace) -> int:
    print(f"harvester {__version__}")
    return EXIT_OK


def cmd_config_check(args: argparse.Namespace) -> int:
    from harvester.config import ConfigError, empty_file_note, load_settings, schema_paths
    from harvester.preflight import PreflightError, preflight

    try:
        settings = load_settings(args.file)
        # every check `serve` makes of the file; whether its ports are free right now depends on
        # what else runs (a sidecar started from this very file holds them): only with --ports
        preflight(settings, ports=args.ports)
    except (ConfigError, PreflightError) as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    note = empty_file_note(args.file, settings)
    print(f"ok: {args.file} is valid ({len(schema_paths())} settings; cluster.source={settings.cluster.source})"
          + (f"; {note}" if note else ""))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from harvester.app import Harvester
    from harvester.config import ConfigError, empty_file_note, load_settings
    from harvester.history.store import StoreError
    from harvester.observability.logs import configure_logging
    from harvester.preflight import PreflightError, listen_problem, preflight

    from harvester.cli_common import stop_on_signals, wait_until
    from harvester.admin_token import TokenError, serving_token

    try:
        settings = load_settings(args.config)
        preflight(settings)
        token = serving_token(settings.server.auth.token_file, embedded=settings.cluster.source == "embedded")
    except (ConfigError, PreflightError, TokenError) as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    except OSError as exc:  # the local token could not be written (the state folder)
        return _fail(EXIT_FAILURE, f"cannot start: cannot write the local admin token: {exc}")
    note = empty_file_note(args.config, settings)
    if note:
        print(f"harvester: note: {note}", file=sys.stderr)
    keytab = settings.kerberos.keytab
    configure_logging(settings.logging.level, settings.logging.format,
                      secrets=[s for s in (token, str(keytab) if keytab else None) if s])
    problem = listen_problem(settings)
    if problem is not None:
        return _fail(EXIT_FAILURE, f"cannot start: {problem}")
    stop = stop_on_signals()
    try:
        app = Harvester(settings, config_path=args.config)
    except (StoreError, OSError, ValueError) as exc:  # ValueError: e.g. RMConfigError (Kerberos credentials)
        return _fail(EXIT_FAILURE, f"cannot start: {exc}")
    try:
        app.start()
    except OSError as exc:  # server.grpc_advice_process: the advice process could not serve
        app.stop()
        return _fail(EXIT_FAILURE, f"cannot start: {exc}")
    estimator = "" if app.estimator is None else f", Resource Estimator API {app.estimator.url}/resourceestimator/"
    print(
        f"harvester {__version__} serving: gRPC {app.grpc.address}{' (TLS)' if app.grpc.tls else ''}, admin {app.admin.url} "
        f"(/healthz /readyz /metrics /status){estimator}; cluster source: {app.source.name}. Ctrl-C stops.",
        file=sys.stderr,
        flush=True,
    )
    wait_until(stop)
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
    "harvester.cli_whatif",    # whatif (replay the history store through the simulator)
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
    c = csub.add_parser("check", help="validate a settings file (exit 2 with one line if it is bad); binds nothing "
                                      "unless --ports")
    c.add_argument("file", type=Path)
    c.add_argument("--ports", action="store_true", help="also check that every listen address can be bound now "
                                                        "(serve checks it when it starts)")
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

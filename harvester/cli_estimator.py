"""`harvester estimator serve`: the Hadoop Resource Estimator 3.3.6 REST API alone, on its own
port, answered from the history store (advice/estimator_service.py; docs/morpheus.md "A drop-in
Resource Estimator"). The `estimator:` section of `--config` applies (`enabled` is implied);
`--port`, `--host` and `--data-dir` override `estimator.listen` and `estimator.data_dir`. The
same checks as `serve` (token, TLS, a non-loopback address, the store) run first. Prints its
URL on stdout, serves until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harvester.cli_common import EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, fail, stop_on_signals, wait_until


def cmd_serve(args: argparse.Namespace) -> int:
    from harvester.app_admin import estimator_server
    from harvester.clock import RealClock
    from harvester.config import ConfigError, load_settings
    from harvester.config_estimator import check_data_dir
    from harvester.config_base import check_listen
    from harvester.history.sqlite import SqliteHistoryStore
    from harvester.history.store import StoreError
    from harvester.observability.logs import configure_logging
    from harvester.observability.metrics import Metrics
    from harvester.preflight import PreflightError, preflight

    try:
        settings = load_settings(args.config)
        e = settings.estimator
        host, _, port = e.listen.rpartition(":")
        listen = check_listen(f"{args.host or host}:{port if args.port is None else args.port}")
        data_dir = e.data_dir if args.data_dir is None else check_data_dir(args.data_dir)
        settings = settings.model_copy(update={"estimator": e.model_copy(update={"enabled": True, "listen": listen,
                                                                                 "data_dir": data_dir})})
        token = preflight(settings, addresses={"estimator.listen": listen})
    except (ConfigError, PreflightError) as exc:
        return fail(EXIT_CONFIG, f"config error: {exc}")
    except ValueError as exc:  # --port / --host / --data-dir
        return fail(EXIT_CONFIG, f"estimator serve: {exc}")
    configure_logging(settings.logging.level, settings.logging.format, secrets=[token] if token else [])
    stop = stop_on_signals()
    try:
        store = SqliteHistoryStore(":memory:" if settings.store.backend == "memory" else settings.store.path)
    except StoreError as exc:
        return fail(EXIT_FAILURE, f"cannot start: {exc}")
    try:
        server = estimator_server(settings, store, Metrics(), token, RealClock().now)
        server.start()
    except OSError as exc:
        store.close()
        return fail(EXIT_FAILURE, f"cannot serve on {listen} (estimator.listen): {exc.strerror or exc}")
    writes = "open" if settings.estimator.open_writes else "need the admin token" if token else "refused (no token)"
    print(server.url, flush=True)
    print(f"Resource Estimator API at {server.url}/resourceestimator/ (store {settings.store.path if settings.store.backend == 'sqlite' else ':memory:'}; "
          f"translator data dir {data_dir or 'none: every file refused'}; writes {writes}). Ctrl-C stops.",
          file=sys.stderr, flush=True)
    wait_until(stop)
    server.stop()
    store.close()
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("estimator", help="the Hadoop Resource Estimator 3.3.6 REST API, from the history store")
    esub = p.add_subparsers(dest="estimator_command", required=True, metavar="ACTION")
    s = esub.add_parser("serve", help="serve /resourceestimator/... on its own port until SIGINT/SIGTERM")
    s.add_argument("--config", type=Path, default=None, help="YAML settings file (estimator:, store:, server.tls/auth)")
    s.add_argument("--port", type=int, default=None, help="port (default: estimator.listen's, 9998; 0 = any free port)")
    s.add_argument("--host", default=None, help="address to bind (default: estimator.listen's, 127.0.0.1)")
    s.add_argument("--data-dir", type=Path, default=None,
                   help="the only directory the translator reads logs from (default: estimator.data_dir)")
    s.set_defaults(func=cmd_serve)

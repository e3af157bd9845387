"""`harvester rm nodes|apps|reservations|queues`: read-only views of the RM for operators, and
`harvester rm record`: record a differential run against an RM as a scenario.

The RM comes from the settings file (`--config`, its `rm:` section and HARVESTER_RM__*
overrides) or `--rm-url` (repeatable, for an HA pair). Tables are rendered from
`rm_client.tables`; `--json` prints the decoded models instead. `record` sends a seeded sequence
of valid and invalid calls (harvester/emulator/sequences.py) to the first RM URL and writes it in
the fixtures' scenario format (harvester/emulator/recording.py) to `--out`; it changes nothing
lasting on the cluster (its apps are killed, its reservations deleted, node updates re-post the
current resource).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Any, Callable

import requests

from rm_client import RMClient, RMClientConfig, RMConfigError, RMError, RMTransportError
from rm_client.redact import redact_url
from rm_client.tables import Table, apps_table, nodes_table, queues_table, reservations_table

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2


def render_table(table: Table) -> str:
    widths = [len(h) for h in table.headers]
    for row in table.rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(table.headers, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table.rows]
    return "\n".join(lines + list(table.notes))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _client(args: argparse.Namespace) -> RMClient:
    from harvester.rm_connect import embedded_rm_url, rm_client_config
    from harvester.config import load_settings

    if args.rm_url:
        return RMClient(RMClientConfig(urls=tuple(args.rm_url), user=args.user))
    settings = load_settings(args.config)
    rm: Any = settings.rm
    if rm.clusters:  # several RMs (rm.clusters): the one --subcluster names, or the only one
        names = [c.name for c in rm.clusters]
        chosen = getattr(args, "subcluster", None) or (names[0] if len(names) == 1 else None)
        if chosen not in names:
            raise RMConfigError(f"rm.clusters has {', '.join(names)}: name one with --subcluster")
        rm = next(c for c in rm.clusters if c.name == chosen)
    # rm.urls names the RM whatever cluster.source says; without it, the embedded default's
    # emulator (what a running `harvester serve` with these settings embeds)
    if not rm.urls and settings.cluster.source == "embedded":
        rm = rm.model_copy(update={"urls": [embedded_rm_url(settings)]})
    if not rm.urls:
        raise RMConfigError("no RM: give --rm-url or a --config whose rm.urls is set")
    config = rm_client_config(rm, settings.kerberos)
    return RMClient(dataclasses.replace(config, user=args.user or config.user))


def rm_failure(exc: RMTransportError) -> str:
    """One line for an RM that could not be reached: the call, the URL, the cause, what to check."""
    from harvester.observability.failures import one_line

    what = f"{exc.method} {exc.path}" if exc.method else "the ResourceManager"
    return one_line(what, exc.rm_url or "the ResourceManager", exc,
                    "that the ResourceManager runs there and that rm.urls (or --rm-url) names it")


def _views() -> dict[str, Callable[[RMClient, argparse.Namespace], tuple[Any, Table]]]:
    def nodes(c: RMClient, a: argparse.Namespace) -> tuple[Any, Table]:
        ns = c.list_nodes()
        return ns, nodes_table(ns, now_ms=int(time.time() * 1000))

    def apps(c: RMClient, a: argparse.Namespace) -> tuple[Any, Table]:
        xs = c.list_apps(states=a.state or (), queue=a.queue) if a.queue else c.list_apps(states=a.state or ())
        return xs, apps_table(xs)

    def reservations(c: RMClient, a: argparse.Namespace) -> tuple[Any, Table]:
        rs = c.list_reservations(queue=a.queue or "root.default")
        return rs, reservations_table(rs, now_ms=int(time.time() * 1000))

    def queues(c: RMClient, a: argparse.Namespace) -> tuple[Any, Table]:
        info = c.get_scheduler()
        return info, queues_table(info)

    return {"nodes": nodes, "apps": apps, "reservations": reservations, "queues": queues}


def cmd_record(args: argparse.Namespace) -> int:
    from harvester.emulator.recording import record
    from harvester.observability.progress import Progress

    if not args.rm_url or not args.out:
        print("harvester: rm record needs --rm-url and --out", file=sys.stderr)
        return EXIT_CONFIG
    out = Path(args.out)
    shown = redact_url(args.rm_url[0])
    try:
        RMClientConfig(urls=(args.rm_url[0],))  # a malformed URL: one line, its password not shown
    except RMConfigError as exc:
        print(f"harvester: --rm-url: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        with Progress(args.steps, "rm record", unit="steps (about)") as bar:
            calls = record(args.rm_url[0], out, seed=args.seed, steps=args.steps, user=args.user, pace=args.pace,
                           on_step=lambda name: bar.advance(note=name))
    except requests.RequestException as exc:
        from harvester.observability.failures import cause

        print(f"harvester: recording against {shown} failed: {cause(exc)} (partial recording in {out})",
              file=sys.stderr)
        return EXIT_FAILURE
    print(f"recorded {len(calls)} calls (seed {args.seed}) from {shown} into {out}")
    return EXIT_OK


def cmd_rm(args: argparse.Namespace) -> int:
    from harvester.config import ConfigError

    if args.view == "record":
        return cmd_record(args)
    try:
        client = _client(args)
    except (ConfigError, RMConfigError) as exc:
        print(f"harvester: {'--rm-url' if args.rm_url else 'config error'}: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        with client:
            models, table = _views()[args.view](client, args)
    except RMTransportError as exc:
        print(f"harvester: {rm_failure(exc)}", file=sys.stderr)
        return EXIT_FAILURE
    except RMError as exc:
        print(f"harvester: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    if args.json:
        print(json.dumps(_plain(models), indent=1, default=str))
    else:
        print(render_table(table) if table.rows else "(none)")
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rm", help="views of the ResourceManager (nodes, apps, reservations, queues); record a run")
    p.add_argument("view", choices=sorted(_views()) + ["record"],
                   help="what to show, or `record` a differential run as a scenario")
    p.add_argument("--config", default=None, help="settings file naming the RM (default: the embedded default's emulator)")
    p.add_argument("--rm-url", action="append", help="RM REST base URL (repeat for an HA pair); overrides --config")
    p.add_argument("--subcluster", default=None, help="with rm.clusters in --config: which sub-cluster's RM to ask")
    p.add_argument("--user", default=None, help="simple-auth user (user.name)")
    p.add_argument("--queue", default=None, help="apps / reservations: full queue path, e.g. root.default")
    p.add_argument("--state", action="append", help="apps: state filter (repeatable), e.g. RUNNING")
    p.add_argument("--json", action="store_true", help="print the decoded models as JSON")
    p.add_argument("--out", default=None, help="record: the scenario folder to write")
    p.add_argument("--seed", type=int, default=1, help="record: the sequence's seed")
    p.add_argument("--steps", type=int, default=40, help="record: about how many calls the sequence makes")
    p.add_argument("--pace", type=float, default=1.0,
                   help="record: scale the waits between calls (below 1 for a faster-than-real-time emulator)")
    p.set_defaults(func=cmd_rm)

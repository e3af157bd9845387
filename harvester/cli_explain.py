"""`harvester explain KIND ID [--config FILE] [--admin URL | --store] [--limit N] [--json]`.

Why a node is at its capacity, why a tenant is in its class, why a job's containers were killed,
why a reservation is what it is (Morpheus's and Jockey's decisions; the running sidecar only):
the last decisions that touched it, each with its formula, inputs, data age and the settings
that would change it (harvester/advice/explain.py). KIND is node, tenant, job, reservation, or any kind a
capability registered (the running sidecar lists them at GET /v1/explain).

Where the answer comes from:
- the running sidecar (GET /v1/explain/<kind>?id=ID): by default at the settings' admin
  address, or `--admin URL`, with the admin token when there is one (reads may be closed:
  `server.auth.public_reads`; a 401/403 is told as such, never a silent fallback). It knows the
  guard's current view as well as the decision log;
- the history store of the settings (`--store`, or by itself when no sidecar answers at the
  default address): the decision log, the class model, the job runs. Nothing live.
Exit 0 answered, 1 nothing known about it / no source reachable, 2 bad settings or kind.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harvester.cli_common import (EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, AdminRefused, SidecarError, admin_base, cli_token,
                                  fail, sidecar_json)


def _when(t: float | None) -> str:
    return "-" if t is None else dt.datetime.fromtimestamp(t, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _inputs(inputs: dict[str, Any]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, dict) and set(v) == {"memory_mb", "vcores"}:
            return f"<{v['memory_mb']} MB, {v['vcores']} vc>"
        return f"{v:.2f}" if isinstance(v, float) else str(v)
    return ", ".join(f"{k} {fmt(v)}" for k, v in inputs.items() if v not in (None, "", {}))


def _settings(items: list[dict[str, Any]]) -> list[str]:
    return [f"{s['key']} = {json.dumps(s['value'], default=str)}: {s['effect']}" for s in items]


def render(doc: dict[str, Any], where: str) -> str:
    """The explanation as text: the subject now, the settings behind it, the last decisions."""
    lines = [f"{doc['kind']} {doc['id']} — from {where}, {_when(doc.get('as_of'))}"]
    lines += [f"  {line}" for line in doc.get("summary", [])]
    if doc.get("settings"):
        lines.append("  settings that change it:")
        lines += [f"    {line}" for line in _settings(doc["settings"])]
    decisions = doc.get("decisions", [])
    lines.append(f"last {len(decisions)} decision(s), newest first:" if decisions else "no decision in the log")
    for d in decisions:
        data = "" if d.get("data_age_s") is None else f", data {d['data_age_s']:.0f} s old"
        lines.append(f"  {_when(d['at'])} ({d['age_s']:.0f} s ago) {d['loop']} {d['action']} {d['target']} "
                     f"{d['detail']} — {d['fate']}{data}")
        lines.append(f"      formula: {d['formula']}")
        if d.get("inputs"):
            lines.append(f"      inputs: {_inputs(d['inputs'])}")
        if d.get("settings"):
            lines.append("      change it with: " + "; ".join(f"{s['key']} (now {json.dumps(s['value'], default=str)})"
                                                          for s in d["settings"]))
    return "\n".join(lines)


def _from_store(args: argparse.Namespace, settings: Any) -> tuple[int, dict[str, Any]]:
    import time

    from harvester.advice.explain import ExplainSources
    from harvester.advice.explain_subjects import builtin_explainers
    from harvester.app import harvesting_settings
    from harvester.history.sqlite import SqliteHistoryStore

    store = SqliteHistoryStore(settings.store.path)
    try:
        sources = ExplainSources(settings, harvesting_settings(settings), time.time(), store)
        return builtin_explainers().explain(args.kind, args.id, sources, args.limit)
    finally:
        store.close()


def cmd_explain(args: argparse.Namespace) -> int:
    from harvester.admin_token import TokenError
    from harvester.config import ConfigError, load_settings
    from harvester.history.store import StoreError

    try:
        settings = load_settings(args.config)
        token = None if args.store else cli_token(args.token_file, settings)  # reads may be closed (public_reads)
    except (ConfigError, TokenError) as exc:
        return fail(EXIT_CONFIG, f"config error: {exc}")
    base = admin_base(args.admin, settings.server.admin_listen)
    status, doc, where = 0, {}, ""
    if not args.store:
        try:
            status, doc = sidecar_json(base, f"/v1/explain/{quote(args.kind)}?id={quote(args.id)}&limit={args.limit}",
                                       token=token)
            where = f"the running sidecar {base}"
        except AdminRefused as exc:  # reached, and refused: never a silent fallback to the store
            return fail(EXIT_FAILURE, f"{exc} (or read the history store: --store)")
        except SidecarError as exc:
            if args.admin:  # asked for that sidecar: no silent fallback
                return fail(EXIT_FAILURE, str(exc))
            status = -1
        if status == 404 and "routes" in doc:  # no such route: an unknown kind, or a sidecar without explain
            kinds = [r.rsplit("/", 1)[1] for r in doc["routes"] if r.startswith("/v1/explain/")]
            if not kinds:
                return fail(EXIT_FAILURE, f"{base} has no /v1/explain: not a Harvester sidecar of this version")
            return fail(EXIT_CONFIG, f"unknown kind {args.kind!r}; the sidecar explains: {', '.join(kinds)}")
    if args.store or status == -1:
        if settings.store.backend == "memory":
            return fail(EXIT_FAILURE, f"no sidecar answers at {base} and store.backend is memory (the history lives in "
                                      "the sidecar's process): start `harvester serve` with these settings")
        if not settings.store.path.exists():
            return fail(EXIT_FAILURE, f"no sidecar answers at {base} and there is no history store at "
                                      f"{settings.store.path}: start `harvester serve` with these settings")
        try:
            status, doc = _from_store(args, settings)
        except StoreError as exc:
            return fail(EXIT_FAILURE, str(exc))
        where = f"the history store {settings.store.path}" + ("" if args.store else f" (no sidecar at {base})")
    if status != 200:
        return fail(EXIT_FAILURE if "unknown kind" not in doc.get("error", "") else EXIT_CONFIG,
                    doc.get("error", f"no answer for {args.kind} {args.id}"))
    if args.json:
        print(json.dumps(doc, indent=1, default=str, ensure_ascii=False))
    else:
        print(render(doc, where))
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help="why a node / tenant / job / reservation is where it is: the last decisions, their formulas "
                                       "and the settings that change them")
    p.add_argument("kind", metavar="KIND", help="node, tenant, job, reservation (the sidecar lists every kind at GET /v1/explain)")
    p.add_argument("id", metavar="ID", help="node id (host:port), tenant name, job name, or reservation id "
                                             "(reservation_…, job@period, or the job's name)")
    p.add_argument("--config", default=None, help="settings file (default: the embedded default); names the admin "
                                                  "address and the store")
    p.add_argument("--admin", default=None, help="ask the running sidecar at this URL, e.g. http://127.0.0.1:9464")
    p.add_argument("--store", action="store_true", help="read the history store, not the running sidecar")
    p.add_argument("--token-file", type=Path, default=None, help="file holding the admin bearer token, when the sidecar's "
                                                                 "reads are closed (default: $HARVESTER_ADMIN_TOKEN, else "
                                                                 "server.auth.token_file, else the embedded default's "
                                                                 "local token)")
    p.add_argument("--limit", type=int, default=10, help="decisions to show (default 10)")
    p.add_argument("--json", action="store_true", help="print the JSON document")
    p.set_defaults(func=cmd_explain)

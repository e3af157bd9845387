"""`harvester tenants [--config FILE] [--admin URL] [--refit] [--json]`: classes and tenant → class map.

Where the classes come from:
- by default, the history store the settings file names (`--config`; none = the embedded
  default's `var/harvester.db`), read directly — it works while the sidecar runs (SQLite WAL)
  and after it stopped. Reserves are recomputed from the stored margins with the file's
  reserve policy; node counts are unknown there (shown as -);
- from the RUNNING sidecar's admin API (`GET /v1/harvesting/classes`) with `--admin URL`, or
  when the store is `memory` (it lives in the sidecar's process). The default admin URL is the
  file's `server.admin_listen`;
- `--refit` asks the running sidecar to refit now (`POST /v1/harvesting/refit`) and prints the
  classes it answers with.
`--json` prints the document (advice/harvesting_http.classes_document) instead of tables.
Exit 0 ok, 1 nothing to show / sidecar unreachable, 2 bad settings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2
DASH = "-"


def _fail(code: int, message: str) -> int:
    print(f"harvester: {message}", file=sys.stderr)
    return code


def _num(v: Any, fmt: str = ".2f") -> str:
    return DASH if v is None else format(v, fmt)


def render(doc: dict[str, Any], source: str) -> str:
    """Two tables: the classes (§4.1 tags, reserve) and the tenant → class map."""
    from harvester.cli_rm import render_table
    from rm_client.tables import Table

    if doc.get("model_version") is None:
        return f"no class model yet ({source}): {doc.get('why', 'nothing fitted')}"
    fitted = dt.datetime.fromtimestamp(doc["fitted_at"], tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    classes = Table(
        ("CLASS", "PATTERN", "AVG", "PEAK", "TENANTS", "NODES", "RESERVE", "NOW"),
        tuple((c["class_id"], c["pattern"], _num(c["average"]), _num(c["peak"]), str(len(c["tenants"])),
               _num(c["nodes"], "d"), _num(c["reserve_fraction"]), _num(c.get("current_utilization")))
              for c in doc["classes"]),
    )
    tenants = Table(
        ("TENANT", "CLASS", "PATTERN", "AVG", "PEAK", "DAILY-SHARE", "SAMPLES", "NOTE"),
        tuple((t["tenant"], t["class_id"], t["pattern"], _num(t["average"]), _num(t["peak"]),
               _num(t["periodic_share"]), str(t["samples"]), t["fallback"] or "")
              for t in doc["tenants"]),
    )
    lines = [f"class model v{doc['model_version']}, fitted {fitted} ({source})", "", render_table(classes), "",
             render_table(tenants)]
    lines += [f"skipped: {s['tenant']} ({s['why']})" for s in doc.get("skipped", [])]
    return "\n".join(lines)


def _admin_base(args: argparse.Namespace, listen: str) -> str:
    if args.admin:
        return args.admin.rstrip("/")
    host, _, port = listen.rpartition(":")
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def _from_sidecar(base: str, refit: bool) -> dict[str, Any]:
    import requests

    url = f"{base}/v1/harvesting/{'refit' if refit else 'classes'}"
    resp = requests.post(url, timeout=120) if refit else requests.get(url, timeout=10)
    if resp.status_code != 200:
        raise RuntimeError(f"{url} answered HTTP {resp.status_code}: {resp.text.strip()[:300]}")
    doc: dict[str, Any] = resp.json()
    return doc


def _from_store(path: Path, settings: Any) -> dict[str, Any]:
    from harvester.advice.harvesting_http import classes_document
    from harvester.app import harvesting_settings
    from harvester.decisions.reserve import resolve_reserves
    from harvester.decisions.strategy import reserve_policy
    from harvester.history.sqlite import SqliteHistoryStore

    store = SqliteHistoryStore(path)
    try:
        model = store.class_model()
        margins = None if model is None else store.margin_model(model.version)
    finally:
        store.close()
    reserves = None
    if model is not None:
        policy = reserve_policy(harvesting_settings(settings))
        reserves = resolve_reserves(margins, [c.class_id for c in model.classes], policy)
    return classes_document(model, reserves, None)


def cmd_tenants(args: argparse.Namespace) -> int:
    from harvester.config import ConfigError, load_settings
    from harvester.history.store import StoreError

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        return _fail(EXIT_CONFIG, f"config error: {exc}")
    live = args.refit or args.admin or settings.store.backend == "memory"
    try:
        if live:
            base = _admin_base(args, settings.server.admin_listen)
            source = f"sidecar {base}"
            try:
                doc = _from_sidecar(base, args.refit)
            except OSError as exc:  # requests' connection errors are OSErrors
                return _fail(EXIT_FAILURE, f"cannot reach the running sidecar at {base}: {exc}")
        else:
            path = settings.store.path
            source = f"store {path}"
            if not path.exists():
                return _fail(EXIT_FAILURE, f"no history store at {path}: start `harvester serve` with this "
                                           "--config, or use --admin URL")
            doc = _from_store(path, settings)
    except (RuntimeError, StoreError, ValueError) as exc:
        return _fail(EXIT_FAILURE, str(exc))
    if args.json:
        print(json.dumps(doc, indent=1, default=str, ensure_ascii=False))
    else:
        print(render(doc, source))
    return EXIT_OK if doc.get("model_version") is not None else EXIT_FAILURE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tenants", help="utilization classes and the tenant -> class map (YARN-H, OSDI'16 §4.1)")
    p.add_argument("--config", default=None, help="settings file (default: the embedded default); names the store "
                                                  "and the admin address")
    p.add_argument("--admin", default=None, help="ask the running sidecar's admin API at this URL, e.g. "
                                                 "http://127.0.0.1:9464, instead of reading the store")
    p.add_argument("--refit", action="store_true", help="ask the running sidecar to refit now, then print")
    p.add_argument("--json", action="store_true", help="print the JSON document instead of tables")
    p.set_defaults(func=cmd_tenants)

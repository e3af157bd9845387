"""`harvester tenants [--config FILE] [--admin URL] [--refit] [--json]`: classes and tenant → class map.

Where the classes come from:
- by default, the history store the settings file names (`--config`; none = the embedded
  default's store, `store.path`), read directly — it works while the sidecar runs (SQLite WAL)
  and after it stopped. Reserves are recomputed from the stored margins with the file's
  reserve policy; NODES and NOW come from each tenant's newest stored 2-minute slot (node
  count, mean primary utilization), "-" when no slot is recent (no sidecar observing);
- from the RUNNING sidecar's admin API (`GET /v1/harvesting/classes`) with `--admin URL`, or
  when the store is `memory` (it lives in the sidecar's process). The default admin URL is the
  file's `server.admin_listen`;
- `--refit` asks the running sidecar to refit now (`POST /v1/harvesting/refit`, an admin write:
  the bearer token comes from `--token-file`, `$HARVESTER_ADMIN_TOKEN`, `server.auth.token_file`,
  or in the embedded default the local token its sidecar made, harvester/admin_token.py) and
  prints the classes it answers with; a refusal (401/403) says so and names those settings.
`--json` prints the document (advice/harvesting_http.classes_document) instead of tables.
Without a class model it says what to configure (tenant rules) and when classes will appear.
Exit 0 ok, 1 nothing to show / sidecar unreachable, 2 bad settings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import Any

from harvester.cli_common import EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, fail

DASH = "-"


def _num(v: Any, fmt: str = ".2f") -> str:
    return DASH if v is None else format(v, fmt)


def render(doc: dict[str, Any], source: str, hint: str = "") -> str:
    """Two tables: the classes (§4.1 tags, reserve, current utilization) and the tenant → class map."""
    from harvester.cli_rm import render_table
    from rm_client.tables import Table

    if doc.get("model_version") is None:
        return f"no class model yet ({source}): {doc.get('why', 'nothing fitted')}" + (f"\n{hint}" if hint else "")
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
    if doc.get("now_from"):
        lines.append(f"NOW: {doc['now_from']}")
    return "\n".join(lines)


def no_model_hint(h: Any) -> str:
    """What the operator must configure, and when classes will appear (`h`: resolved harvesting settings)."""
    from harvester.control import REFIT_CHECK_S

    p = h.patterns
    when = (f"Classes appear at the first refit after telemetry has stored one {h.sample_step_s:g}-s slot (the refit "
            f"loop checks every {min(h.refit_interval_s, REFIT_CHECK_S):g} s; `harvester tenants --refit` fits now); "
            f"a tenant stays unpredictable until it has {p.min_samples} slots (patterns.min_samples, "
            f"{p.min_samples * h.sample_step_s / 3600:.1f} h) and can be periodic after {p.min_days_periodic:g} days "
            "(patterns.min_days_periodic).")
    if h.tenants:
        return when
    return ("No harvesting.tenants rules are set: every NodeManager is its own primary tenant "
            f"(harvesting.unmatched_nodes: {h.unmatched_nodes}), so no class groups the servers of one service. "
            "Map nodes to tenants with harvesting.tenants rules (tenant + hostname_pattern or nodes; see "
            "deploy/harvester.yaml and docs/harvesting.md). " + when)


def _from_store(path: Path, h: Any, now: float) -> dict[str, Any]:
    from harvester.advice.harvesting_http import classes_document
    from harvester.decisions.reserve import resolve_reserves
    from harvester.decisions.strategy import reserve_policy
    from harvester.history.sqlite import SqliteHistoryStore

    store = SqliteHistoryStore(path)
    try:
        model = store.class_model()
        margins = None if model is None else store.margin_model(model.version)
        recent = [] if model is None else store.tenant_slots(since=now - NOW_SLOTS * h.sample_step_s)
    finally:
        store.close()
    if model is None:
        return classes_document(None, None, None)
    reserves = resolve_reserves(margins, [c.class_id for c in model.classes], reserve_policy(h))
    doc = classes_document(model, reserves, None)
    _add_now(doc, model.tenant_class_map(), recent)
    return doc


#: NOW from the store: each tenant's newest slot among the last few (a running sidecar writes
#: one every `sample_step_s`); older than that, the sidecar is not observing and NOW stays "-".
NOW_SLOTS = 3


def _add_now(doc: dict[str, Any], tenant_class: dict[str, str], slots: list[Any]) -> None:
    """Per class, from each member tenant's newest slot: nodes = Σ nodes, current utilization =
    node-weighted mean of the tenants' slot utilization (the live view's mean over the class's nodes)."""
    newest: dict[str, Any] = {}
    for s in slots:  # ordered by start
        if s.polls > 0:
            newest[s.tenant] = s
    acc: dict[str, list[float]] = {}
    for tenant, s in newest.items():
        cid = tenant_class.get(tenant)
        if cid is not None:
            a = acc.setdefault(cid, [0.0, 0.0])
            a[0] += s.utilization * s.nodes
            a[1] += s.nodes
    for c in doc["classes"]:
        a = acc.get(c["class_id"])
        if a and a[1]:
            c["current_utilization"], c["nodes"] = a[0] / a[1], int(a[1])
    if newest:
        at = max(s.start for s in newest.values())
        doc["now_from"] = (f"mean primary utilization of each class's nodes in the newest stored slot "
                           f"({dt.datetime.fromtimestamp(at, tz=dt.timezone.utc):%H:%M} UTC)")


def cmd_tenants(args: argparse.Namespace) -> int:
    import time

    from harvester.app import harvesting_settings
    from harvester.cli_common import AdminRefused, SidecarError, admin_base, cli_token, sidecar_json
    from harvester.admin_token import TokenError
    from harvester.config import ConfigError, load_settings
    from harvester.history.store import StoreError

    try:
        settings = load_settings(args.config)
        token = cli_token(args.token_file, settings)  # admin writes (--refit), closed reads
    except (ConfigError, TokenError) as exc:
        return fail(EXIT_CONFIG, f"config error: {exc}")
    h = harvesting_settings(settings)
    live = args.refit or args.admin or settings.store.backend == "memory"
    try:
        if live:
            base = admin_base(args.admin, settings.server.admin_listen)
            source = f"sidecar {base}"
            status, doc = sidecar_json(base, "/v1/harvesting/refit" if args.refit else "/v1/harvesting/classes",
                                       method="POST" if args.refit else "GET", timeout_s=120 if args.refit else 10,
                                       token=token)
            if status != 200:
                return fail(EXIT_FAILURE, f"{base} is not a Harvester sidecar (no /v1/harvesting routes)")
        else:
            path = settings.store.path
            source = f"store {path}"
            if not path.exists():
                return fail(EXIT_FAILURE, f"no history store at {path}: start `harvester serve` with this "
                                          "--config, or use --admin URL")
            doc = _from_store(path, h, time.time())
    except AdminRefused as exc:
        return fail(EXIT_FAILURE, str(exc))
    except SidecarError as exc:
        return fail(EXIT_FAILURE, f"cannot reach the running sidecar: {exc}")
    except (StoreError, ValueError) as exc:
        return fail(EXIT_FAILURE, str(exc))
    if args.json:
        print(json.dumps(doc, indent=1, default=str, ensure_ascii=False))
    else:
        print(render(doc, source, hint=no_model_hint(h)))
    return EXIT_OK if doc.get("model_version") is not None else EXIT_FAILURE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tenants", help="utilization classes and the tenant -> class map (YARN-H, OSDI'16 §4.1)")
    p.add_argument("--config", default=None, help="settings file (default: the embedded default); names the store "
                                                  "and the admin address")
    p.add_argument("--admin", default=None, help="ask the running sidecar's admin API at this URL, e.g. "
                                                 "http://127.0.0.1:9464, instead of reading the store")
    p.add_argument("--refit", action="store_true", help="ask the running sidecar to refit now, then print (an admin "
                                                         "write: needs the bearer token)")
    p.add_argument("--token-file", type=Path, default=None, help="file holding the admin bearer token (default: "
                                                                 "$HARVESTER_ADMIN_TOKEN, else server.auth.token_file, "
                                                                 "else the embedded default's local token)")
    p.add_argument("--json", action="store_true", help="print the JSON document instead of tables")
    p.set_defaults(func=cmd_tenants)

"""`harvester slo list|show|accept|override|reject|reset`: Morpheus's SLOs and their sign-off
(paper 002 §3: "the job owners are given three options: 1) sign-off ... 2) override ... 3) reject").

Talks to the RUNNING sidecar's admin API (advice/morpheus_http.py): `--admin URL`, else the
settings file's `server.admin_listen` (`--config`; none = the embedded default's).
- `list`: every recurring job of the last refit — its SLO (period, earliest start a_j,
  deadline d_j after the period start) or why it has none, its sign-off state, whether LowCost
  placed it, how it is served (SERVICE: reserved, or static: its own queue and static share,
  and why), and its reservation open now (or its next one: the id jobs submit into); then the
  pipelines found (stages sharing one period, deadlines derived from the last stage's consumer);
- `show JOB`: the SLO's numbers, its pipeline, and each period's state (on time, late: met the
  end-to-end deadline anyway, missed), the skyline, the placement and its reason, the
  contract's and the reservations' status histories;
- `accept JOB`: sign off the current proposal as is (pinned until decided again);
- `override JOB --deadline-s S [--earliest-s S] [--period-s S] [--skyline-scale X]`: replace
  inferred values (the others keep following the inference);
- `reject JOB [--reason TEXT]`: no reservation for it; `reset JOB`: follow the inference again.
`--by` names who decided (kept in the history). `--json` prints the documents. The sign-offs are
admin writes: the bearer token comes from `--token-file`, `$HARVESTER_ADMIN_TOKEN`,
`server.auth.token_file`, or in the embedded default the local token its sidecar made
(docs/security.md); a refusal (401/403) says so and names those settings.
Exit 0 ok, 1 the sidecar refused or is unreachable (the reason on stderr), 2 bad settings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import Any

from harvester.cli_common import EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, admin_base, fail

DASH = "-"
COMMANDS = ("accept", "override", "reject", "reset")
PREFIX = "/v1/morpheus"


def _n(v: Any, fmt: str = ".0f") -> str:
    return DASH if v is None else format(v, fmt)


def _period(v: float | None) -> str:
    """A period as inferred: whole seconds as such, a fitted one to the millisecond."""
    return DASH if v is None else (f"{v:.0f}" if float(v).is_integer() else f"{v:.3f}")


def _when(t: float | None) -> str:
    return DASH if t is None else dt.datetime.fromtimestamp(t, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _ms(t: int | None) -> str:
    return DASH if t is None else _when(t / 1000.0)


def render_list(doc: dict[str, Any]) -> str:
    from harvester.cli_rm import render_table
    from rm_client.tables import Table

    if doc.get("model_version") is None:
        return "no SLO model yet: the sidecar has not refitted (morpheus-refit loop)"
    rows = []
    for j in doc["jobs"]:
        res = j["reservation"] or {}
        served = (j.get("service") or {}).get("service") or DASH
        rows.append((j["job"], str(j["runs"]) + (f" ({j['synthesized_runs']} synth.)" if j["synthesized_runs"] else ""),
                     _period(j["period_s"]), _n(j["earliest_s"]), _n(j["deadline_s"]), "yes" if j["actionable"] else "no",
                     j["contract"]["state"], "yes" if j["planned"] else "no", served,
                     res.get("reservation_id") or DASH, res.get("state") or DASH))
    table = Table(("JOB", "RUNS", "PERIOD_S", "EARLIEST_S", "DEADLINE_S", "ACTIONABLE", "SIGN-OFF", "PLANNED",
                   "SERVICE", "RESERVATION", "STATE"), tuple(rows))
    lines = [f"SLO model v{doc['model_version']}, fitted {_when(doc['fitted_at'])} UTC", render_table(table)]
    pipelines = {tuple(j["pipeline"]) for j in doc["jobs"] if j.get("pipeline")}
    lines += [f"  pipeline {' → '.join(p)}: one period and phase; each stage's deadline from the last one's"
              for p in sorted(pipelines)]
    lines += [f"  {j['job']}: {j['reason']}" for j in doc["jobs"] if not j["actionable"]]
    lines += [f"  {j['job']}: not planned: {j['plan_reason']}" for j in doc["jobs"]
              if j["actionable"] and not j["planned"] and j["plan_reason"] and not j.get("service")]
    lines += [f"  {j['job']}: WARNING: {j['warning']}" for j in doc["jobs"] if j.get("warning")]
    lines += [f"  {j['job']}: {j['service']['why']}" for j in doc["jobs"]
              if (j.get("service") or {}).get("service") == "static" and j["actionable"]]
    return "\n".join(lines)


def render_show(j: dict[str, Any]) -> str:
    c, sky = j["contract"], j["skyline"]
    lines = [
        f"job {j['job']}: {j['runs']} runs" + (f" ({j['synthesized_runs']} synthesized for the demo)" if j["synthesized_runs"] else ""),
        f"  SLO: {'actionable' if j['actionable'] else 'none'}: {j['reason']}",
        f"  period {_period(j['period_s'])} s ({'divides' if j['lcm_aligned'] else 'does not divide'} the LCM), "
        f"earliest {_n(j['earliest_s'], '.1f')} s, deadline {_n(j['deadline_s'], '.1f')} s "
        f"after the period start; CV(T_outRead) {_n(j['cv_out_read'], '.3f')}, slack ratio {_n(j['slack_ratio'], '.2f')}, "
        f"problematic {j['problematic']}, past periods missed {_n(j['violation_rate'], '.0%')}, "
        f"late {_n(j.get('late_rate'), '.0%')}",
        f"  skyline: {sky['reason']}" + (f"; {sky['steps']} steps, peak {sky['peak_memory_mb']} MB / "
                                         f"{sky['peak_vcores']} vcores" if sky["steps"] else ""),
        f"  sign-off: {c['state']}" + (f" by {c['by']}" if c.get("by") else ""),
    ]
    if j.get("pipeline"):
        stage = j["pipeline"].index(j["job"]) + 1
        lines.insert(2, f"  pipeline: {' → '.join(j['pipeline'])} (stage {stage} of {len(j['pipeline'])}; "
                        f"consumers of this stage: {', '.join(j.get('consumers') or []) or DASH})")
    if j.get("warning"):
        lines.insert(-1, f"  WARNING: {j['warning']}")
    if j.get("fitted_as"):
        lines.insert(-1, f"  reserved as: {j['fitted_as']}")
    served = j.get("service")
    lines.insert(-1, "  service: " + (served["why"] if served else "not decided yet (the reservation loop has not run)"))
    if j.get("start_at_once_until") is not None:
        lines.insert(-1, f"  early start: a run whose input is ready by {_when(j['start_at_once_until'])} UTC starts at once "
                         "in its own queue (its static share) instead of waiting for this reservation")
    lines += [f"    {_when(h['at'])}  {h['state']:<10} {h['reason']}" for h in c.get("history", [])]
    p = j.get("placement")
    lines.append(f"  plan: {p['reason']} (terms: {p['terms_from']})" if p else f"  plan: not placed: {j['plan_reason']}")
    for r in j.get("reservations", []):
        lines.append(f"  reservation {r['reservation_id'] or '(not submitted)'} [{r['state']}] window "
                     f"{_ms(r['arrival_ms'])} .. {_ms(r['deadline_ms'])}" + (f"  error: {r['last_error']}" if r["last_error"] else ""))
        lines += [f"    {_when(h['at'])}  {h['state']:<10} {h['reason']}" for h in r.get("history", [])]
        lines += [f"    {_when(e['at'])}  {'':<10} {e['event']}" for e in r.get("events", [])]
    periods = j.get("periods") or []
    if periods:
        lines.append("  periods (s after the period start): run, start, end, inputs available, output read (by), "
                     "late start, state (missed: the end-to-end deadline was missed and this stage ended past its own; "
                     "late: a late start or past its own deadline, but the end-to-end one was met)")
        lines += [f"    {_when(p['period_start'])}  {p['run_id']}  {_n(p['start'])}  {_n(p['end'])}  {_n(p['in_avail'])}  "
                  f"{_n(p['out_read'])} ({p['consumer'] or DASH})  {'yes' if p['late_start'] else 'no'}  {p['state']}"
                  for p in periods]
    return "\n".join(lines)


def _command_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"job": args.job, "by": args.by}
    if args.action == "override":
        body.update(period_s=args.period_s, earliest_s=args.earliest_s, deadline_s=args.deadline_s,
                    skyline_scale=args.skyline_scale, note=args.note)
    elif args.action == "reject":
        body["reason"] = args.reason
    elif args.action == "accept":
        body["note"] = args.note
    return {k: v for k, v in body.items() if v is not None}


def cmd_slo(args: argparse.Namespace) -> int:
    from harvester.admin_token import TokenError
    from harvester.cli_common import AdminRefused, SidecarError, cli_token, sidecar_json
    from harvester.config import ConfigError, load_settings

    try:
        settings = load_settings(args.config)
        token = cli_token(args.token_file, settings)  # sign-offs are admin writes
    except (ConfigError, TokenError) as exc:
        return fail(EXIT_CONFIG, f"config error: {exc}")
    base = admin_base(args.admin, settings.server.admin_listen)
    if args.action in ("show", *COMMANDS) and not args.job:
        return fail(EXIT_CONFIG, f"slo {args.action} needs a JOB")
    try:
        if args.action == "list":
            status, doc = sidecar_json(base, f"{PREFIX}/slos", token=token, timeout_s=30)
        elif args.action == "show":
            import urllib.parse

            status, doc = sidecar_json(base, f"{PREFIX}/slo?job={urllib.parse.quote(args.job)}", token=token, timeout_s=30,
                                       ok=(200, 400))
        else:
            status, doc = sidecar_json(base, f"{PREFIX}/slo/{args.action}", method="POST", body=_command_body(args),
                                       token=token, timeout_s=30, ok=(200, 400))
    except AdminRefused as exc:
        return fail(EXIT_FAILURE, str(exc))
    except SidecarError as exc:
        return fail(EXIT_FAILURE, f"cannot reach the running sidecar: {exc}")
    if status == 404 and args.action == "list":
        return fail(EXIT_FAILURE, "the sidecar has no Morpheus routes: set morpheus.enabled: true")
    if status != 200:
        return fail(EXIT_FAILURE, f"{args.action} {args.job or ''}: HTTP {status}: {doc.get('error', doc)}")
    if args.json:
        print(json.dumps(doc, indent=1, default=str, ensure_ascii=False))
    elif args.action == "list":
        print(render_list(doc))
    elif args.action == "show":
        print(render_show(doc))
    else:
        print(f"{doc['job']}: {doc['state']} ({doc['reason']})")
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("slo", help="Morpheus SLOs of recurring jobs: list, show, accept, override, reject, reset")
    p.add_argument("action", choices=("list", "show", *COMMANDS), help="what to do")
    p.add_argument("job", nargs="?", default=None, help="the recurring job (show, accept, override, reject, reset)")
    p.add_argument("--config", default=None, help="settings file naming the admin address (default: the embedded default)")
    p.add_argument("--admin", default=None, help="the running sidecar's admin API, e.g. http://127.0.0.1:9464")
    p.add_argument("--token-file", type=Path, default=None, help="file holding the admin bearer token for accept/override/"
                                                                 "reject/reset (default: $HARVESTER_ADMIN_TOKEN, else "
                                                                 "server.auth.token_file, else the embedded default's "
                                                                 "local token)")
    p.add_argument("--by", default=None, help="who decides (kept in the sign-off history)")
    p.add_argument("--note", default=None, help="accept / override: a note kept in the history")
    p.add_argument("--reason", default=None, help="reject: why")
    p.add_argument("--period-s", type=float, default=None, help="override: the period (s)")
    p.add_argument("--earliest-s", type=float, default=None, help="override: earliest start after the period start (s)")
    p.add_argument("--deadline-s", type=float, default=None, help="override: deadline after the period start (s)")
    p.add_argument("--skyline-scale", type=float, default=None, help="override: multiply the skyline (e.g. 10 for 10x data)")
    p.add_argument("--json", action="store_true", help="print the JSON document")
    p.set_defaults(func=cmd_slo)

"""Provenance inputs for Morpheus §4: the NameNode audit log, RM apps, and the JSONL format.

All three produce harvester.models.provenance's event model (FileAccess, RunRecord).

NameNode audit log (`FSNamesystem.audit`, fixtures hdfs-3.3.6/provenance*): one line per call,

    2026-11-24 07:49:46,977 INFO FSNamesystem.audit: allowed=true<TAB>ugi=root (auth:SIMPLE)<TAB>
    ip=/127.0.0.1<TAB>cmd=rename<TAB>src=/a/_temporary/...<TAB>dst=/a/part-00000<TAB>perm=...<TAB>
    proto=rpc<TAB>callerContext=mr_attempt_1795504076245_0016_m_000000_0

`callerContext` is `<context>[:<signature>]` (FSNamesystem appends the signature after a
colon) and is present only with `hadoop.caller.context.enabled=true`; the YARN application is
found in the context (`run_id_of`). Data commands become accesses: `open` = read; `create`,
`append`, `truncate` = write; `concat` = write of `dst`; `delete` = delete; `rename` (also
`rename (options=...)`) = delete of `src` + write of `dst`. Metadata commands (getfileinfo,
listStatus, mkdirs, setPermission, ...) and denied calls (`allowed=false`) are not accesses.
The timestamp is the NameNode's log4j local time: pass its zone (default UTC). Lines that are
not audit lines are reported with their number.

JSONL (docs/morpheus.md "Provenance JSONL"): one object per line,

    {"type": "run", "job": "etl", "run": "application_1_0001", "submit_ms": 1, "start_ms": 2, "finish_ms": 3}
    {"type": "access", "time_ms": 5, "access": "read", "path": "/data/x", "run": "application_1_0002", "actor": "..."}

`start_ms` / `finish_ms` may be null; `run` null (or absent) is a client outside YARN, named by
`actor`; `access` is read, write or delete (a rename is a delete and a write); `op` is optional.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Callable, Iterable

from rm_client import App

from harvester.models.provenance import Access, FileAccess, RunRecord, run_id_of

AUDIT = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})(?:[,.](\d{1,6}))?\s.*?FSNamesystem\.audit:\s(.*)$")
WRITES = ("create", "append", "truncate")


@dataclass(frozen=True)
class ParsedProvenance:
    accesses: tuple[FileAccess, ...]
    runs: tuple[RunRecord, ...]
    problems: tuple[tuple[int, str], ...]  # (line number, why it was not used)
    unattributed: int = 0  # data accesses with no caller context (NodeManager localization, old clients)


def _audit_time(date: str, frac: str | None, tz: tzinfo) -> float:
    t = datetime.strptime(date.replace("T", " "), "%Y-%m-%d %H:%M:%S").replace(tzinfo=tz).timestamp()
    # Whole milliseconds (log4j's resolution), so a JSONL round trip gives back the same float.
    return (int(t) * 1000 + int((frac or "0").ljust(3, "0")[:3])) / 1000.0


def parse_audit_log(lines: Iterable[str], *, tz: tzinfo = timezone.utc) -> ParsedProvenance:
    """File accesses of a NameNode audit log (module doc)."""
    accesses: list[FileAccess] = []
    problems: list[tuple[int, str]] = []
    unattributed = 0
    for no, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        m = AUDIT.match(line)
        if not m:
            problems.append((no, "not an FSNamesystem.audit line"))
            continue
        fields = dict(f.split("=", 1) for f in m.group(3).split("\t") if "=" in f)
        if fields.get("allowed") != "true":
            continue  # denied: nothing was read or written
        cmd, src, dst = fields.get("cmd", ""), fields.get("src", ""), fields.get("dst", "null")
        if cmd == "open":
            kinds = [(Access.READ, src)]
        elif cmd in WRITES:
            kinds = [(Access.WRITE, src)]
        elif cmd == "concat":
            kinds = [(Access.WRITE, dst)]
        elif cmd == "delete":
            kinds = [(Access.DELETE, src)]
        elif cmd.startswith("rename"):
            kinds = [(Access.DELETE, src), (Access.WRITE, dst)]
        else:
            continue  # metadata only
        if any(not p.startswith("/") for _, p in kinds):
            problems.append((no, f"cmd={cmd} without an absolute path"))
            continue
        context = fields.get("callerContext", "")
        if not context:
            unattributed += 1
        t = _audit_time(m.group(1), m.group(2), tz)
        run = run_id_of(context) if context else None
        accesses.extend(FileAccess(t, kind, path, run, context, cmd) for kind, path in kinds)
    return ParsedProvenance(tuple(accesses), (), tuple(problems), unattributed)


def runs_from_apps(apps: Iterable[App], normalize: Callable[[str], str] = lambda name: name) -> tuple[RunRecord, ...]:
    """Successful finished apps as runs (§3.1: the inference uses the successful runs); the job
    is the app's name through `normalize` (the recurring-name rule)."""
    out = []
    for app in apps:
        if app.state != "FINISHED" or app.final_status != "SUCCEEDED" or app.finished_time_ms <= 0:
            continue
        launch = app.launch_time_ms / 1000.0 if app.launch_time_ms and app.launch_time_ms > 0 else None
        out.append(RunRecord(normalize(app.name or app.id), app.id, app.started_time_ms / 1000.0, launch,
                             app.finished_time_ms / 1000.0))
    return tuple(sorted(out, key=lambda r: r.submitted_at))


def _ms(doc: dict, key: str, required: bool) -> float | None:
    v = doc.get(key)
    if v is None:
        if required:
            raise ValueError(f"'{key}' is required")
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"'{key}' must be an integer (epoch ms), got {v!r}")
    return v / 1000.0


def _text(doc: dict, key: str, required: bool = True) -> str | None:
    v = doc.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v:
        raise ValueError(f"'{key}' must be a non-empty string")
    return v


def parse_jsonl(lines: Iterable[str]) -> ParsedProvenance:
    """Runs and accesses of the JSONL format (module doc); bad lines are reported, not guessed."""
    accesses: list[FileAccess] = []
    runs: list[RunRecord] = []
    problems: list[tuple[int, str]] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            kind = doc.get("type")
            if kind == "run":
                runs.append(RunRecord(_text(doc, "job"), _text(doc, "run"), _ms(doc, "submit_ms", True),
                                      _ms(doc, "start_ms", False), _ms(doc, "finish_ms", False)))
            elif kind == "access":
                access = Access(doc.get("access"))
                path = _text(doc, "path")
                if not path.startswith("/"):
                    raise ValueError("'path' must be absolute")
                actor = doc.get("actor") or ""
                if not isinstance(actor, str):
                    raise ValueError("'actor' must be a string")
                accesses.append(FileAccess(_ms(doc, "time_ms", True), access, path, _text(doc, "run", False),
                                           actor, str(doc.get("op") or access.value)))
            else:
                raise ValueError(f"'type' must be 'run' or 'access', got {kind!r}")
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            problems.append((no, str(exc)))
    return ParsedProvenance(tuple(accesses), tuple(runs), tuple(problems))


def to_jsonl(accesses: Iterable[FileAccess], runs: Iterable[RunRecord]) -> list[str]:
    """The JSONL lines for these runs and accesses (what `parse_jsonl` reads back)."""
    def ms(t: float | None) -> int | None:
        return None if t is None else int(round(t * 1000))

    out = [json.dumps({"type": "run", "job": r.job, "run": r.run_id, "submit_ms": ms(r.submitted_at),
                       "start_ms": ms(r.started_at), "finish_ms": ms(r.finished_at)}) for r in runs]
    out += [json.dumps({"type": "access", "time_ms": ms(a.time), "access": a.access.value, "path": a.path,
                        "run": a.run_id, "actor": a.actor, "op": a.op}) for a in accesses]
    return out

"""Replay a recorded scenario timeline (fixtures/yarn-3.3.6/scenarios/*) against the emulator.

A timeline is every HTTP request the recorder made, in time order, with the RM's answer.
`replay` moves the emulator's SimClock to each request's time, first runs the workload actions
the recorder performed outside REST (starting a distributedshell or MapReduce client, a CPU
burner) at their recorded times (events.jsonl), then sends the same request (writes with their
exact bodies) over HTTP and pairs the emulated answer with the recorded one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from emu_world import N1, N2, World
from shape import Answer, Obj, parse

NM_PORTS = {"8042": N1, "8142": N2, "8044": N2}


@dataclass(frozen=True)
class Exchange:
    t: float                 # seconds since the scenario started
    method: str
    path: str                # RM path (NM URLs mapped to the emulator's /nm/{node} prefix)
    recorded: Answer
    emulated: Answer

    def rec(self) -> Any:
        return parse(self.recorded.body) if self.recorded.body.strip() else None

    def emu(self) -> Any:
        return parse(self.emulated.body) if self.emulated.body.strip() else None


def load(scenario_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = [json.loads(line) for line in (scenario_dir / "timeline.jsonl").read_text().splitlines() if line.strip()]
    events = [json.loads(line) for line in (scenario_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    return rows, events


def start_epoch(events: list[dict[str, Any]]) -> float:
    return next(e["epoch_ms"] for e in events if e["event"] == "scenario_start") / 1000.0


_ASSIGNED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*Assigned container \S+ of capacity .* "
                       r"on host (\S+),")


def heartbeats(scenario_dir: Path) -> dict[str, float]:
    """One recorded heartbeat time (epoch s) per NodeManager: the RM log's first "Assigned
    container ... on host N" line (the CapacityScheduler allocates at node heartbeats)."""
    log = scenario_dir / "rm-log-excerpt.log"
    out: dict[str, float] = {}
    if not log.exists():
        return out
    for line in log.read_text(errors="replace").splitlines():
        m = _ASSIGNED.match(line)
        if m and m.group(3) not in out:
            out[m.group(3)] = _log_time(m.group(1), m.group(2))
    return out


_ACCEPTED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*RMAppImpl: (application_\d+_\d+) "
                       r"State change from SUBMITTED to ACCEPTED")


def _log_time(day_time: str, millis: str) -> float:
    wall = datetime.strptime(day_time, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    return wall.timestamp() + int(millis) / 1000.0


def accepted(scenario_dir: Path) -> dict[str, float]:
    """When the RM accepted each app (epoch s), from its log; the client's own "submitted" print
    comes later, and which NM heartbeat comes first decides where the AM lands."""
    log = scenario_dir / "rm-log-excerpt.log"
    if not log.exists():
        return {}
    return {m.group(3): _log_time(m.group(1), m.group(2)) for m in map(_ACCEPTED.match, log.read_text(
        errors="replace").splitlines()) if m}


_REGISTERED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*RMAppImpl: (application_\d+_\d+) "
                         r"State change from ACCEPTED to RUNNING")
_AM_ASSIGNED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*Assigned container "
                          r"container_(\d+)_(\d+)_01_000001 ")


def am_startups(scenario_dir: Path) -> dict[str, float]:
    """Each app's AM start-up as recorded (AM container assigned -> ATTEMPT_REGISTERED): a
    property of the AM program on that host (DS 1.0-2.7 s across the recordings)."""
    log = scenario_dir / "rm-log-excerpt.log"
    if not log.exists():
        return {}
    assigned, registered = {}, {}
    for line in log.read_text(errors="replace").splitlines():
        if m := _AM_ASSIGNED.match(line):
            assigned.setdefault(f"application_{m.group(3)}_{m.group(4)}", _log_time(m.group(1), m.group(2)))
        elif m := _REGISTERED.match(line):
            registered.setdefault(m.group(3), _log_time(m.group(1), m.group(2)))
    return {app: registered[app] - t for app, t in assigned.items() if app in registered}


_FOLLOWER = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*Finished iteration of plan follower")


def follower_tick(scenario_dir: Path) -> float | None:
    """One recorded plan-follower step (epoch s), from the RM log."""
    log = scenario_dir / "rm-log-excerpt.log"
    if not log.exists():
        return None
    for line in log.read_text(errors="replace").splitlines():
        if m := _FOLLOWER.match(line):
            return _log_time(m.group(1), m.group(2))
    return None


def _target(path: str) -> str:
    if path.startswith("http"):
        parts = urlsplit(path)
        return f"/nm/{NM_PORTS[str(parts.port)]}{parts.path}"
    return path


def _body(row: dict[str, Any]) -> bytes:
    body = row.get("request_body")
    if body is None:
        return b""
    return (body if isinstance(body, str) else json.dumps(body)).encode()


def replay(world: World, rows: list[dict[str, Any]], base: float,
           actions: list[tuple[float, Callable[[World], None]]]) -> Iterator[Exchange]:
    """Yield every exchange of the timeline with the emulator's answer at the same instant."""
    pending = sorted(actions, key=lambda a: a[0])
    for row in rows:
        t = row["t_ms"] / 1000.0
        while pending and pending[0][0] <= t:
            at, action = pending.pop(0)
            world.clock.set(max(world.clock.now(), base + at))
            action(world)
        world.clock.set(max(world.clock.now(), base + t))
        body = _body(row)
        headers = {"Content-Type": "application/json"} if body else {}
        emulated = world.send(row["method"], _target(row["path"]), headers, body)
        raw = row["body"]
        text = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"))
        ctype = "application/json;charset=utf-8"
        yield Exchange(t, row["method"], _target(row["path"]), Answer(row["status"], ctype, text), emulated)


def field(doc: Any, *path: str) -> Any:
    """doc.a.b... through parsed objects (None when absent)."""
    for key in path:
        if not isinstance(doc, Obj):
            return None
        doc = doc.get(key)
    return doc


def as_list(v: Any) -> list[Any]:
    if v is None:
        return []
    return list(v) if isinstance(v, list) else [v]


def quiet(t: float, busy: list[tuple[float, float]]) -> bool:
    """True when `t` lies outside every (start, length) transition window."""
    return all(not (start - 0.5 <= t <= start + length) for start, length in busy)


def shape_mismatches(exchanges: list[Exchange], busy: list[tuple[float, float]],
                     skip: Callable[[Exchange], bool] = lambda ex: False) -> list[str]:
    """Shape differences of every exchange outside the transition windows (writes always count).

    The recorded timeline bodies were stored parsed, so duplicate `entry` keys are already
    merged there; the emulated body is merged the same way before comparing.
    """
    from shape import compare

    out = []
    for ex in exchanges:
        if skip(ex) or (ex.method == "GET" and not quiet(ex.t, busy)):
            continue
        if ex.recorded.status != ex.emulated.status:
            out.append(f"{ex.t:.3f} {ex.method} {ex.path}: status {ex.recorded.status} vs {ex.emulated.status}")
            continue
        emu = parse(json.dumps(json.loads(ex.emulated.body))) if ex.emulated.body.strip() else None
        for d in compare(ex.rec(), emu):
            out.append(f"{ex.t:.3f} {ex.method} {ex.path}: {d}")
    return out

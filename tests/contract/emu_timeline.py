"""Replay a recorded scenario timeline (fixtures/yarn-3.3.6/scenarios/*) against the emulator.

A timeline is every HTTP request the recorder made, in time order, with the RM's answer.
`replay` moves the emulator's SimClock to each request's time, first runs the workload actions
the recorder performed outside REST (starting a distributedshell or MapReduce client, a CPU
burner) at their recorded times (events.jsonl), then sends the same request (writes with their
exact bodies) over HTTP and pairs the emulated answer with the recorded one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from emu_world import N1, N2, World
from shape import Answer, Obj, parse

NM_PORTS = {"8042": N1, "8142": N2}


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

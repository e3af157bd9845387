"""Record a differential run against an RM as a scenario in the fixtures' on-disk format.

`record(rm_url, out_dir, ...)` sends a seeded sequence (sequences.py) to the RM over HTTP and
writes, like ../shared/fixtures/yarn-3.3.6/scenarios/*:

- `timeline.jsonl`: every request in time order: `t_ms` (since the start), `method`, `path`
  (as sent, with `?user.name=`), `request_body` (parsed JSON or null), `status`, `body` (parsed
  JSON, or the raw text), `t_end_ms`;
- `events.jsonl`: `scenario_start` (with `epoch_ms`), the sequence (`seed`, `steps`), one
  `step` event per call (its name and the recorded answer form it corresponds to), the
  cleanup, `scenario_end`;
- `README.md`: what was run against which RM, and how to replay it.

So an operator can capture their own cluster's behaviour and replay it against the emulator
(tests/contract/emu_timeline.py) or compare two clusters. The run cleans up after itself.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import requests

from harvester.emulator import sequences


def _parsed(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return text


def record(rm_url: str, out_dir: Path, *, seed: int, steps: int, user: str | None = None, pace: float = 1.0,
           timeout_s: float = 30.0, wall: Callable[[], float] = time.time,
           sleep: Callable[[float], None] = time.sleep,
           on_step: Callable[[str], None] | None = None) -> list[tuple[str, int]]:
    """Record one run; returns (step name, status) per call. `pace` scales the waits between
    steps (below 1 for an emulator running faster than real time); `on_step(name)` after each
    step (progress)."""
    base = rm_url.rstrip("/")
    out_dir.mkdir(parents=True, exist_ok=True)
    session = requests.Session()
    start = wall()
    timeline: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = [{"t_ms": 0, "event": "scenario_start", "epoch_ms": int(start * 1000),
                                     "rm_url": base},
                                    {"t_ms": 0, "event": "sequence", "seed": seed, "steps": steps}]

    def ms() -> int:
        return int(round((wall() - start) * 1000))

    def send(method: str, path: str, headers: dict[str, str], body: bytes) -> sequences.Answer:
        if user and method != "GET":
            path += ("&" if "?" in path else "?") + f"user.name={user}"
        t0 = ms()
        r = session.request(method, base + path, headers=headers, data=body or None, timeout=timeout_s)
        answer = sequences.Answer(r.status_code, r.headers.get("Content-Type", ""), r.text)
        timeline.append({"t_ms": t0, "method": method, "path": path,
                         "request_body": _parsed(body.decode()) if body else None, "status": r.status_code,
                         "body": _parsed(r.text), "t_end_ms": ms()})
        return answer

    def note(step: sequences.Step, body: bytes, answer: sequences.Answer) -> None:
        events.append({"t_ms": ms(), "event": "step", "name": step.name, "form": step.capture,
                       "status": answer.status})
        if on_step is not None:
            on_step(step.name)

    made = sequences.new_vars()
    try:
        results = sequences.run(send, sequences.generate(seed, steps), lambda: int(wall() * 1000),
                                lambda s: sleep(s * pace), made, note)
    finally:
        events.append({"t_ms": ms(), "event": "phase", "name": "cleanup: kill the run's apps, delete its "
                                                                  "reservations"})
        sequences.cleanup(send, made)
        events.append({"t_ms": ms(), "event": "scenario_end"})
        _write(out_dir, timeline, events, base, seed, steps)
        session.close()
    return [(step.name, answer.status) for step, answer, _ in results]


def _write(out_dir: Path, timeline: list[dict[str, Any]], events: list[dict[str, Any]], base: str, seed: int,
           steps: int) -> None:
    (out_dir / "timeline.jsonl").write_text("".join(json.dumps(r) + "\n" for r in timeline))
    (out_dir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    start = next(e["epoch_ms"] for e in events if e["event"] == "scenario_start")
    (out_dir / "README.md").write_text(
        f"# {out_dir.name} - a recorded differential run (harvester rm record)\n"
        f"Start epoch_ms {start}; RM {base}; sequence seed {seed}, {steps} steps "
        f"(harvester/emulator/sequences.py), {len(timeline)} calls.\n"
        "Files as in the fixtures' scenarios: `timeline.jsonl` (every HTTP call: t_ms, method, path, request_body,\n"
        "status, body, t_end_ms), `events.jsonl` (scenario_start, the sequence, one `step` per call with the\n"
        "recorded answer form it corresponds to, cleanup, scenario_end).\n"
        "Replay it against the emulator with tests/contract/emu_timeline.py (`load` + `replay`).\n")

"""Differential test: one request sequence to a live Hadoop 3.3.6 RM and to the emulator.

The emulator is built like the live cluster (the same NodeManager ids and capacities, the
reservable `root.default` of deploy/hadoop/capacity-scheduler.xml) on a RealClock, then both
get tests/contract/diff_sequence.py. Answers must agree in status, content type, body form,
keys, value kinds, list collapse and error class/message form. Where they differ, the emulator
is wrong. Needs HARVESTER_TEST_RM_URL (or a Docker engine): see conftest.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))
from diff_sequence import run  # noqa: E402
from shape import Answer, compare_answers  # noqa: E402

from harvester.clock import RealClock  # noqa: E402
from harvester.domain import Resources  # noqa: E402
from harvester.emulator import Emulator, EmulatorConfig, EmulatorServer  # noqa: E402

pytestmark = pytest.mark.integration


def _sender(base: str, session: requests.Session, user: str | None):  # type: ignore[no-untyped-def]
    def send(method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        if user and method != "GET":
            path += ("&" if "?" in path else "?") + f"user.name={user}"
        r = session.request(method, base + path, headers=headers, data=body or None, timeout=30)
        return Answer(r.status_code, r.headers.get("Content-Type", ""), r.text)
    return send


def _emulator_like(rm_url: str, session: requests.Session) -> Emulator:
    nodes = session.get(f"{rm_url}/ws/v1/cluster/nodes", timeout=30).json()["nodes"]
    items = nodes["node"] if isinstance(nodes.get("node"), list) else [nodes["node"]]
    emu = Emulator(RealClock(), EmulatorConfig())
    for n in items:
        total = n["totalResource"]
        emu.add_nodes([n["id"]], Resources(total["memory"], total["vCores"]), physical_cores=float(total["vCores"]),
                      http_addresses=[n["nodeHTTPAddress"]], racks=[n["rack"]])
    return emu


def test_emulator_answers_like_the_live_rm(rm_url: str, live_hadoop) -> None:  # type: ignore[no-untyped-def]
    session = requests.Session()
    emu = _emulator_like(rm_url, session)
    user = getattr(live_hadoop, "user", None)
    now_ms = lambda: int(time.time() * 1000)  # noqa: E731 - both sides plan against wall time
    with EmulatorServer(emu) as server:
        real = run(_sender(rm_url, session, user), now_ms)
        emulated = run(_sender(server.url, session, user), now_ms)
    problems = {}
    for (step, r), (_, e) in zip(real, emulated):
        diffs = compare_answers(r, e)
        if diffs:
            problems[f"{step.method} {step.path} ({step.capture})"] = diffs
    assert problems == {}

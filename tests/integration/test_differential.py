"""Differential runs: the same seeded REST sequences to a live Hadoop 3.3.6 RM and to the emulator.

The sequences (harvester/emulator/sequences.py) mix valid and invalid calls: apps (submitted,
rejected, killed twice, a priority change), reservations (submitted, listed, updated, deleted
twice, invalid ones), node resource re-posts, container signals. For each call the two answers
must agree on what the sequence determines: the status, error class and message (digits aside),
and our own objects' fields. Nothing else is compared, so the test holds on a used, shared
cluster (other apps, queues' users, capacities and timing are not looked at), and it can run
twice: every run kills its apps and deletes its reservations, and node updates re-post the
node's current resource with overCommitTimeout -1.

The emulator is built from what the live RM reports: its NodeManagers (ids, capacities, web
addresses, racks) and its queues (capacities as reported, float32 noise included: a 30 % queue
shows 30.000002; which are reservable: emulator/queues.queues_from_scheduler). A layout the
emulator does not model (queues nested below root's children) skips, naming the queue. Seeds: HARVESTER_TEST_DIFF_SEEDS
(comma separated, default "1,2"). Needs HARVESTER_TEST_RM_URL (or a Docker engine): see conftest.py.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
import requests

from harvester.clock import RealClock
from harvester.domain import Resources
from harvester.emulator import Emulator, EmulatorConfig, EmulatorServer
from harvester.emulator import sequences as seq
from harvester.emulator.queues import queues_from_scheduler

pytestmark = pytest.mark.integration
STEPS = 40


def _sender(base: str, session: requests.Session, user: str | None) -> seq.Send:
    def send(method: str, path: str, headers: dict[str, str], body: bytes) -> seq.Answer:
        if user and method != "GET":
            path += ("&" if "?" in path else "?") + f"user.name={user}"
        r = session.request(method, base + path, headers=headers, data=body or None, timeout=60)
        return seq.Answer(r.status_code, r.headers.get("Content-Type", ""), r.text)
    return send


def _items(v: Any, key: str) -> list[Any]:
    got = (v or {}).get(key) or []
    return [got] if isinstance(got, dict) else list(got)


def _emulator_like(rm_url: str, session: requests.Session) -> Emulator:
    get = lambda path: session.get(f"{rm_url}{path}", headers={"Accept": "application/json"}, timeout=60).json()  # noqa: E731
    info = get("/ws/v1/cluster/info")["clusterInfo"]
    try:
        queues = queues_from_scheduler(get("/ws/v1/cluster/scheduler"))
        emu = Emulator(RealClock(), EmulatorConfig(cluster_ts_ms=int(info["id"]), queues=queues))
    except ValueError as err:
        pytest.skip(f"the emulator cannot take this RM's queue layout: {err}")
    if not any(q.name == "default" and q.reservable for q in queues):  # the sequences' plan queue (recorded layout)
        pytest.skip("the sequences (emulator/sequences.py) use root.default as the reservable queue; this RM's "
                    f"reservable queues: {[f'root.{q.name}' for q in queues if q.reservable] or 'none'}")
    for n in _items(get("/ws/v1/cluster/nodes").get("nodes"), "node"):
        if n.get("state") != "RUNNING":
            continue
        total = n["totalResource"]
        emu.add_nodes([n["id"]], Resources(total["memory"], total["vCores"]), physical_cores=float(total["vCores"]),
                      http_addresses=[n["nodeHTTPAddress"]], racks=[n["rack"]])
    return emu


def _run(send: seq.Send, seed: int) -> list[tuple[seq.Step, seq.Answer, dict[str, Any]]]:
    made = seq.new_vars()
    try:
        return seq.run(send, seq.generate(seed, STEPS), lambda: int(time.time() * 1000), time.sleep, made)
    finally:
        seq.cleanup(send, made)


@pytest.mark.parametrize("seed", [int(s) for s in os.environ.get("HARVESTER_TEST_DIFF_SEEDS", "1,2").split(",")])
def test_emulator_answers_like_the_live_rm(seed: int, rm_url: str, live_hadoop: Any) -> None:
    session = requests.Session()
    user = getattr(live_hadoop, "user", None)
    emu = _emulator_like(rm_url, session)
    real = _run(_sender(rm_url, session, user), seed)
    with EmulatorServer(emu) as server:
        emulated = _run(_sender(server.url, session, user), seed)
    problems = [f"{step.name} ({step.capture}): live {f_real}, emulated {f_emu}"
                for (step, _, f_real), (_, _, f_emu) in zip(real, emulated) if f_real != f_emu]
    assert len(real) == len(emulated) and problems == []

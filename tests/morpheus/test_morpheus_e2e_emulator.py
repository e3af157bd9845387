"""End to end against the emulator over real HTTP: Morpheus's loops in the real composition root
(`cluster.source: rm` pointing at an emulated 3.3.6 RM on a SimClock) plan a recurring job
from its history, submit its reservations, and an app submitted into our reservation gets its
containers — in the SECOND period too, which is the crux: a 3.3.6 recurring reservation gets
capacity in its first period only (scenarios/recurring-reservation*, reproduced by the
emulator), so the one-off-per-period mode must give period 2 its own reservation, and the
nudge must make its queue's capacity effective. The recurring mode is run beside it to show the
defect the one-off mode works around. Every assertion reads what the RM reports.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any, Iterator

import pytest
from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.config import parse_settings
from harvester.domain import Resources
from harvester.emulator.demo_recurring import RecurringJob, recurring_history

from emu_cluster import EmuCluster

JOB = RecurringJob("it-etl", 300.0, 30.0, 2, 120.0, 10.0, 270.0)  # 5-minute period: window [60 s, 240 s)
PERIOD = 300.0


class Rig:
    def __init__(self, mode: str) -> None:
        self.cluster = EmuCluster(start=1_795_430_000.0 + 20.0)
        settings = parse_settings({
            "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
            "store": {"backend": "memory"},
            "cluster": {"source": "rm"},
            "rm": {"urls": [self.cluster.url], "user": "root", "max_retries": 0, "read_timeout_s": 5},
            "telemetry": {"poll_interval_s": 2, "stale_after_s": 30},
            "harvesting": {"actuate": False, "tenants": [{"tenant": "svc", "environment": "prod",
                                                          "hostname_pattern": "^localhost$"}],
                           "node_resources": {"physical_cores": 8}, "control_period_s": 1},
            "morpheus": {"enabled": True, "reservations": {"mode": mode, "renew_lead_s": 120, "control_period_s": 5}},
        }, environ={})
        self.app = Harvester(settings, clock=self.cluster.clock, registry=CollectorRegistry())
        runs, accesses = recurring_history(self.cluster.clock.now(), jobs=(JOB,), origin="rm")
        self.app.store.append_job_runs(runs)
        self.app.store.append_provenance("it", accesses, [], None, self.cluster.clock.now())
        self.app.start(run_loops=False)
        self.every = {"telemetry": 2, "guard": 1, "morpheus-refit": 60, "morpheus-reservations": 5}
        self.elapsed = 0

    def step(self, seconds: int) -> None:
        """Advance 1 s at a time, ticking each loop at its interval (as its thread would)."""
        for _ in range(seconds):
            self.cluster.advance(1.0)
            self.elapsed += 1
            for name, every in self.every.items():
                if self.elapsed % every == 0 or self.elapsed == 1:
                    loop = self.app.loop(name)
                    assert loop.run_once() is not None, f"{name}: {loop.status()['last_error']}"

    def until(self, t: float) -> None:
        self.step(max(0, int(t - self.cluster.clock.now())))

    def admin(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://{self.app.admin.address}{path}", timeout=5) as r:
            return json.loads(r.read())

    def close(self) -> None:
        self.app.stop()
        self.cluster.close()


@pytest.fixture()
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    r = Rig(request.param)
    try:
        yield r
    finally:
        r.close()


def window_start(now: float) -> float:
    return (now // PERIOD + 1) * PERIOD + 60.0


def run_in_window(rig: Rig) -> tuple[str, str]:
    """Wait for the next window, submit a 2-map MR job into the job's reservation (the id from
    `GET /v1/morpheus/slo`, as a user's scheduler would), return (reservation id, app id)."""
    c = rig.cluster
    arrival = window_start(c.clock.now())
    rig.until(arrival + 1)  # the plan follower created the queue (it is there <= 1 s early)
    doc = rig.admin(f"/v1/morpheus/slo?job={JOB.name}")
    res = doc["reservation"]
    assert res is not None and res["state"] == "ACTIVE", doc["reservation"]
    assert res["key"].endswith("@recurring") or res["arrival_ms"] == int(arrival * 1000), "the window of this period"
    app = c.work.mapreduce_sleep(2, Resources(1024, 1), map_duration_s=60.0, reservation_id=res["reservation_id"])
    return res["reservation_id"], app.app_id


def queue_capacity(rig: Rig, rid: str) -> tuple[float, int]:
    """(capacity %, effective min memory MB) of the reservation's queue, as /scheduler shows it."""
    from rm_client.wire.scheduler import iter_queues

    root = rig.cluster.client.get_scheduler().root
    for _, q in iter_queues(root):
        if q.name == rid:
            eff = q.capacities[0].effective_min_resource if q.capacities else None
            return q.capacity_percent, eff.memory_mb if eff else 0
    raise AssertionError(f"no queue {rid}")


@pytest.mark.parametrize("rig", ["one_off"], indirect=True)
def test_an_app_in_our_reservation_gets_containers_in_the_first_and_the_second_period(rig: Rig) -> None:
    c = rig.cluster
    rig.step(2)
    slos = rig.admin("/v1/morpheus/slos")
    (job,) = slos["jobs"]
    assert job["job"] == JOB.name and job["actionable"] and job["planned"], job
    assert job["period_s"] == PERIOD and job["plan_reason"].startswith("LowCost: steps 1..3 of every 5-step period")
    for period in (1, 2):
        rid, app_id = run_in_window(rig)
        rig.step(8)  # the guard's next ticks nudge: activation was 9 s ago
        cap, eff = queue_capacity(rig, rid)
        assert cap == pytest.approx(100.0 * 3072 / 16384, abs=0.01), f"period {period}: the plan follower's share"
        assert eff == 3072, f"period {period}: the nudge made the queue's capacity effective"
        rig.step(10)  # the MR AM registers (~3 s), then asks for its maps
        got = c.client.get_app(app_id)
        assert got.state == "RUNNING" and got.running_containers == 3, f"period {period}: {got.state} {got.diagnostics}"
        assert got.allocated_mb == 3072, "AM + both maps inside the 3072 MB reservation"
        nudges = rig.admin("/v1/morpheus/reservations")["nudges"]
        assert any(n["done"] and f"activation of {rid}" in " ".join(n["reasons"]) for n in nudges)
        rig.step(220)
    listed = {r.reservation_id for r in c.client.list_reservations(queue="root.default")}
    records = rig.admin("/v1/morpheus/reservations")["reservations"]
    ours = [r for r in records if r["reservation_id"]]
    assert len({r["reservation_id"] for r in ours}) >= 3, "one reservation per period"
    assert all(r["state"] in ("SCHEDULED", "ACTIVE", "ENDED", "DELETING", "DELETED") for r in ours)
    assert {r["reservation_id"] for r in ours if r["state"] in ("SCHEDULED", "ACTIVE")} <= listed


@pytest.mark.parametrize("rig", ["recurring"], indirect=True)
def test_recurring_mode_shows_the_336_defect_in_the_second_period(rig: Rig) -> None:
    c = rig.cluster
    rig.step(2)
    rid1, app1 = run_in_window(rig)
    rig.step(8)
    assert queue_capacity(rig, rid1)[1] == 3072 and c.client.get_app(app1).running_containers >= 1
    rig.step(230)
    rid2, app2 = run_in_window(rig)
    assert rid2 == rid1, "one recurring reservation for every period"
    rig.step(8)
    assert queue_capacity(rig, rid2) == (0.0, 0), "3.3.6 re-creates the queue at 0 % after the first period"
    assert c.client.get_app(app2).running_containers <= 2, "at most the AM + one map in a 0 % queue (recording: app2)"

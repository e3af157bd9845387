"""Jockey against a REAL Hadoop 3.3.6 ResourceManager (the `live_hadoop` fixture).

The composition root runs Jockey's loop on real time against the live RM: a user's reservation
(2 containers of 1024 MB / 1 vcore for 5 minutes, R_ORDER_NO_GAP, named with this run's id) holds
the deadline job's app, Jockey finds both, decides the allocation the deadline needs at progress
0 (the early over-allocation: 3 containers for the 6 × 30 s tasks of its history and a 120 s
deadline while the app is young, up to 6 as it waits) and resizes the reservation with `reservation/update`. Expectations come from the
recordings (../shared/fixtures/yarn-3.3.6):
- an app submitted over REST never registers its AM: it stays ACCEPTED while its AM container runs
  (tests/integration/rest_apps.py), so its workers never ask: p stays 0 and the demand is unknown;
- `reservation/update` answers 200 `{}` and the list shows the new definition at once, the window
  and the arrival unchanged (scenarios/recurring-reservation at A+215 s: "visible in the list
  right after the 200");
- a busy or small plan may refuse the reservation (PlanningQuotaException, captures
  err-reservation-submit-6-…) or the update: the test then skips with the RM's reason.
Safe on a used, shared cluster and twice in a row: the app and the reservation are named with
this run's id, Jockey only touches the reservation of that name, and both are killed / deleted at
the end. The only other write is the nudge (one node's CURRENT resource re-posted with
overCommitTimeout -1, what the recording did).
"""

from __future__ import annotations

import random
import string
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client import CollectorRegistry
from rest_apps import kill_quietly, submit_sleep_app, wait_for

from harvester.app import Harvester
from harvester.config import parse_settings
from rm_client import (
    Interpreter, ReservationDefinition, ReservationRequest, Resource, RMBadRequestError, RMClient, RMClientConfig, RMError,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from jockey_rig import write_prior_runs  # noqa: E402

pytestmark = pytest.mark.integration

PLAN_QUEUE = "root.default"


@pytest.fixture()
def client(live_hadoop: Any) -> Iterator[RMClient]:
    with RMClient(RMClientConfig(urls=(live_hadoop.rm_url,), user=live_hadoop.user, read_timeout_s=30.0)) as c:
        yield c


def test_jockey_resizes_the_jobs_reservation_on_a_live_rm(live_hadoop: Any, client: RMClient, tmp_path: Path) -> None:
    run = "hvjockey" + "".join(random.choices(string.ascii_lowercase, k=8))  # letters: the name rule keeps them
    now_ms = max(int(time.time() * 1000), client.get_cluster_info().started_on_ms)
    arrival = now_ms + 20_000
    try:
        rid = client.new_reservation()
        client.submit_reservation(rid, PLAN_QUEUE, ReservationDefinition(
            arrival_ms=arrival, deadline_ms=arrival + 300_000, name=f"{run}-window", interpreter=Interpreter(3),
            recurrence_period_ms=0, requests=(ReservationRequest(Resource(1024, 1), 2, 2, 300_000),)))
    except RMBadRequestError as err:
        pytest.skip(f"the plan refused a 2-container reservation: {err.remote_message or err}")
    app_id = None
    harvester = None
    try:
        runs = write_prior_runs(tmp_path / "runs.json", maps=6, map_s=30.0, job=run)
        harvester = Harvester(parse_settings({
            "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.5},
            "store": {"backend": "memory"},
            "cluster": {"source": "rm"},
            "rm": {"urls": [live_hadoop.rm_url], "user": live_hadoop.user, "read_timeout_s": 30},
            "telemetry": {"poll_interval_s": 2, "stale_after_s": 30},
            "harvesting": {"actuate": False, "control_period_s": 1},
            "morpheus": {"enabled": False},
            "jockey": {"enabled": True, "queue": PLAN_QUEUE, "control_period_s": 3, "runs_per_level": 30,
                       "jobs": {run: {"runs": str(runs), "deadline_s": 120, "reservation_name": f"{run}-window"}}},
        }, environ={}), registry=CollectorRegistry())
        wait_for(lambda: int(time.time() * 1000) >= arrival + 2000 or None, timeout_s=40, what="the window opens")
        app_id = submit_sleep_app(client, seconds=240, name=f"{run}-20261125", reservation_id=rid)
        harvester.start()

        def decided() -> dict[str, Any] | None:
            doc = harvester.jockey.status()["jobs"].get(run)  # type: ignore[union-attr]  # {} before the first tick
            return doc if doc and doc["state"] == "running" and doc["decided"] is not None else None
        doc = wait_for(decided, timeout_s=60, what="Jockey's first decision on the running app")
        view = harvester.control.jockey_board.control().job(run)
        assert view is not None and view.app_id == app_id and view.reservation_id == rid
        assert view.progress == 0.0, "an ACCEPTED REST app never asks for workers"
        if view.fate.startswith("refused"):
            pytest.skip(f"the plan refused the resize: {view.fate}")
        # 3 while the app is younger than ~15 s, more as time passes at p = 0 (the RM's clock and ours may differ)
        assert 3 <= doc["decided"] <= 6 and view.rule == "raise" and view.fate == "sent", view.reason
        (info,) = [r for r in client.list_reservations(queue=PLAN_QUEUE) if r.reservation_id == rid]
        d = info.definition
        assert (d.arrival_ms, d.deadline_ms) == (arrival, arrival + 300_000), "the window is not moved"
        assert d.requests[-1].num_containers == doc["decided"] and sum(r.duration_ms for r in d.requests) == 300_000
        with urllib.request.urlopen(f"http://{harvester.admin.address}/metrics", timeout=10) as r:
            text = r.read().decode()
        assert 'harvester_jockey_reservation_updates_total{outcome="sent"}' in text
        assert f'harvester_jockey_allocation_containers{{job="{run}",kind="decided"}} {doc["decided"]:.1f}' in text
    finally:
        if harvester is not None:
            harvester.stop()
        if app_id is not None:
            kill_quietly(client, app_id)
        try:
            client.delete_reservation(rid)
        except RMError:
            pass  # already gone (its window ended and the plan archived it)

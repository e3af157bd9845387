"""Jockey against a REAL Hadoop 3.3.6 ResourceManager (the `live_hadoop` fixture).

The composition root runs Jockey's loop on real time against the live RM: a user's reservation
(1 container for 5 minutes, R_ORDER_NO_GAP, named with this run's id) holds the deadline job's
app, Jockey finds both, decides the allocation the deadline needs at progress 0 (the early
over-allocation) and resizes the reservation with `reservation/update`.

The job and its containers are sized from the plan the test finds (tests/support/live_cluster.py
`jockey_sizing`, checked there against Jockey's own model): the plan queue's effective capacity
is read first, and the largest raise Jockey can ask for (one container per task, its demand cap)
takes at most half of it. On the recorded 2 x 8192 MB / 8 vcore plan that is the former fixed job
(6 tasks of 30 s, 1024 MB containers, a 120 s deadline: 3 containers while the app is young, up
to 6 as it waits); a smaller plan gets fewer, longer tasks and smaller containers, and a plan too
small for a 3-task job skips with the figures. Expectations come from the recordings
(../shared/fixtures/yarn-3.3.6):
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
from live_cluster import jockey_sizing
from rest_apps import kill_quietly, submit_sleep_app, wait_for

from harvester.app import Harvester
from harvester.config import parse_settings
from rm_client import (
    Interpreter, ReservationDefinition, ReservationRequest, RMBadRequestError, RMClient, RMClientConfig, RMError,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from jockey_rig import write_prior_runs  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture()
def client(live_hadoop: Any) -> Iterator[RMClient]:
    with RMClient(RMClientConfig(urls=(live_hadoop.rm_url,), user=live_hadoop.user, read_timeout_s=30.0)) as c:
        yield c


def test_jockey_resizes_the_jobs_reservation_on_a_live_rm(live_hadoop: Any, client: RMClient, live_queues: Any,
                                                          plan_queue: str, tmp_path: Path) -> None:
    if live_queues.plan_capacity is None:
        pytest.skip(f"the RM shows no effective capacity for {plan_queue}")
    size = jockey_sizing(live_queues.plan_capacity)
    if isinstance(size, str):
        pytest.skip(size)
    run = "hvjockey" + "".join(random.choices(string.ascii_lowercase, k=8))  # letters: the name rule keeps them
    now_ms = max(int(time.time() * 1000), client.get_cluster_info().started_on_ms)
    arrival = now_ms + 20_000
    try:
        rid = client.new_reservation()
        client.submit_reservation(rid, plan_queue, ReservationDefinition(
            arrival_ms=arrival, deadline_ms=arrival + 300_000, name=f"{run}-window", interpreter=Interpreter(3),
            recurrence_period_ms=0,
            requests=(ReservationRequest(size.container, size.initial, size.initial, 300_000),)))
    except RMBadRequestError as err:
        pytest.skip(f"the plan refused a {size.initial} x {size.container} reservation: {err.remote_message or err}")
    app_id = None
    harvester = None
    try:
        runs = write_prior_runs(tmp_path / "runs.json", maps=size.maps, map_s=size.map_s, job=run)
        harvester = Harvester(parse_settings({
            "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.5},
            "store": {"backend": "memory"},
            "cluster": {"source": "rm"},
            "rm": {"urls": [live_hadoop.rm_url], "user": live_hadoop.user, "read_timeout_s": 30},
            "telemetry": {"poll_interval_s": 2, "stale_after_s": 30},
            "harvesting": {"actuate": False, "control_period_s": 1},
            "morpheus": {"enabled": False},
            "jockey": {"enabled": True, "queue": plan_queue, "control_period_s": 3, "runs_per_level": 30,
                       "jobs": {run: {"runs": str(runs), "deadline_s": size.deadline_s,
                                      "reservation_name": f"{run}-window"}}},
        }, environ={}), registry=CollectorRegistry())
        wait_for(lambda: int(time.time() * 1000) >= arrival + 2000 or None, timeout_s=40, what="the window opens")
        app_id = submit_sleep_app(client, seconds=240, queue=plan_queue, name=f"{run}-20261125", reservation_id=rid)
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
        # more than the reservation holds, at most one container per task (more as time passes at p = 0;
        # the RM's clock and ours may differ)
        assert size.initial < doc["decided"] <= size.maps and view.rule == "raise" and view.fate == "sent", view.reason
        (info,) = [r for r in client.list_reservations(queue=plan_queue) if r.reservation_id == rid]
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

"""Morpheus against a REAL Hadoop 3.3.6 ResourceManager (the foundation's `live_hadoop` fixture).

The composition root runs its Morpheus loops on real time against the live RM: three recurring
jobs (3-minute periods, one-container windows a minute after each period start) planned from
their history, their one-off reservations submitted ahead of each window and reconciled with
the RM's list (a second sidecar adopts them instead of submitting again), an app submitted INTO
one job's reservation in its SECOND period gets its AM container (the nudge makes the fresh
reservation queue's capacity effective, scenarios/recurring-reservation), and asking for more
than the skyline makes DRA update that reservation while the app runs.

Expectations come from the recordings (../shared/fixtures/yarn-3.3.6, README):
- the plan queue is the reservable queue the RM's /scheduler shows (or HARVESTER_TEST_PLAN_QUEUE;
  conftest.py); its reservation list must answer (a queue outside the reservation system
  answers 400 "... is not managed by reservation system"): the test skips otherwise;
- apps and reservations name the plan queue by its FULL path (`root.default` when recorded);
- a priority change of an app that names the plan queue fails with 500 ClassCastException
  "PlanQueue cannot be cast to ... LeafQueue" (captures/err-apps-id-priority-put-app-in-
  reservation-queue), so Harvester never tries one there; the test shows the RM still says so;
- deleting a reservation moves its apps to `root.default-default` with their containers, nothing
  is killed (the app's REST `queue` keeps saying "root.default": scenarios/reservation-lifecycle); deleting it again answers 400 IllegalArgumentException "... does not exist in the
  plan" (captures/err-reservation-delete-already-deleted);
- the RM may refuse a reservation of this user with PlanningQuotaException (captures
  err-reservation-submit-6-…, scenarios/recurring-reservation-update at 83.8 s) although it is
  small: such a window is REJECTED with the RM's reason, and the test skips when the cluster
  leaves no job two accepted windows;
- an app submitted over REST never registers its AM: it stays ACCEPTED while its AM container
  runs (tests/integration/rest_apps.py).
Safe on a used, shared cluster and twice in a row: the jobs and the reservation-name prefix
carry this run's id, so only this run's reservations are adopted or deleted; everything it
created (reservations, apps) is deleted / killed at the end. The only other write is the nudge:
one node's CURRENT resource re-posted with overCommitTimeout -1 (what the recording did).
"""

from __future__ import annotations

import json
import random
import string
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client import CollectorRegistry
from rest_apps import kill_quietly, submit_sleep_app, wait_for, wait_for_am_container

from harvester.app import Harvester
from harvester.config import parse_settings
from harvester.emulator.demo_recurring import RecurringJob, recurring_history
from rm_client import RMBadRequestError, RMClient, RMClientConfig, RMNotFoundError, RMServerError

pytestmark = pytest.mark.integration

PERIOD = 180.0  # windows [60 s, 120 s) of every 3-minute period, one container


@pytest.fixture(scope="module")
def run_id() -> str:
    """Letters only: the recurring-name rule strips dates and long numbers from app names."""
    return "hvit" + "".join(random.choices(string.ascii_lowercase, k=8))


@pytest.fixture(scope="module")
def client(live_hadoop: Any) -> Iterator[RMClient]:
    with RMClient(RMClientConfig(urls=(live_hadoop.rm_url,), user=live_hadoop.user, read_timeout_s=30.0)) as c:
        yield c


def settings(live_hadoop: Any, db: Path, prefix: str, plan_queue: str) -> Any:
    return parse_settings({
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.5},
        "store": {"backend": "sqlite", "path": str(db)},
        "cluster": {"source": "rm"},
        "rm": {"urls": [live_hadoop.rm_url], "user": live_hadoop.user, "read_timeout_s": 30},
        "telemetry": {"poll_interval_s": 2, "stale_after_s": 30},
        "harvesting": {"actuate": False, "control_period_s": 1},
        "morpheus": {"enabled": True, "queue": plan_queue,
                     "reservations": {"control_period_s": 2, "renew_lead_s": 200, "min_lead_s": 10,
                                      "name_prefix": prefix, "delete_ended_after_s": 30},
                     "dra": {"grant_s": 60}},
    }, environ={})


def records(app: Harvester) -> list[Any]:
    return list(app.control.morpheus.reservations().records)


def held(app: Harvester, job: str) -> list[Any]:
    return [r for r in records(app) if r.job == job and r.state.value in ("SCHEDULED", "ACTIVE") and r.reservation_id]


def cleanup(client: RMClient, prefix: str, apps: list[str], plan_queue: str) -> None:
    for app_id in apps:
        kill_quietly(client, app_id)
    for r in client.list_reservations(queue=plan_queue, include_resource_allocations=False):
        if r.definition.name.startswith(prefix + "|"):
            try:
                client.delete_reservation(r.reservation_id)
            except (RMBadRequestError, RMNotFoundError):
                pass


def test_recurring_jobs_are_reserved_adopted_run_in_their_second_period_and_reprovisioned(
        live_hadoop: Any, client: RMClient, run_id: str, plan_queue: str, tmp_path: Path) -> None:
    prefix = f"harvester-it-{run_id}"
    try:
        client.list_reservations(queue=plan_queue, include_resource_allocations=False)
    except RMBadRequestError as err:
        pytest.skip(f"{plan_queue} is not reservable on this cluster: {err}")
    jobs = [RecurringJob(f"{run_id}-{x}", PERIOD, 10.0, 0, 40.0, 5.0, 170.0) for x in "abc"]
    apps: list[str] = []
    db = tmp_path / "h.db"
    first = Harvester(settings(live_hadoop, db, prefix, plan_queue), registry=CollectorRegistry())
    runs, accesses = recurring_history(time.time(), jobs=jobs, origin="rm")
    first.store.append_job_runs(runs)
    first.store.append_provenance("it", accesses, [], None, time.time())
    second: Harvester | None = None
    try:
        first.start()
        # 1. the plans of the three jobs are submitted and the RM lists them (or refuses with its reason)
        wait_for(lambda: len(first.control.morpheus.reservations().planned) == 3, timeout_s=60, what="three jobs planned")
        wait_for(lambda: all(r.state.value not in ("PLANNED", "SUBMITTED") for r in records(first)) and records(first),
                 timeout_s=60, what="the first reservations confirmed by the RM's list")
        for r in records(first):
            if r.state.value == "REJECTED":
                assert "PlanningQuotaException" in r.lifecycle.history[-1].reason or "Planning" in r.lifecycle.history[-1].reason
        accepted = [r for r in records(first) if r.reservation_id and r.state.value in ("SCHEDULED", "ACTIVE")]
        if not accepted:
            pytest.skip(f"the plan of {plan_queue} refused every reservation: "
                        f"{[r.lifecycle.history[-1].reason for r in records(first)]}")
        listed = {r.reservation_id: r for r in client.list_reservations(queue=plan_queue, include_resource_allocations=True)}
        for r in accepted:
            got = listed[r.reservation_id]
            assert got.definition.name == r.spec.name and got.definition.interpreter.value == 3
            assert (got.definition.arrival_ms, got.definition.deadline_ms) == (r.spec.arrival_ms, r.spec.deadline_ms)
            assert [(q.num_containers, q.min_concurrency, q.duration_ms) for q in got.definition.requests] == [(1, 1, 60_000)]
        # 2. a second sidecar (a restart) adopts them from the RM's list instead of submitting again
        first.stop()
        second = Harvester(settings(live_hadoop, db, prefix, plan_queue), registry=CollectorRegistry())
        second.start()
        wait_for(lambda: any("adopted" in r.lifecycle.history[0].reason for r in records(second)), timeout_s=60,
                 what="the reservations adopted by the second sidecar")
        per_window = Counter(r.definition.name for r in client.list_reservations(queue=plan_queue, include_resource_allocations=False)
                             if r.definition.name.startswith(prefix + "|"))
        assert per_window and max(per_window.values()) == 1, f"one reservation per window: {per_window}"
        # 3. the SECOND period of one job: its own one-off reservation, an app inside it gets its AM container
        job = next(j.name for j in jobs if held(second, j.name))
        firsts = sorted(held(second, job), key=lambda r: r.spec.arrival_ms)
        later = lambda: [r for r in held(second, job) if r.spec.arrival_ms > firsts[0].spec.arrival_ms]  # noqa: E731
        try:
            nxt = wait_for(later, timeout_s=2 * PERIOD, what=f"the next window of {job} accepted")[0]
        except AssertionError as err:
            pytest.skip(f"the RM accepted no second window of {job} (quota?): {err}")
        wait_for(lambda: time.time() * 1000 > nxt.spec.arrival_ms + 2000, timeout_s=2 * PERIOD, what="its window")
        app_id = submit_sleep_app(client, seconds=150, queue=plan_queue, name=f"{job}-20261124T1200", memory_mb=2048,
                                  reservation_id=nxt.reservation_id, tags=("harvester-it", run_id))
        apps.append(app_id)
        attempt, am = wait_for_am_container(client, app_id, timeout_s=45)
        assert am, "the app inside our second-period reservation got its AM container"
        with pytest.raises(RMServerError) as refused:  # the app names the PlanQueue
            client.set_app_priority(app_id, 5)
        assert refused.value.remote_exception == "ClassCastException" and "PlanQueue" in (
            refused.value.remote_message or "")
        # 4. it holds 2048 MB, more than the 1-container skyline: DRA grows the open reservation
        def granted() -> Any:
            return [g for g in second.control.morpheus.reservations().grants if g.key == nxt.key and g.fate == "sent"]
        try:
            (grant,) = wait_for(granted, timeout_s=40, what="a DRA grant sent")[:1]
        except AssertionError as err:
            raise AssertionError(f"{err}; DRA: {second.control.morpheus.reservations().dra_skipped}") from None
        assert grant.level == 2 and "DRA §7" in grant.reason
        (now_listed,) = [r for r in client.list_reservations(queue=plan_queue, include_resource_allocations=False)
                         if r.reservation_id == nxt.reservation_id]
        assert max(q.num_containers for q in now_listed.definition.requests) == 2, "the RM holds the update"
        doc = json.dumps([r.lifecycle.history[-1].reason for r in records(second)])
        assert "InvalidTransition" not in doc
        # 5. deleted (the sidecar stopped first, so nothing renews it): the app moves on, a second delete is refused
        second.stop()
        client.delete_reservation(nxt.reservation_id)
        with pytest.raises(RMBadRequestError) as again:
            client.delete_reservation(nxt.reservation_id)
        assert "does not exist in the plan" in str(again.value)
        wait_for(lambda: nxt.reservation_id not in {r.reservation_id for r in client.list_reservations(
            queue=plan_queue, include_resource_allocations=False)}, timeout_s=30, what="the reservation gone")
        # watched past several plan-follower steps (1 s by default; a cluster may configure longer), which
        # move the app out of the removed queue (REST keeps showing the plan queue: reservation-lifecycle)
        for _ in range(10):
            assert client.get_app_state(app_id) in ("ACCEPTED", "RUNNING"), "nothing is killed"
            time.sleep(1)
    finally:
        for app in (first, second):
            if app is not None:
                app.stop()
        cleanup(client, prefix, apps, plan_queue)
    left = [r for r in client.list_reservations(queue=plan_queue, include_resource_allocations=False)
            if r.definition.name.startswith(prefix + "|")]
    assert left == [], "everything this run created is gone"

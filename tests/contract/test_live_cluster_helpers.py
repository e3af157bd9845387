"""The pieces of logic the live suites (tests/integration) rely on, tested here where no cluster
runs: against the recorded 3.3.6 captures and scenarios and against the emulator over real HTTP
(tests/support/live_cluster.py)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from emu_cluster import EmuCluster
from jockey_rig import write_prior_runs
from harvester.config import parse_settings
from harvester.decisions.deadline_control import DeadlineContext, decide
from harvester.domain import Resources
from harvester.models.deadline_job import load_deadline_job
from live_cluster import (
    cut_nodes, find_apps, guard_timeout_problems, jockey_sizing, plan_queue, queue_capacity, recurring_allocation_problems,
    submit_queue,
)
from rm_client import ReservationInfo, Resource
from rm_client.wire.reservations import ResourceAllocation, decode_reservation_list
from rm_client.wire.scheduler import decode_scheduler
from shared_paths import FIXTURES_DIR

YARN = FIXTURES_DIR / "yarn-3.3.6"
MIN, HOUR = 60_000, 3_600_000


def _capture(name: str) -> dict:
    return json.loads((YARN / "captures" / f"{name}.json").read_text())


# --- queues ------------------------------------------------------------------------------------

def test_the_plan_queue_and_a_submit_queue_are_found_in_the_recorded_scheduler() -> None:
    s = decode_scheduler(_capture("scheduler-with-active-reservation"))
    q = plan_queue(s)
    assert q is not None and q.path == "root.default"
    assert plan_queue(s, "root.default") is q and plan_queue(s, "root.elsewhere") is None
    assert (queue_capacity(q).memory_mb, queue_capacity(q).vcores) == (16384, 16)
    assert submit_queue(s) == "root.default" and submit_queue(s, "root.batch") == "root.batch"


def test_a_layout_without_a_reservable_queue_has_no_plan_but_a_leaf_to_submit_to() -> None:
    doc = _capture("scheduler")
    (q,) = doc["scheduler"]["schedulerInfo"]["queues"]["queue"]
    leaf = copy.deepcopy(q["queues"]["queue"][0])
    leaf.update(queueName="batch")
    doc["scheduler"]["schedulerInfo"]["queues"]["queue"] = [leaf]
    s = decode_scheduler(doc)
    assert plan_queue(s) is None
    assert submit_queue(s) == "root.batch"


# --- apps --------------------------------------------------------------------------------------

def test_the_apps_a_test_started_are_found_through_the_rm_not_a_log_line() -> None:
    with EmuCluster() as c:
        c.work.distributed_shell(1, Resources(1024, 1), duration_s=None, name="hv-it-abc")  # an earlier run's
        c.advance(30)
        since = int(c.clock.now() * 1000)
        c.advance(1)
        mine = c.work.distributed_shell(1, Resources(1024, 1), duration_s=None, name="hv-it-abc").app_id
        c.work.distributed_shell(1, Resources(1024, 1), duration_s=None)  # someone else's DistributedShell
        c.work.mapreduce_sleep(1)                                          # and a MapReduce job
        c.advance(5)
        found = find_apps(c.client, name="hv-it-abc", application_type="YARN", started_since_ms=since)
        assert [a.id for a in found] == [mine]
        assert find_apps(c.client, name="hv-it-abc", application_type="MAPREDUCE", started_since_ms=since) == ()


# --- recurring reservations -----------------------------------------------------------------------

def _listed_recurring(scenario: str) -> list[ReservationInfo]:
    out = []
    for line in (YARN / "scenarios" / scenario / "timeline.jsonl").read_text().splitlines():
        e = json.loads(line)
        if "reservation/list" in e["path"] and isinstance(e.get("body"), dict) and e["body"]:
            out += [r for r in decode_reservation_list(e["body"]) if r.definition.recurrence_period_ms > 0 and r.allocations]
    return out


@pytest.mark.parametrize("scenario", ["recurring-reservation", "recurring-reservation-update",
                                      "recurring-reservation-second-period", "reservation-early-submit"])
def test_recorded_recurring_lists_pass_the_live_check(scenario: str) -> None:
    listed = _listed_recurring(scenario)
    assert listed
    for r in listed:
        d = r.definition
        assert recurring_allocation_problems(r, window_ms=d.deadline_ms - d.arrival_ms) == []


def _recurring(allocs: list[tuple[int, int, int]], period: int = HOUR) -> ReservationInfo:
    r = _listed_recurring("reservation-early-submit")[0]
    return dataclasses.replace(r, definition=dataclasses.replace(r.definition, recurrence_period_ms=period),
                               allocations=tuple(ResourceAllocation(Resource(m, m // 1024), s, e) for s, e, m in allocs))


def test_a_wrapping_allocation_with_its_zero_resource_gap_is_what_3_3_6_lists() -> None:
    """The live RM's list for a 1-container 10-minute R_ALL request in a 30-minute window that
    crosses the hour: held [55, 60) and [0, 5) minutes, and a 50-minute zero-resource range."""
    live = _recurring([(0, 5 * MIN, 1024), (5 * MIN, 55 * MIN, 0), (55 * MIN, 60 * MIN, 1024)])
    assert recurring_allocation_problems(live, window_ms=30 * MIN) == []


@pytest.mark.parametrize("allocs, problem", [
    ([(0, 40 * MIN, 1024)], "longer than the window"),
    ([(50 * MIN, 70 * MIN, 1024)], "not an offset range within the period"),
    ([(0, 10 * MIN, 1024), (5 * MIN, 15 * MIN, 1024)], "overlap"),
    ([(0, 60 * MIN, 0)], "no allocation holds resources"),
])
def test_the_live_check_names_what_3_3_6_never_lists(allocs, problem: str) -> None:
    assert any(problem in p for p in recurring_allocation_problems(_recurring(allocs), window_ms=30 * MIN))


# --- Jockey's live job --------------------------------------------------------------------------

def test_the_recorded_plan_gets_the_jobs_former_fixed_size() -> None:
    plan = queue_capacity(plan_queue(decode_scheduler(_capture("scheduler"))))
    s = jockey_sizing(plan)
    assert (s.maps, s.map_s, s.container.memory_mb, s.container.vcores, s.initial) == (6, 30.0, 1024, 1, 1)


@pytest.mark.parametrize("plan, reason", [
    (Resource(4096, 4), "leaves 2 vcores at 50%"),
    (Resource(512, 8), "less than 128 MB per container"),
])
def test_a_plan_too_small_for_the_job_is_a_reason_to_skip(plan: Resource, reason: str) -> None:
    got = jockey_sizing(plan)
    assert isinstance(got, str) and reason in got


@pytest.mark.parametrize("plan", [Resource(16384, 16), Resource(11468, 11), Resource(8192, 8), Resource(6144, 6)])
def test_the_sized_job_makes_jockey_raise_within_what_the_plan_holds(plan: Resource, tmp_path: Path) -> None:
    """The sizing against Jockey's own model and decision (settings as the live test's): at
    progress 0 a few seconds after the start, it raises the 1-container reservation, to at most
    one container per task, which the share of the plan holds."""
    s = jockey_sizing(plan)
    assert not isinstance(s, str)
    assert s.maps * s.container.memory_mb <= plan.memory_mb / 2 and s.maps * s.container.vcores <= plan.vcores / 2
    runs = write_prior_runs(tmp_path / "runs.json", maps=s.maps, map_s=s.map_s, job="hvjockey")
    settings = parse_settings({"jockey": {"enabled": True, "runs_per_level": 30, "jobs": {"hvjockey": {
        "runs": str(runs), "deadline_s": s.deadline_s, "reservation_name": "w"}}}}, environ={}).jockey
    cfg = settings.jobs["hvjockey"]
    job = load_deadline_job("hvjockey", runs, levels=settings.levels, runs_per_level=settings.runs_per_level)
    for age_s in (3.0, 15.0, 40.0):
        d = decide(DeadlineContext(1000.0 + age_s, 1000.0, np.zeros(len(job.model.stages), dtype=np.int64), s.initial,
                                   job.predictor, cfg.utility(), settings.params(cfg), 0.0, "app", None))
        assert s.initial < d.allocation <= s.maps, (age_s, d.reason)


# --- the guard's overCommitTimeout ------------------------------------------------------------------

def _rec(target: str, outcome: str, t: int, fate: str = "sent") -> SimpleNamespace:
    return SimpleNamespace(loop="guard", kind="set_capacity", target=target, fate=fate, at=1.0,
                           inputs={"outcome": outcome, "overcommit_timeout_ms": t})


def test_the_guard_timeout_check_follows_whether_the_update_cut_below_the_allocation() -> None:
    fine = [_rec("n1", "sent:cut", 0), _rec("n2", "sent:decrease", -1), _rec("n1", "sent:increase", -1),
            _rec("n3", "sent:freeze", 0), _rec("n4", "skipped:hysteresis", 0, fate="not sent")]
    assert guard_timeout_problems(fine, 0) == [] and cut_nodes(fine) == {"n1", "n3"}
    bad = [_rec("n1", "sent:cut", -1), _rec("n2", "sent:decrease", 0)]
    got = guard_timeout_problems(bad, 0)
    assert len(got) == 2 and "not 0" in got[0] and "not -1" in got[1]

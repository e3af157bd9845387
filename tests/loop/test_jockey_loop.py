"""Jockey's control loop (loop/jockey.py) on fakes: a recorded job source, a fake plan queue (the
RM's reservation list and its update answer), a fake LowCost coordinator, a SimClock's times.
The predictor is §4.1's Amdahl model of one 12-task stage of 60 s tasks, so every prediction is
hand-computable: R(a) = S + P/a with S = 60 s and P = (1 − f)·720 s − 60 s, and
F(a) = elapsed + slack·(1 + 0.2·(1 − p))·R(a) (slack 1.3, deadline 300 s, dead zone 15 s)."""

from __future__ import annotations

from dataclasses import replace
from typing import Collection, Mapping, Sequence

import pytest
from prometheus_client import CollectorRegistry

from harvester.board import Board
from harvester.board.jockey import JockeyBoard
from harvester.config_jockey import JockeyJob, JockeySettings
from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.decisions.reservation_actions import (
    Outcome, ReservationAction, ReservationResult, ReservationSpec, SpecStage, UpdateReservation,
)
from harvester.decisions.reservation_reconcile import Listed
from harvester.domain import Resources
from harvester.loop.jockey import JockeyControl
from harvester.loop.nudge import NudgeChannel
from harvester.models.completion_time import AmdahlModel
from harvester.models.deadline_job import DeadlineJob
from harvester.models.job_model import FitError, JobModel, Quantiles, StageModel
from harvester.models.progress import total_work_with_queue
from harvester.observability.metrics import Metrics
from harvester.telemetry.rm_deadline_jobs import RunningApp

T0 = 1_795_430_000.0
C = Resources(1024, 1)
RID = "reservation_1795430000000_0001"
MODEL = JobModel("sort", (StageModel("map", 12, Quantiles.constant(60.0), Quantiles.constant(0.0)),))


def deadline_job(name: str, cfg: JockeyJob) -> DeadlineJob:
    return DeadlineJob(name, MODEL, AmdahlModel.fit(MODEL, range(1, 13)), total_work_with_queue(MODEL),
                       {"map": (20,)}, "Amdahl (test)")


class Jobs:
    """The job source: what the RM shows of the job's app, set by the test."""

    def __init__(self) -> None:
        self.app: RunningApp | None = None

    def at(self, done: int, running: int = 0, pending: int = 0, state: str = "RUNNING") -> None:
        rest = 12 - done - running - pending
        self.app = RunningApp("sort", "application_1_0001", state, T0, {20: running} if running else {},
                              {20: pending + rest} if pending + rest else {})

    def running(self, jobs: Collection[str]) -> Mapping[str, RunningApp]:
        return {} if self.app is None else {"sort": self.app}


class PlanQueue:
    """The RM's reservation system for one reservation: listed, and updated when asked (a fake)."""

    def __init__(self, containers: int, refuse: str = "") -> None:
        self.spec = ReservationSpec("sort-window", int(T0 * 1000), int((T0 + 600) * 1000),
                                    (SpecStage(C, containers, containers, 600_000),))
        self.refuse = refuse
        self.updates: list[UpdateReservation] = []

    def list(self, queue: str) -> list[Listed]:
        return [Listed(RID, self.spec.name, self.spec, "root")]

    def apply(self, actions: Sequence[ReservationAction], request_id: str) -> list[ReservationResult]:
        out = []
        for a in actions:
            assert isinstance(a, UpdateReservation) and a.reservation_id == RID
            if self.refuse:
                out.append(ReservationResult(a, Outcome.REFUSED, RID, self.refuse))
                continue
            self.updates.append(a)
            self.spec = a.spec
            out.append(ReservationResult(a, Outcome.SENT, RID))
        return out

    def now(self, t: float) -> int:
        return self.spec.containers_at(int(t * 1000))


class Coordinator:
    """LowCost's admission as a limit on containers, and the hand-over calls (a fake)."""

    def __init__(self, limit: int = 1000) -> None:
        self.limit = limit
        self.owned: dict[str, str] = {}
        self.committed: list[ReservationSpec] = []

    def hand_over(self, reservation_id: str, owner: str) -> None:
        self.owned[reservation_id] = owner

    def hand_back(self, reservation_id: str) -> None:
        self.owned.pop(reservation_id, None)

    def admit(self, reservation_id: str, spec: ReservationSpec) -> str | None:
        n = spec.stages[-1].containers
        return None if n <= self.limit else f"the plan holds {self.limit}"

    def commit(self, reservation_id: str, spec: ReservationSpec) -> None:
        self.committed.append(spec)


def control(queue: PlanQueue, jobs: Jobs, *, coordinator: Coordinator | None = None, nudges: NudgeChannel | None = None,
            load=deadline_job, **settings: object) -> tuple[JockeyControl, JockeyBoard, Metrics]:  # type: ignore[no-untyped-def]
    job = JockeyJob.model_construct(runs="unused.json", table=None, predictor="amdahl", reservation_name="sort-window",
                                    stage_priorities=None, min_allocation=1, max_allocation=None, deadline_s=300.0,
                                    hard_deadline_s=None, value=1.0, soft_penalty_per_s=0.0, hard_penalty=1.0)
    s = JockeySettings(**{"enabled": True, "update_lead_s": 0, "cap_to_demand": False, **settings}).model_copy(update={"jobs": {"sort": job}})
    board = JockeyBoard(Board())
    metrics = Metrics(CollectorRegistry())
    return JockeyControl(s, board, jobs, queue, queue, metrics, load, coordinator=coordinator, nudges=nudges), board, metrics


def test_raise_at_once_then_release_gradually_then_hold_in_the_dead_zone() -> None:
    q, jobs = PlanQueue(3), Jobs()
    loop, board, _ = control(q, jobs)
    jobs.at(done=0, running=3)
    loop.tick(T0)  # p = 0: F(a) = 1.56·(60 + 660/a) <= 300  ->  a >= 5
    (c,) = board.control().jobs
    assert (c.rule, c.allocation, c.decided, c.fate) == ("raise", 3, 5, "sent") and q.now(T0) == 5
    assert c.predicted_finish_s == pytest.approx(1.56 * (60 + 660 / 5)) and c.predicted_finish_current_s > 300
    jobs.at(done=10, running=2)  # p = 10/12 at 100 s: every a meets the deadline, target 1
    for t, expected in ((100, 3), (110, 2), (120, 1)):  # lower by ⌈½·gap⌉ per period: 5 → 3 → 2 → 1
        loop.tick(T0 + t)
        (c,) = board.control().jobs
        assert (c.rule, c.decided, q.now(T0 + t)) == ("lower", expected, expected), c.reason
    assert [u.spec.stages[-1].containers for u in q.updates] == [5, 3, 2, 1]
    assert "lower by ⌈0.5·(5−1)⌉=2" in q.updates[1].reason and q.updates[1].reason.startswith("Jockey: lower 5→3")


def test_the_dead_zone_holds_a_lowering_that_would_cut_it_close() -> None:
    q, jobs = PlanQueue(6), Jobs()
    loop, board, _ = control(q, jobs)
    jobs.at(done=6, running=6)  # p = ½: F(a) = elapsed + 1.43·(60 + 300/a); at 128 s F(5) = 299.6, F(6) = 285.3
    loop.tick(T0 + 128)
    (c,) = board.control().jobs
    assert (c.rule, c.target, c.decided, c.fate) == ("hold", 5, 6, "none") and q.updates == []
    assert "within dead zone [285s, 300s]" in c.reason
    loop.tick(T0 + 100)  # the same progress earlier: F(6) = 257 < 285, so it lowers (to the target 5... and below)
    assert board.control().jobs[0].rule == "lower" and len(q.updates) == 1


def test_a_cool_down_spaces_updates_and_a_refusal_is_reported() -> None:
    q, jobs = PlanQueue(3), Jobs()
    loop, board, metrics = control(q, jobs, min_update_interval_s=60)
    jobs.at(done=0, running=3)
    loop.tick(T0)
    jobs.at(done=10, running=2)
    loop.tick(T0 + 30)
    (c,) = board.control().jobs
    assert c.fate.startswith("cooldown: last update 30s ago") and len(q.updates) == 1 and q.now(T0 + 30) == 5
    loop.tick(T0 + 60)
    assert len(q.updates) == 2 and board.control().jobs[0].fate == "sent"
    q.refuse = "PlanningException: not enough capacity"
    loop.tick(T0 + 120)
    (c,) = board.control().jobs
    assert c.fate == "refused: PlanningException: not enough capacity" and q.now(T0 + 120) == 3
    text = metrics.exposition().decode()
    assert 'harvester_jockey_reservation_updates_total{outcome="refused"} 1.0' in text
    assert 'harvester_jockey_allocation_containers{job="sort",kind="current"} 3.0' in text


def test_lowcost_admission_cuts_a_raise_to_what_the_plan_holds_and_ownership_follows_the_run() -> None:
    q, jobs, coord = PlanQueue(3), Jobs(), Coordinator(limit=4)
    nudges = NudgeChannel()
    loop, board, _ = control(q, jobs, coordinator=coord, nudges=nudges)
    jobs.at(done=0, running=3)
    loop.tick(T0)
    (c,) = board.control().jobs
    assert (c.decided, c.admitted, q.now(T0 + 1)) == (5, 4, 4) and "admitted 4 of 5 (the plan holds 4)" in c.reason
    assert coord.owned == {RID: "jockey:sort"} and coord.committed == [q.spec]
    took_over = f"Jockey took over open window {RID}: its queue's capacity may be stale"
    assert nudges.pending(T0)[0] == (took_over,)  # type: ignore[index]
    assert nudges.pending(T0 + 2)[0] == (took_over, f"Jockey resize of {RID} at {T0:.0f}")  # type: ignore[index]
    coord.limit = 3  # the plan filled up: at 10 s the deadline wants 6 (F(a) = 10 + 1.56·(60 + 660/a))
    jobs.at(done=0, running=4)
    loop.tick(T0 + 10)
    (c,) = board.control().jobs
    assert (c.decided, c.admitted, c.fate, q.now(T0 + 11)) == (6, 4, "not admitted: the plan holds 3", 4)
    jobs.app = None  # the run ended
    loop.tick(T0 + 400)
    assert board.control().jobs[0].state == "idle" and coord.owned == {}


def test_no_reservation_a_model_error_and_an_accepted_app() -> None:
    q, jobs = PlanQueue(3), Jobs()
    q.spec = replace(q.spec, name="someone-else")
    loop, board, _ = control(q, jobs)
    jobs.at(done=0, running=3)
    loop.tick(T0)
    (c,) = board.control().jobs
    assert c.state == "no_reservation" and c.decided == 5 and c.fate == "none" and q.updates == []
    assert "no open reservation named 'sort-window'" in c.note

    calls = []

    def broken(name: str, cfg: JockeyJob) -> DeadlineJob:
        calls.append(name)
        raise FitError("runs JSON: KeyError: 'runs'")

    loop2, board2, _ = control(PlanQueue(3), jobs, load=broken)
    loop2.tick(T0)
    loop2.tick(T0 + 30)
    (c,) = board2.control().jobs
    assert c.state == "model_error" and "KeyError" in c.note and calls == ["sort", "sort"], "retried each tick"

    q3, jobs3 = PlanQueue(3), Jobs()
    loop3, board3, _ = control(q3, jobs3, cap_to_demand=True)
    jobs3.at(done=0, state="ACCEPTED")  # the AM has not asked yet: the demand is unknown, nothing caps
    jobs3.app = replace(jobs3.app, pending={})  # type: ignore[arg-type]
    loop3.tick(T0)
    assert board3.control().jobs[0].decided == 5
    jobs3.app = replace(jobs3.app, state="RUNNING")  # type: ignore[arg-type]  # registered, first allocate call not yet
    loop3.tick(T0)  # the same instant: F(5) = 1.56·(60 + 660/5) = 299.5 s, one second later 5 would not do
    assert board3.control().jobs[0].decided == 5 and q3.now(T0) == 5, "no demand of 0 before the AM has asked"
    jobs3.at(done=0, running=2)  # now it asked: 2 run, 10 pending: the demand (12) does not cap 5
    loop3.tick(T0)
    assert board3.control().jobs[0].decided == 5


def test_a_utility_set_at_run_time_replaces_the_configs() -> None:
    q, jobs = PlanQueue(3), Jobs()
    loop, board, _ = control(q, jobs)
    board.set_utility("sort", DeadlineUtility(150.0))
    jobs.at(done=0, running=3)
    loop.tick(T0)  # 1.56·(60 + 660/a) <= 150 needs a >= 21.5: no level meets it, best effort at the widest
    (c,) = board.control().jobs
    assert (c.utility_source, c.rule, c.decided) == ("api", "best_effort", 12)

"""End to end against the emulator over real HTTP: Jockey's control loop in the real composition
root (`cluster.source: rm` pointing at an emulated 3.3.6 RM on a SimClock) drives a deadline job
— a MapReduce sleep job running in its reservation — by resizing that reservation with
`reservation/update`, and everything it does is visible in /metrics, the admin API and
SloAdvisor.GetDeadlineControl. Every assertion about the cluster reads what the RM reports.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import grpc
import pytest

from harvester.v1 import slo_pb2, slo_pb2_grpc

from jockey_rig import JOB, MAPS, JockeyRig


@pytest.fixture()
def rig(tmp_path: Path) -> Iterator[JockeyRig]:
    r = JockeyRig(tmp_path, deadline_s=300.0)
    try:
        yield r
    finally:
        r.close()


def metric(text: str, name: str, **labels: str) -> float | None:
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(rf"{name}\{{(.*)\}} (\S+)$", line)
        if m and ",".join(sorted(m.group(1).split(","))) == want:
            return float(m.group(2))
    return None


def reserved(rig: JockeyRig, rid: str) -> list[int]:
    """Containers per stage of the reservation as the RM lists it."""
    (info,) = [r for r in rig.cluster.client.list_reservations(queue="root.default") if r.reservation_id == rid]
    return [r.num_containers for r in info.definition.requests]


def test_a_deadline_job_is_driven_by_the_loop_through_its_reservation(rig: JockeyRig) -> None:
    c = rig.cluster
    rid = rig.reserve(3, arrival_in_s=10, length_s=400)
    rig.step(12)
    app = rig.submit_job(rid)
    rig.step(5)  # first Jockey tick with the app: ACCEPTED, p = 0, the early over-allocation
    doc = rig.admin(f"/v1/jockey/job?name={JOB}")
    assert doc["state"] == "running" and doc["app_id"] == app.app_id and doc["reservation_id"] == rid
    assert doc["rule"] == "raise" and 3 < doc["decided"] < MAPS, "more than the user's 3, less than the job's width"
    assert doc["update"] == "sent" and "F(a)=elapsed+" in doc["reason"] and "hard deadline 300s" in doc["reason"]
    assert reserved(rig, rid)[-1] == doc["decided"], "the RM holds the resized reservation"
    text = rig.metrics()
    assert metric(text, "harvester_jockey_allocation_containers", job=JOB, kind="decided") == doc["decided"]
    assert metric(text, "harvester_jockey_deadline_seconds", job=JOB) == 300.0
    assert metric(text, "harvester_jockey_reservation_updates_total", outcome="sent") == 1.0

    peak, rules, finished = 0, set(), None
    for _ in range(60):
        rig.step(5)
        got = c.client.get_app(app.app_id)
        if got.state == "FINISHED":
            finished = got
            break
        doc = rig.admin(f"/v1/jockey/job?name={JOB}")
        rules.add(doc["rule"])
        peak = max(peak, got.running_containers)
        if doc["progress"]:
            assert metric(rig.metrics(), "harvester_jockey_progress", job=JOB) == pytest.approx(doc["progress"], abs=1e-4)
    assert finished is not None and finished.final_status == "SUCCEEDED"
    took = (finished.finished_time_ms - finished.started_time_ms) / 1000.0
    assert took <= 300.0, f"met its deadline: {took:.0f}s"
    assert peak > 3 + 1, "the resize (and its nudge) gave the app more than the original reservation (+ its AM)"
    assert "lower" in rules, "containers are released as the maps finish"
    log = rig.admin("/v1/jockey/jobs")["decisions"]
    assert len(log) >= 2 and all(d["fate"] == "sent" and d["reason"].startswith("Jockey: ") for d in log)
    assert any(d["to"] < d["from"] for d in log) and any(d["to"] > d["from"] for d in log)
    rig.step(5)
    after = rig.admin(f"/v1/jockey/job?name={JOB}")
    assert after["state"] == "idle" and metric(rig.metrics(), "harvester_jockey_progress", job=JOB) is None
    assert metric(rig.metrics(), "harvester_jockey_jobs", state="idle") == 1.0


def test_a_deadline_set_through_the_api_drives_the_next_decision(rig: JockeyRig) -> None:
    rid = rig.reserve(3, arrival_in_s=10, length_s=400)
    rig.step(12)
    rig.submit_job(rid)
    rig.step(5)
    relaxed = rig.admin(f"/v1/jockey/job?name={JOB}")["decided"]
    assert rig.admin("/v1/jockey/deadline", {"job": JOB, "deadline_s": 90})["source"] == "api"
    rig.step(5)
    doc = rig.admin(f"/v1/jockey/job?name={JOB}")
    assert doc["utility"]["deadline_s"] == 90 and doc["utility"]["source"] == "api"
    assert doc["decided"] > relaxed and doc["rule"] in ("raise", "best_effort"), doc["reason"]
    assert "hard deadline 90s" in doc["reason"]
    assert rig.admin("/v1/jockey/deadline", {"job": JOB, "deadline_s": -1})["status"] == 400
    assert rig.admin("/v1/jockey/deadline", {"job": "nope", "deadline_s": 10})["status"] == 404
    assert rig.admin("/v1/jockey/deadline", {"job": JOB, "reset": True})["source"] == "config"

    with grpc.insecure_channel(rig.app.grpc.address) as ch:
        stub = slo_pb2_grpc.SloAdvisorStub(ch)
        got = stub.GetDeadlineControl(slo_pb2.GetDeadlineControlRequest(job_name=JOB), timeout=5)
        assert got.job_name == JOB and got.state == "running" and got.reservation_id == rid
        assert got.decided_containers == reserved(rig, rid)[-1], "the RM holds what was decided"
        assert got.allocation.memory_mb == 1024 * got.allocation_containers > 0, "held before this period's update"
        assert got.reason.startswith(got.rule) and got.deadline.seconds > 0
        by_app = stub.GetDeadlineControl(slo_pb2.GetDeadlineControlRequest(app_id=got.app_id), timeout=5)
        assert by_app.job_name == JOB
        with pytest.raises(grpc.RpcError) as err:
            stub.GetDeadlineControl(slo_pb2.GetDeadlineControlRequest(job_name="nope"), timeout=5)
        assert err.value.code() is grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(("body", "error"), [
    ({"job": JOB, "deadline_s": 100, "hard_deadline_s": 50}, "hard_deadline_s (50.0) must be >= deadline_s (100.0)"),
    ({"job": JOB, "deadline_s": "x"}, "'deadline_s' must be a number"),
    ({"job": JOB}, "'deadline_s' is required"),
    ({"job": JOB, "deadline_s": 100, "bogus": 1}, "unknown key(s) ['bogus']"),
])
def test_bad_deadlines_are_refused_with_the_reason_and_change_nothing(rig: JockeyRig, body: dict, error: str) -> None:
    got = rig.admin("/v1/jockey/deadline", body)
    assert got["status"] == 400 and error in got["error"]
    assert rig.app.control.jockey_board.utilities() == {}
    soft = rig.admin("/v1/jockey/deadline", {"job": JOB, "deadline_s": 100, "hard_deadline_s": 200,
                                             "soft_penalty_per_s": 0.01})
    assert soft["utility"] == "soft deadline 100s (−0.01/s), hard at 200s (−1)"

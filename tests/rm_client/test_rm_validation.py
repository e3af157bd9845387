"""Local write checks: each wrong field is named, valid inputs (the bodies the live RM
accepted, ENDPOINTS.txt) pass."""

from __future__ import annotations

import dataclasses

import pytest

from rm_client import (
    AppQuery,
    AppSubmission,
    Interpreter,
    ReservationDefinition,
    ReservationRequest,
    Resource,
    ResourceInformation,
)
from rm_client.ids import app_id_of, attempt_id_of_container, check_container_id, check_node_id
from rm_client.validation import (
    check_app_submission,
    check_node_resource_update,
    check_reservation_definition,
    check_reservation_submit,
    check_signal,
)

# The recurring definition the live RM accepted (captures reservation-submit.request.json).
HOURLY = ReservationDefinition(
    arrival_ms=1795421012044, deadline_ms=1795424492044, name="res_order_no_gap_hourly",
    interpreter=Interpreter.R_ORDER_NO_GAP, recurrence_period_ms=3_600_000,
    requests=(ReservationRequest(Resource(1024, 1), 2, 2, 600_000), ReservationRequest(Resource(512, 1), 4, 4, 300_000)),
)


def fields(problems: list) -> list[str]:
    return [p.field for p in problems]


def test_the_accepted_definitions_pass() -> None:
    assert check_reservation_submit("reservation_1795420810582_0001", "default", HOURLY) == []
    once = dataclasses.replace(HOURLY, recurrence_period_ms=0, interpreter=Interpreter.R_ALL)
    assert check_reservation_definition(once) == []


@pytest.mark.parametrize("change, field, words", [
    ({"deadline_ms": 1795421012044}, "definition.deadline_ms", "after arrival"),
    ({"arrival_ms": -1}, "definition.arrival_ms", "below 0"),
    ({"interpreter": "R_ORDER_NO_GAP"}, "definition.interpreter", "stores a string as R_ANY"),
    ({"interpreter": 7}, "definition.interpreter", "500"),
    ({"requests": ()}, "definition.requests", "at least one"),
    ({"recurrence_period_ms": 7_000_000}, "definition.recurrence_period_ms", "does not divide one day"),
    ({"recurrence_period_ms": 1_800_000}, "definition.recurrence_period_ms", "must fit in one period"),
    ({"recurrence_period_ms": -5}, "definition.recurrence_period_ms", "below 0"),
    ({"priority": 1.5}, "definition.priority", "integer"),
    ({"requests": (ReservationRequest(Resource(1024, 1), 2, 3, 600_000),)}, "definition.requests[0].min_concurrency",
     "exceeds num_containers"),
    ({"requests": (ReservationRequest(Resource(1024, 1), 0, 1, 600_000),)}, "definition.requests[0].num_containers",
     "below 1"),
    ({"requests": (ReservationRequest(Resource(0, 1), 1, 1, 600_000),)}, "definition.requests[0].capability.memory_mb",
     "below 1"),
    ({"requests": (ReservationRequest(Resource(1024, 1), 1, 1, 4_000_000),)}, "definition.requests[0].duration_ms",
     "does not fit"),
    ({"requests": (ReservationRequest(Resource(1024, 1), 1, 1, 3_000_000),) * 2}, "definition.requests",
     "exceed the 3480000 ms window"),
])
def test_each_reservation_mistake_names_its_field(change: dict, field: str, words: str) -> None:
    problems = check_reservation_definition(dataclasses.replace(HOURLY, **change))
    assert field in fields(problems), problems
    assert words in " ".join(p.reason for p in problems if p.field == field)


def test_parallel_interpreters_only_need_each_request_to_fit() -> None:
    two_long = (ReservationRequest(Resource(1024, 1), 1, 1, 3_000_000),) * 2
    assert check_reservation_definition(dataclasses.replace(HOURLY, interpreter=Interpreter.R_ALL,
                                                            requests=two_long)) == []


def test_submit_needs_an_id_and_a_queue() -> None:
    problems = check_reservation_submit("res-xyz", "", HOURLY)
    assert fields(problems) == ["reservation_id", "queue"]
    assert "root.default" in problems[1].reason


@pytest.mark.parametrize("resource, timeout, allow_zero, expected", [
    (Resource(6144, 6), -1, False, []),
    (Resource(6144, 6), 0, False, []),
    (None, -1, False, ["resource"]),
    (Resource(0, 6), -1, False, ["resource.memory_mb"]),
    (Resource(6144, 0), -1, False, ["resource.vcores"]),
    (Resource(0, 0), -1, True, []),
    (Resource(-5, -1), -1, True, ["resource.memory_mb", "resource.vcores"]),
    (Resource(6144, 6), -2, False, ["overcommit_timeout_ms"]),
    (Resource(6144, 6), 2.5, False, ["overcommit_timeout_ms"]),
    (Resource(6144, 6), True, False, ["overcommit_timeout_ms"]),
    (Resource(6144, 2**31), -1, False, ["resource.vcores"]),
    ({"memory": 6144, "vCores": 6}, -1, False, ["resource"]),
    (Resource(6144, 6, others=(ResourceInformation("yarn.io/gpu", 1),)), -1, False, ["resource.others"]),
])
def test_node_resource_update_checks(resource: object, timeout: object, allow_zero: bool, expected: list[str]) -> None:
    problems = check_node_resource_update("localhost:45454", resource, timeout, allow_zero=allow_zero)
    assert fields(problems) == expected


def test_zero_message_explains_the_flag() -> None:
    (problem,) = check_node_resource_update("localhost:45454", Resource(0, 4), -1)
    assert "allow_zero=True" in problem.reason
    (missing,) = check_node_resource_update("localhost:45454", None, -1)
    assert "silently set the node to 0 MB / 0 vcores" in missing.reason


def test_signal_commands_and_container_ids() -> None:
    assert check_signal("container_1795420810582_0002_01_000005", "GRACEFUL_SHUTDOWN") == []
    assert check_signal("container_e17_1795420810582_0002_01_000005", "FORCEFUL_SHUTDOWN") == []
    assert fields(check_signal("container_bogus", "KILL_IT")) == ["container_id", "command"]


@pytest.mark.parametrize("node_id, ok", [
    ("localhost:45454", True), ("nm-1.example.com:8041", True), ("not-a-node-id", False),
    ("host:0", False), ("host:99999", False), ("a/b:1", False), ("", False), (45454, False),
])
def test_node_ids(node_id: object, ok: bool) -> None:
    assert (check_node_id(node_id) is None) is ok


def test_id_helpers() -> None:
    assert app_id_of("container_1795420810582_0002_01_000004") == "application_1795420810582_0002"
    assert app_id_of("appattempt_1795420810582_0002_000001") == "application_1795420810582_0002"
    assert attempt_id_of_container("container_1795420810582_0002_01_000004") == "appattempt_1795420810582_0002_000001"
    assert check_container_id("container_1795420810582_0002_01_000004/../x") is not None
    with pytest.raises(ValueError):
        app_id_of("application_1_1")


SUBMISSION = AppSubmission(
    application_id="application_1795420810582_0005", application_name="rest-sleep", queue="root.default",
    command="sleep 90 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr", resource=Resource(512, 1),
    environment=(("FOO", "bar"),), tags=("hr-test", "reservation"), reservation_id="reservation_1795420810582_0001",
)


def test_app_submission_checks() -> None:
    assert check_app_submission(SUBMISSION) == []
    bad = dataclasses.replace(SUBMISSION, queue="default", command=" ", max_app_attempts=0, tags=("a,b",),
                              environment=(("A=B", "x"), ("only-name",)), resource=Resource(0, 1))
    assert fields(check_app_submission(bad)) == [
        "command", "resource.memory_mb", "max_app_attempts", "queue", "tags[0]", "environment[0].name[0]",
        "environment[1]"]


def test_app_query_checks_and_params() -> None:
    q = AppQuery(states=("running", "ACCEPTED"), queue="root.default", limit=10, started_time_begin_ms=5,
                 application_types=("YARN", "MAPREDUCE"), deselects=("resourceRequests",))
    assert q.problems() == []
    assert q.to_params() == {"states": "RUNNING,ACCEPTED", "queue": "root.default", "limit": "10",
                             "startedTimeBegin": "5", "applicationTypes": "YARN,MAPREDUCE",
                             "deSelects": "resourceRequests"}
    bad = AppQuery(states=("DONE",), final_status="OK", limit=0, started_time_begin_ms=10, started_time_end_ms=5,
                   deselects=("everything",), application_tags=("a,b",))
    assert fields(bad.problems()) == ["states[0]", "final_status", "limit", "started_time_end_ms",
                                      "application_tags[0]", "deselects[0]"]

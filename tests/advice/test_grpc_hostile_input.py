"""Issue 25's probe of every gRPC method with hostile values — huge integers, NaN / inf, 1e308,
negative counts, 20 KB strings: each answers a deliberate status naming the field, never
INTERNAL (PlaceTasks with memory_mb = 2^63-1 raised OverflowError) and never the client's
RESOURCE_EXHAUSTED (GetSlo put a 20 KB job name into its status, which travels in a header)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from grpc_sidecar import advised_channel

from harvester.echo import MAX_MESSAGE
from harvester.v1 import common_pb2 as c
from harvester.v1 import constrained_placement_pb2 as p
from harvester.v1 import constrained_placement_pb2_grpc as pg
from harvester.v1 import hdfs_placement_pb2 as h
from harvester.v1 import hdfs_placement_pb2_grpc as hg
from harvester.v1 import slo_pb2 as s
from harvester.v1 import slo_pb2_grpc as sg
from harvester.v1 import yarn_advisor_pb2 as y
from harvester.v1 import yarn_advisor_pb2_grpc as yg

BIG, HUGE = 2**63 - 1, "x" * 20_000
INVALID, NOT_FOUND, PRECONDITION = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION


@pytest.fixture(scope="module", params=[False, True], ids=["in-process", "advice-process"])
def stubs(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Every case against both gRPC faces: the one process, and `server.grpc_advice_process`
    (SelectClasses answered by the advice process, the rest forwarded to the main one)."""
    with advised_channel(advice_process=request.param) as ch:
        yield {"p": pg.ConstrainedPlacementStub(ch), "y": yg.YarnAdvisorStub(ch), "h": hg.HdfsPlacementStub(ch),
               "s": sg.SloAdvisorStub(ch)}


def _task(**kw: Any) -> Any:
    kw.setdefault("resources", c.Resources(memory_mb=1024, vcores=1))
    return p.TaskRequest(task_id=kw.pop("task_id", "t"), **kw)


#: (name, call on the stubs, the status it must answer, a text the status message must hold)
CASES: list[tuple[str, Callable[[dict[str, Any]], Any], grpc.StatusCode, str]] = [
    ("PlaceTasks memory_mb 2^63-1", lambda st: st["p"].PlaceTasks(p.PlaceTasksRequest(
        job_id="j", tasks=[_task(resources=c.Resources(memory_mb=BIG, vcores=1))])), INVALID, "tasks[0].resources"),
    ("PlaceTasks vcores 2^31-1", lambda st: st["p"].PlaceTasks(p.PlaceTasksRequest(
        job_id="j", tasks=[_task(resources=c.Resources(memory_mb=1024, vcores=2**31 - 1))])), grpc.StatusCode.OK, ""),
    ("PlaceTasks duration 1e308", lambda st: st["p"].PlaceTasks(p.PlaceTasksRequest(
        job_id="j", tasks=[_task(expected_duration_s=1e308)])), INVALID, "tasks[0].expected_duration_s"),
    ("PlaceTasks duration inf", lambda st: st["p"].PlaceTasks(p.PlaceTasksRequest(
        job_id="j", tasks=[_task(expected_duration_s=float("inf"))])), INVALID, "tasks[0].expected_duration_s"),
    ("PlaceTasks candidates 2^31-1", lambda st: st["p"].PlaceTasks(p.PlaceTasksRequest(
        job_id="j", candidates_per_task=2**31 - 1, tasks=[_task()])), INVALID, "candidates_per_task"),
    ("PlaceTasks duplicate 20 KB ids", lambda st: st["p"].PlaceTasks(p.PlaceTasksRequest(
        job_id=HUGE, tasks=[_task(task_id=HUGE), _task(task_id=HUGE)])), INVALID, "tasks[1].task_id"),
    ("PlaceTasks 20 KB constraint value", lambda st: st["p"].PlaceTasks(p.PlaceTasksRequest(
        job_id="j", tasks=[_task(constraints=[p.Constraint(attribute="cores", op=p.CONSTRAINT_OP_GE, value=HUGE)])])),
     INVALID, "tasks[0].constraints[0]"),
    ("SelectClasses container 2^63-1 MB", lambda st: st["y"].SelectClasses(y.SelectClassesRequest(
        job_name="j", max_concurrent_containers=5, container=c.Resources(memory_mb=BIG, vcores=1))), INVALID, "container"),
    ("SelectClasses last run 1e308 s", lambda st: st["y"].SelectClasses(y.SelectClassesRequest(
        job_name="j", last_run_seconds=1e308, max_concurrent_containers=5, container=c.Resources(memory_mb=1024, vcores=1))),
     INVALID, "last_run_seconds"),
    ("SelectClasses 20 KB job name", lambda st: st["y"].SelectClasses(y.SelectClassesRequest(
        job_name=HUGE, container=c.Resources(memory_mb=1024, vcores=1))), PRECONDITION, "has no past run"),
    ("SelectClasses 20 KB stage cycle", lambda st: st["y"].SelectClasses(y.SelectClassesRequest(
        job_name="j", container=c.Resources(memory_mb=1024, vcores=1), dag=[y.Stage(name=HUGE, tasks=1, parents=[HUGE])])),
     INVALID, "cycle"),
    ("GetNodeOrdering 20 KB queue", lambda st: st["y"].GetNodeOrdering(y.GetNodeOrderingRequest(queue=HUGE)),
     INVALID, "has no job-length class"),
    ("ChooseTargets block 2^63-1, 20 KB names", lambda st: st["h"].ChooseTargets(h.ChooseTargetsRequest(
        src_path=HUGE, writer=HUGE, replication=3, block_size_bytes=BIG, existing=[HUGE], excluded=[HUGE])),
     grpc.StatusCode.OK, ""),
    ("ChooseTargets replication -2^31", lambda st: st["h"].ChooseTargets(h.ChooseTargetsRequest(
        src_path="/a", replication=-(2**31))), INVALID, "replication"),
    ("VerifyPlacement replication -2^31", lambda st: st["h"].VerifyPlacement(h.VerifyPlacementRequest(
        replicas=["a"], replication=-(2**31))), INVALID, "replication"),
    ("GetPlacementTable version -2^63", lambda st: st["h"].GetPlacementTable(h.GetPlacementTableRequest(
        if_version_differs_from=-(2**63))), INVALID, "if_version_differs_from"),
    ("GetSlo 20 KB job name", lambda st: st["s"].GetSlo(s.GetSloRequest(job_name=HUGE)), NOT_FOUND, "no recurring job"),
    ("GetDeadlineControl 20 KB job name", lambda st: st["s"].GetDeadlineControl(s.GetDeadlineControlRequest(
        job_name=HUGE)), NOT_FOUND, "no deadline job"),
]


@pytest.mark.parametrize(("name", "call", "code", "text"), CASES, ids=[case[0] for case in CASES])
def test_hostile_values_get_a_deliberate_status_naming_the_field(
        stubs: dict[str, Any], name: str, call: Callable[[dict[str, Any]], Any], code: grpc.StatusCode, text: str) -> None:
    try:
        call(stubs)
        got, details = grpc.StatusCode.OK, ""
    except grpc.RpcError as exc:
        got, details = exc.code(), exc.details() or ""
    assert got == code, f"{name}: {got} {details[:200]!r}"
    assert text in details and len(details) <= MAX_MESSAGE + 40, details[:300]
    assert "x" * 200 not in details, "echoed input is cut"

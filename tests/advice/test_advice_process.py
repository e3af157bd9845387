"""`server.grpc_advice_process`: SelectClasses and ListTenantClasses answered by a second process
from a mirror of the board; every other call forwarded to the main process unchanged
(advice/advice_process.py, advice/advice_child.py, advice/grpc_forward.py; issue 29)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import CollectorRegistry

from harvester.advice.advice_process import AdviceProcess, split_cpus
from harvester.advice.grpc_server import GrpcServer
from harvester.advice.hdfs_grpc import hdfs_service
from harvester.advice.yarn_advisor import yarn_advisor_service
from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.board.hdfs import PlacementBoard
from harvester.config import ConfigError, parse_settings
from harvester.config_server import TlsSettings
from harvester.decisions.class_selection import ClassState, ClassTable
from harvester.decisions.reserve import ReserveTable
from harvester.decisions.strategy import DEFAULT_SELECTION
from harvester.domain import Resources
from harvester.models.patterns import Pattern
from harvester.models.utilization_classes import TenantAssignment, TenantClassModel, UtilizationClass
from harvester.observability.metrics import Metrics
from harvester.v1 import common_pb2, hdfs_placement_pb2, hdfs_placement_pb2_grpc, yarn_advisor_pb2, yarn_advisor_pb2_grpc
from hdfs_tables import nine_cell_table

REQUEST = yarn_advisor_pb2.SelectClassesRequest(job_name="etl", max_concurrent_containers=40, seed=7,
                                                container=common_pb2.Resources(memory_mb=2048, vcores=1))


def classes(n: int, shift: float = 0.0, seed: int = 1) -> tuple[ClassState, ...]:
    rng, patterns = np.random.default_rng(seed), list(Pattern)
    return tuple(
        ClassState(f"{patterns[i % 3].value}-{i}", patterns[i % 3], float(a), float(a + 0.2), float(min(0.95, a + shift)),
                   Resources(16 * 65536, 16 * 32), Resources(8192, 4), 0.1, nodes=16)
        for i, a in enumerate(rng.uniform(0.05, 0.6, n))
    )


def publish(board: HarvestingBoard, cs: tuple[ClassState, ...]) -> None:
    model = TenantClassModel(1, 0.0, tuple(UtilizationClass(c.class_id, c.pattern, c.average, c.peak, 1, 1.0) for c in cs),
                             tuple(TenantAssignment(f"t{i}", c.class_id, c.pattern, c.average, c.peak, 0.0, 0.0, 1)
                                   for i, c in enumerate(cs)))
    board.publish_model(model, ReserveTable(), {c.class_id: 16 for c in cs})
    board.publish_classes(cs)


def eventually(check: Callable[[], Any], timeout_s: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return check()
        except (AssertionError, grpc.RpcError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def code_of(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code(), info.value.details()


@pytest.fixture()
def pair() -> Iterator[tuple[AdviceProcess, GrpcServer, HarvestingBoard, PlacementBoard, Metrics]]:
    """The same services served in two ways: by an advice process, and by one in-process server."""
    board, placement, metrics = HarvestingBoard(Board()), PlacementBoard(), Metrics(CollectorRegistry())

    def services() -> list[Any]:
        return [yarn_advisor_service(board, metrics, seed=3), hdfs_service(placement, metrics, default_block_size=128 << 20,
                                                                            max_watch_streams=4)]

    advice = AdviceProcess("127.0.0.1:0", metrics, services(), board, selection=DEFAULT_SELECTION, tls=TlsSettings())
    reference = GrpcServer("127.0.0.1:0", Metrics(CollectorRegistry()), services())
    advice.start()
    reference.start()
    yield advice, reference, board, placement, metrics
    placement.close()
    advice.stop(0.5)
    reference.stop(0.5)


def stubs(address: str) -> tuple[grpc.Channel, yarn_advisor_pb2_grpc.YarnAdvisorStub]:
    channel = grpc.insecure_channel(address)
    return channel, yarn_advisor_pb2_grpc.YarnAdvisorStub(channel)


def test_select_classes_answers_as_the_in_process_server_and_follows_new_publications(pair) -> None:
    advice, reference, board, _, _ = pair
    (ch_a, a), (ch_r, r) = stubs(advice.address), stubs(reference.address)
    assert code_of(lambda: a.SelectClasses(REQUEST)) == code_of(lambda: r.SelectClasses(REQUEST)), "no model yet"
    publish(board, classes(50))
    assert advice.sync()
    first = a.SelectClasses(REQUEST)
    assert first == r.SelectClasses(REQUEST) and len(first.classes) > 0
    board.publish_classes(classes(50, shift=0.3))  # the guard's next period: busier classes
    assert advice.sync()
    assert a.SelectClasses(REQUEST) == r.SelectClasses(REQUEST) != first
    eventually(lambda: _at_least(len(a.SelectClasses(REQUEST).classes), 1))  # without sync(): the mirror thread
    board.publish_classes(classes(50, shift=0.0))

    def follows() -> None:
        assert a.SelectClasses(REQUEST) == first
    eventually(follows)
    assert a.ListTenantClasses(yarn_advisor_pb2.ListTenantClassesRequest()) == \
        r.ListTenantClasses(yarn_advisor_pb2.ListTenantClassesRequest())
    ch_a.close()
    ch_r.close()


def test_other_methods_are_forwarded_with_their_answer_or_status_unchanged(pair) -> None:
    advice, reference, board, placement, _ = pair
    (ch_a, a), (ch_r, r) = stubs(advice.address), stubs(reference.address)
    for call in (lambda s: s.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest()),
                 lambda s: s.GetNodeOrdering(yarn_advisor_pb2.GetNodeOrderingRequest(job_type=yarn_advisor_pb2.JOB_TYPE_SHORT)),
                 lambda s: s.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest(node_ids=[""]))):
        got = code_of(lambda: call(a))
        assert got == code_of(lambda: call(r)) and got[0] != grpc.StatusCode.UNAVAILABLE, got
    # SloAdvisor is not served by either: the main process's UNIMPLEMENTED and its reason come through
    slo = ch_a.unary_unary("/harvester.v1.SloAdvisor/ListSlos")
    assert code_of(lambda: slo(b""))[0] == grpc.StatusCode.UNIMPLEMENTED
    # undecodable bytes: the main process decodes a forwarded call, the advice process its own
    for path in ("/harvester.v1.YarnAdvisor/ListNodeCapacities", "/harvester.v1.YarnAdvisor/SelectClasses"):
        assert code_of(lambda: ch_a.unary_unary(path)(b"\xff\xff\xff"))[0] == grpc.StatusCode.INVALID_ARGUMENT
    # a server stream, forwarded message by message
    placement.publish(nine_cell_table(1))
    hdfs = hdfs_placement_pb2_grpc.HdfsPlacementStub(ch_a)
    stream = hdfs.WatchPlacementTable(hdfs_placement_pb2.WatchPlacementTableRequest())
    assert next(iter(stream)).version == 1
    placement.publish(nine_cell_table(2))
    assert next(iter(stream)).version == 2
    stream.cancel()
    # a deadline is the caller's: a forwarded watch ends when it runs out
    short = hdfs.WatchPlacementTable(hdfs_placement_pb2.WatchPlacementTableRequest(since_version=2), timeout=0.3)
    assert code_of(lambda: list(short))[0] == grpc.StatusCode.DEADLINE_EXCEEDED
    ch_a.close()
    ch_r.close()


def test_health_reflects_what_the_main_process_serves(pair) -> None:
    advice, *_ = pair
    with grpc.insecure_channel(advice.address) as ch:
        health = health_pb2_grpc.HealthStub(ch)
        status = {name: health.Check(health_pb2.HealthCheckRequest(service=name)).status
                  for name in ("", "harvester.v1.YarnAdvisor", "harvester.v1.HdfsPlacement", "harvester.v1.SloAdvisor")}
    serving, not_serving = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
    assert status == {"": serving, "harvester.v1.YarnAdvisor": serving, "harvester.v1.HdfsPlacement": serving,
                      "harvester.v1.SloAdvisor": not_serving}


def test_calls_are_counted_once_in_the_main_process_metrics(pair) -> None:
    advice, _, board, _, metrics = pair
    publish(board, classes(5))
    ch, a = stubs(advice.address)
    eventually(lambda: a.SelectClasses(REQUEST))
    for _ in range(3):
        a.SelectClasses(REQUEST)
    code_of(lambda: a.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest()))
    ch.close()

    def count(method: str, code: str) -> float:
        return metrics.registry.get_sample_value("harvester_grpc_requests_total",
                                                 {"method": f"/harvester.v1.YarnAdvisor/{method}", "code": code}) or 0.0

    eventually(lambda: _at_least(count("SelectClasses", "OK"), 4))  # shipped every 0.5 s
    assert count("ListNodeCapacities", "FAILED_PRECONDITION") == 1, "forwarded: counted by the main process only"
    assert metrics.registry.get_sample_value("harvester_harvest_decision_duration_seconds_count",
                                             {"decision": "select_classes"}) >= 4


def _at_least(value: float, floor: float) -> None:
    assert value >= floor, value


def test_a_dead_advice_process_is_started_again_on_the_same_port(pair) -> None:
    advice, _, board, _, _ = pair
    publish(board, classes(5))
    ch, a = stubs(advice.address)
    eventually(lambda: a.SelectClasses(REQUEST))
    address, pid = advice.address, advice.status()["pid"]
    os.kill(pid, signal.SIGKILL)
    eventually(lambda: _at_least(advice.restarts, 1))
    assert advice.address == address and advice.status()["pid"] != pid
    assert eventually(lambda: a.SelectClasses(REQUEST)).classes, "the new process got the mirror whole"
    ch.close()


def test_the_advice_process_ends_with_the_main_process(tmp_path: Path) -> None:
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        from prometheus_client import CollectorRegistry
        from harvester.advice.advice_process import AdviceProcess
        from harvester.board import Board
        from harvester.board.harvesting import HarvestingBoard
        from harvester.config_server import TlsSettings
        from harvester.decisions.strategy import DEFAULT_SELECTION
        from harvester.observability.metrics import Metrics
        if __name__ == "__main__":
            p = AdviceProcess("127.0.0.1:0", Metrics(CollectorRegistry()), [], HarvestingBoard(Board()),
                              selection=DEFAULT_SELECTION, tls=TlsSettings())
            p.start()
            print(p.status()["pid"], flush=True)
            os._exit(0)  # no stop(): as if the main process were killed
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True)
    child = int(out.stdout.split()[0])

    def gone() -> None:
        assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text()
    eventually(gone, timeout_s=15)


def test_stop_ends_the_advice_process_and_removes_its_socket() -> None:
    advice = AdviceProcess("127.0.0.1:0", Metrics(CollectorRegistry()), [], HarvestingBoard(Board()),
                           selection=DEFAULT_SELECTION, tls=TlsSettings())
    advice.start()
    socket_dir = Path(advice.internal.address.removeprefix("unix:")).parent
    assert socket_dir.stat().st_mode & 0o077 == 0, "only this user reaches the main process's socket"
    pid = advice.status()["pid"]
    advice.stop(0.5)
    assert not advice.alive and not socket_dir.exists() and not Path(f"/proc/{pid}/cmdline").exists()


def test_a_taken_port_is_a_clear_error() -> None:
    holder = GrpcServer("127.0.0.1:0", Metrics(CollectorRegistry()))
    advice = AdviceProcess(holder.address, Metrics(CollectorRegistry()), [], HarvestingBoard(Board()),
                           selection=DEFAULT_SELECTION, tls=TlsSettings())
    with pytest.raises(OSError, match="cannot serve gRPC on .* from the advice process"):
        advice.start()
    advice.stop(0.1)
    holder.stop(0.1)


def test_the_class_table_pickles_as_its_columns() -> None:
    import pickle

    table = ClassTable.of(classes(20))
    copy = pickle.loads(pickle.dumps(table))
    assert copy.classes == table.classes and not copy.free_vcores[next(iter(copy.free_vcores))].flags.writeable
    for name in ("average", "peak", "current", "reserve", "capacity_vcores", "pattern_code"):
        assert np.array_equal(getattr(copy, name), getattr(table, name))
    assert all(np.array_equal(copy.fraction[t], table.fraction[t]) for t in table.fraction)


def test_cpu_split_is_checked() -> None:
    assert split_cpus([0], {0, 1}) == (frozenset({0}), frozenset({1}))
    with pytest.raises(ValueError, match="may run on CPUs"):
        split_cpus([5], {0, 1})
    with pytest.raises(ValueError, match="leave one for the loops"):
        split_cpus([0, 1], {0, 1})


@pytest.mark.parametrize("server, message", [
    ({"grpc_advice_cpus": [0]}, "set server.grpc_advice_process: true"),
    ({"grpc_advice_process": True, "grpc_advice_cpus": [1, 1]}, "distinct CPU numbers"),
])
def test_config_refuses_advice_cpus_that_cannot_work(server: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_settings({"server": server})


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two CPUs")
def test_cpus_pin_the_advice_process_and_the_main_one_until_stop() -> None:
    have = sorted(os.sched_getaffinity(0))
    advice = AdviceProcess("127.0.0.1:0", Metrics(CollectorRegistry()), [], HarvestingBoard(Board()),
                           selection=DEFAULT_SELECTION, tls=TlsSettings(), cpus=frozenset({have[0]}))
    advice.start()
    try:
        child = advice.status()["pid"]
        assert os.sched_getaffinity(child) == {have[0]}
        assert os.sched_getaffinity(0) == set(have[1:]), "this process's threads: the other CPUs"
        assert advice.status()["main_cpus"] == have[1:]
    finally:
        advice.stop(0.2)
    assert os.sched_getaffinity(0) == set(have), "given back on stop"


def test_the_callers_metadata_reaches_the_main_process() -> None:
    from harvester.advice.grpc_server import ServiceImpl
    from harvester.advice.yarn_advisor import YarnAdvisorServicer
    from harvester.v1 import yarn_advisor_pb2_grpc as yg

    class Echo(YarnAdvisorServicer):
        def ListNodeCapacities(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
            seen = {m.key: m.value for m in context.invocation_metadata()}
            context.abort(grpc.StatusCode.PERMISSION_DENIED, f"{seen.get('tenant-id')}|{seen.get('x-trace')}")

    board = HarvestingBoard(Board())
    impl = ServiceImpl("harvester.v1.YarnAdvisor", Echo(board), yg.add_YarnAdvisorServicer_to_server)
    advice = AdviceProcess("127.0.0.1:0", Metrics(CollectorRegistry()), [impl], board,
                           selection=DEFAULT_SELECTION, tls=TlsSettings())
    advice.start()
    try:
        with grpc.insecure_channel(advice.address) as ch:
            stub = yg.YarnAdvisorStub(ch)
            got = code_of(lambda: stub.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest(),
                                                          metadata=(("tenant-id", "web"), ("x-trace", "abc"))))
        assert got == (grpc.StatusCode.PERMISSION_DENIED, "web|abc")
    finally:
        advice.stop(0.2)


def test_config_check_refuses_cpus_this_machine_does_not_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harvester.cli import main

    beyond = max(os.sched_getaffinity(0)) + 1
    path = tmp_path / "h.yaml"
    path.write_text(f"server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:0\n  grpc_advice_process: true\n"
                    f"  grpc_advice_cpus: [{beyond}]\nembedded:\n  listen: 127.0.0.1:0\n"
                    f"store:\n  path: {tmp_path / 'h.db'}\n")
    assert main(["config", "check", str(path)]) == 2
    assert f"server.grpc_advice_cpus [{beyond}]: this process may run on CPUs" in capsys.readouterr().err

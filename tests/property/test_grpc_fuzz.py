"""Fuzz every gRPC method of the running sidecar (issue 15 findings 6-7): any message hypothesis
builds from the contract's descriptors, and any raw bytes, get a deliberate status — never
UNKNOWN nor INTERNAL — and a bad payload logs at most one line. Also the recorded finding:
two stages of 2^31-1 tasks answered UNKNOWN ("Value out of range")."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from grpc_sidecar import advised_channel
from hypothesis import HealthCheck, given, settings, strategies as st

from harvester.advice.grpc_server import CONTRACT
from harvester.v1 import common_pb2, yarn_advisor_pb2, yarn_advisor_pb2_grpc

#: Deliberate answers; UNKNOWN / INTERNAL would be a servicer that did not look at its input.
ALLOWED = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION,
           grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.RESOURCE_EXHAUSTED,
           grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.DEADLINE_EXCEEDED}
METHODS = [(svc.full_name, m) for svc in CONTRACT.values() for m in svc.methods]

_INTS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1), FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1), FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1), FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1), FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1), FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
IDS = ["", "localhost:45454", "web-0:45454", "10.0.0.1:9866", "dn-1", "root.default", "job-a", "short", "\x00", "ü" * 3]


def _scalar(f: FieldDescriptor) -> st.SearchStrategy[Any]:
    if f.type in _INTS:
        lo, hi = _INTS[f.type]
        return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 1, -1 if lo < 0 else 2]))
    if f.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True, width=32 if f.type == FieldDescriptor.TYPE_FLOAT else 64)
    if f.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if f.type == FieldDescriptor.TYPE_STRING:
        return st.one_of(st.sampled_from(IDS), st.text(max_size=12))
    if f.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=16)
    if f.type == FieldDescriptor.TYPE_ENUM:
        return st.one_of(st.sampled_from([v.number for v in f.enum_type.values]), st.integers(-5, 50))
    raise AssertionError(f"no strategy for {f.full_name}")


def _repeated(f: FieldDescriptor) -> bool:
    flag = getattr(f, "is_repeated", None)  # protobuf >= 6; `label` before
    return bool(flag) if flag is not None else f.label == FieldDescriptor.LABEL_REPEATED


def message(desc: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    cls = message_factory.GetMessageClass(desc)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for f in desc.fields:
        if f.type == FieldDescriptor.TYPE_MESSAGE:
            if f.message_type.full_name.startswith("google.protobuf.") or depth >= 3:
                continue
            one = message(f.message_type, depth + 1)
        else:
            one = _scalar(f)
        fields[f.name] = st.lists(one, max_size=4) if _repeated(f) else one

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        chosen = draw(st.sets(st.sampled_from(sorted(fields)), max_size=len(fields))) if fields else set()
        msg = cls()
        for name in chosen:
            value = draw(fields[name])
            field = desc.fields_by_name[name]
            try:
                if _repeated(field):
                    getattr(msg, name).extend(value)
                elif field.type == FieldDescriptor.TYPE_MESSAGE:
                    getattr(msg, name).CopyFrom(value)
                else:
                    setattr(msg, name, value)
            except (ValueError, TypeError):  # e.g. a float out of float32 range: not encodable, skip it
                continue
        return msg

    return build()


@pytest.fixture(scope="module")
def channel() -> Iterator[grpc.Channel]:
    with advised_channel() as ch:
        yield ch


def _call(channel: grpc.Channel, service: str, method: Any, payload: bytes) -> grpc.StatusCode:
    path = f"/{service}/{method.name}"
    try:
        if method.server_streaming:
            stream = channel.unary_stream(path)(payload, timeout=0.3)
            for _ in stream:
                break
            stream.cancel()
            return grpc.StatusCode.OK
        channel.unary_unary(path)(payload, timeout=10)
        return grpc.StatusCode.OK
    except grpc.RpcError as exc:
        return exc.code()  # type: ignore[no-any-return]


@pytest.mark.parametrize("service, method", METHODS, ids=[f"{s.rsplit('.', 1)[1]}.{m.name}" for s, m in METHODS])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=st.data())
def test_every_method_answers_a_deliberate_status(channel: grpc.Channel, service: str, method: Any, data: st.DataObject) -> None:
    request = data.draw(message(method.input_type))
    code = _call(channel, service, method, request.SerializeToString())
    assert code in ALLOWED, f"{service}/{method.name}({request}) -> {code}"


@pytest.mark.parametrize("service, method", METHODS, ids=[f"{s.rsplit('.', 1)[1]}.{m.name}" for s, m in METHODS])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.binary(min_size=1, max_size=64))
def test_raw_bytes_never_crash_a_method(channel: grpc.Channel, service: str, method: Any, payload: bytes) -> None:
    assert _call(channel, service, method, payload) in ALLOWED


def test_two_stages_of_int32_max_tasks_are_invalid_argument(channel: grpc.Channel) -> None:
    stub = yarn_advisor_pb2_grpc.YarnAdvisorStub(channel)
    dag = [yarn_advisor_pb2.Stage(name=n, tasks=2**31 - 1) for n in ("a", "b")]
    with pytest.raises(grpc.RpcError) as raised:
        stub.SelectClasses(yarn_advisor_pb2.SelectClassesRequest(
            job_name="j", dag=dag, container=common_pb2.Resources(memory_mb=1024, vcores=1)), timeout=10)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "int32" in raised.value.details()


def test_a_payload_that_does_not_decode_is_invalid_argument_in_one_log_line(channel: grpc.Channel,
                                                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    path = "/harvester.v1.YarnAdvisor/SelectClasses"
    with pytest.raises(grpc.RpcError) as raised:
        channel.unary_unary(path)(b"\xff\xff\xff\xff\x0f", timeout=10)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    mine = [r for r in caplog.records if "undecodable" in r.getMessage()]
    assert len(mine) == 1 and all(r.exc_info is None for r in caplog.records)
    assert not [r for r in caplog.records if r.name.startswith("grpc")], "gRPC's own traceback never runs"

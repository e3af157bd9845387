"""Wire details beyond the answer captures: request bodies the live RM accepted, the RM's
quirks (repeated keys, strings, collapse), recurring allocation windows, label map forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rm_client import Interpreter, ReservationDefinition, ReservationRequest, Resource, RMDecodeError
from rm_client.wire import _json
from rm_client.wire.apps import decode_entry_map, encode_entry_map
from rm_client.wire.bodies import (
    decode_app_submission,
    decode_node_resource_option,
    encode_app_submission,
    encode_node_resource_option,
)
from rm_client.wire.labels import (
    NodeLabel,
    decode_labels_to_nodes,
    decode_node_labels,
    decode_node_to_labels,
    encode_labels_to_nodes,
    encode_node_labels,
    encode_node_to_labels,
)
from rm_client.wire.reservations import (
    decode_reservation_list,
    decode_reservation_submission,
    encode_definition_request,
)


@pytest.fixture()
def captures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "yarn-3.3.6" / "captures"


def req(captures: Path, name: str) -> object:
    return json.loads((captures / f"{name}.request.json").read_text())


def test_node_resource_body_is_the_accepted_form(captures: Path) -> None:
    assert encode_node_resource_option(Resource(6144, 6), -1) == req(captures, "nodes-id-resource-update")
    missing = decode_node_resource_option(req(captures, "nodes-id-resource-missing-resource"))
    wrapped = decode_node_resource_option(req(captures, "nodes-id-resource-wrapped-root"))
    assert missing.resource is None and wrapped.resource is None  # the RM then sets 0/0
    assert decode_node_resource_option(req(captures, "nodes-id-resource-negative-accepted")).resource == Resource(-5, -1)


@pytest.mark.parametrize("name", ["apps-submit-rest-with-active-reservation", "apps-submit-rest-with-inactive-reservation",
                                  "apps-submit-rest-inactive-reservation-2"])
def test_app_submission_round_trips_the_accepted_bodies(captures: Path, name: str) -> None:
    raw = req(captures, name)
    sub = decode_app_submission(raw)
    assert sub.command.startswith("sleep ") and sub.resource == Resource(512, 1)
    assert sub.tags == ("hr-test", "reservation") and sub.environment == (("FOO", "bar"),)
    assert encode_app_submission(sub) == raw


@pytest.mark.parametrize("name", ["reservation-submit", "reservation-submit-2-rootdefault-nonrecurring",
                                  "reservation-submit-request-as-object", "reservation-update",
                                  "reservation-submit-quota-overlap-periodic-now"])
def test_reservation_bodies_round_trip_through_the_request_encoder(captures: Path, name: str) -> None:
    sub = decode_reservation_submission(req(captures, name))
    assert sub.definition is not None
    body = encode_definition_request(sub.definition)
    assert decode_reservation_submission({"reservation-definition": body}).definition == sub.definition
    assert isinstance(body["reservation-requests"]["reservation-request"], list)
    assert body["reservation-requests"]["reservation-request-interpreter"] == int(sub.definition.interpreter)


def test_submit_body_matches_the_capture_exactly(captures: Path) -> None:
    raw = req(captures, "reservation-submit")
    definition = decode_reservation_submission(raw).definition
    assert definition is not None and definition.recurrence_period_ms == 3_600_000
    assert encode_definition_request(definition) == raw["reservation-definition"]  # type: ignore[index]


def test_request_decoder_mirrors_the_rm_on_interpreter_strings(captures: Path) -> None:
    sub = decode_reservation_submission(req(captures, "reservation-submit-interpreter-as-string-accepted"))
    assert sub.definition is not None and sub.definition.interpreter is Interpreter.R_ANY  # RM stored 0
    with pytest.raises(RMDecodeError, match="0..3"):
        decode_reservation_submission(req(captures, "err-reservation-submit-interpreter-out-of-range"))


def test_recurring_allocations_are_period_offsets(captures: Path) -> None:
    (r,) = decode_reservation_list(json.loads((captures / "reservation-list-with-allocations.json").read_text()))
    assert [(a.start_ms, a.end_ms) for a in r.allocations or ()] == [(212044, 812044), (812044, 1112044)]
    arrival = r.definition.arrival_ms
    assert arrival % r.definition.recurrence_period_ms == 212044  # offsets are epoch-aligned
    now = arrival + 5 * 3_600_000 + 1  # five periods later
    windows = r.allocation_windows(now)
    assert windows[0].start_ms == arrival + 5 * 3_600_000 and windows[0].resource == Resource(2048, 2)
    one_off = decode_reservation_list(json.loads((captures / "reservation-list-two.json").read_text()))[1]
    assert one_off.allocation_windows(now) == one_off.allocations


def test_repeated_keys_survive_loads_and_dumps() -> None:
    text = b'{"m":{"entry":{"key":"memory-mb","value":"35044"},"entry":{"key":"vcores","value":"65"}}}'
    assert json.loads(text)["m"]["entry"] == {"key": "vcores", "value": "65"}  # what plain json would keep
    doc = _json.loads(text)
    pairs = decode_entry_map(doc["m"], "", "")
    assert pairs == (("memory-mb", 35044), ("vcores", 65))
    assert _json.dumps({"m": encode_entry_map(pairs)}) == text
    assert encode_entry_map(()) == {} and encode_entry_map((("vcores", 1),)) == {"entry": {"key": "vcores", "value": "1"}}


def test_loads_refuses_non_json_with_a_decode_error() -> None:
    for bad in (b"", b"not json", b"\xff\xfe", b"[" * 100_000):
        with pytest.raises(RMDecodeError):
            _json.loads(bad)


def test_collapse_and_numbers_as_strings_readers() -> None:
    assert _json.items({}, "") == [] and _json.items(None, "") == [] and _json.items({"a": 1}, "") == [{"a": 1}]
    assert _json.dec_int("1795421012044", "", "k") == 1795421012044 and _json.dec_bool("true", "", "k") is True
    with pytest.raises(RMDecodeError, match="x.k: expected an integer"):
        _json.dec_int(True, "x", "k")


def test_label_forms() -> None:
    labels = (NodeLabel("gpu", True), NodeLabel("ssd", False))
    assert decode_node_labels(encode_node_labels(labels)) == labels
    assert decode_node_labels({"nodeLabelInfo": {"name": "gpu", "exclusivity": "true"}}) == (NodeLabel("gpu"),)
    mapping = {"localhost:45454": ("gpu",), "localhost:45455": ("gpu", "ssd")}
    assert decode_node_to_labels(encode_node_to_labels(mapping)) == mapping
    assert decode_node_to_labels({"nodeToLabels": {"localhost:45454": ["gpu"]}}) == {"localhost:45454": ("gpu",)}
    inverse = {"gpu": ("localhost:45454", "localhost:45455")}
    assert decode_labels_to_nodes(encode_labels_to_nodes(inverse)) == inverse
    assert encode_node_to_labels({}) == {"nodeToLabels": None}


def test_definition_defaults_are_explicit() -> None:
    d = ReservationDefinition(arrival_ms=1, deadline_ms=2, requests=(ReservationRequest(Resource(1, 1), 1, 1, 1),))
    assert d.interpreter is Interpreter.R_ALL and not d.is_recurring
    assert "recurrence-expression" not in encode_definition_request(d)


@pytest.mark.parametrize("value,text", [
    (0.07997334003448486 / 2 * 100, "3.998667"),  # captures/nodes-running cpuUtilization
    (0, "0.0"), (12.5, "12.5"), (100.0 * 7.0 / 16.0, "43.75"), (100.0 / 3.0, "33.333332"),
])
def test_java_floats_print_with_float32_precision(value: float, text: str) -> None:
    assert repr(_json.java_float(value)) == text

"""Request-body errors and lifecycles of the emulator (bodies, lifecycle); the JSON quirks are
rm_client.wire's (tests/rm_client/test_rm_wire.py), which the emulator renders with."""

from __future__ import annotations

import json

import pytest

from harvester.emulator.bodies import parse_json, parse_xml
from harvester.emulator.errors import RestError
from harvester.emulator.lifecycle import APP_TRANSITIONS, AppState, InvalidTransition, Lifecycle


@pytest.mark.parametrize("body,needle", [
    (b'{"state":\n', "Unexpected end-of-input within/between Object entries\n at [Source: (BufferedReader); "
                     "line: 2, column: 1]"),
    (b'{"resource":{"memory":4096,"vCores":4}\n', "expected close marker for Object (start marker at [Source: "
                                                   "(BufferedReader); line: 1, column: 1])"),
    (b"this is not json", "Unrecognized token 'this': was expecting"),
])
def test_bad_json_bodies_answer_with_jacksons_words(body: bytes, needle: str) -> None:
    with pytest.raises(RestError) as err:
        parse_json(body)
    doc = json.loads(err.value.body)["RemoteException"]
    assert err.value.status == 400 and doc["exception"] == "WebApplicationException"
    assert needle in doc["message"]


def test_xml_bodies_are_read() -> None:
    doc = parse_xml(b"<resourceOption><resource><memory>8192</memory><vCores>8</vCores></resource>"
                    b"<overCommitTimeout>-1</overCommitTimeout></resourceOption>")
    assert doc == {"resourceOption": {"resource": {"memory": "8192", "vCores": "8"}, "overCommitTimeout": "-1"}}


def test_lifecycle_refuses_moves_outside_its_table_and_keeps_history() -> None:
    lc = Lifecycle.start("app", APP_TRANSITIONS, AppState.NEW, 0.0)
    lc.path(AppState.NEW_SAVING, AppState.SUBMITTED, AppState.ACCEPTED, at=1.0)
    with pytest.raises(InvalidTransition, match="ACCEPTED -> FINISHED"):
        lc.to(AppState.FINISHED, 2.0)
    lc.path(AppState.KILLING, AppState.KILLED, at=3.0, reason="killed")
    assert [c.state for c in lc.history][-2:] == [AppState.KILLING, AppState.KILLED]
    assert lc.entered(AppState.ACCEPTED) == 1.0 and not lc.can(AppState.RUNNING)

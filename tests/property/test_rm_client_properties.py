"""Properties of rm_client (hypothesis):

* every decoder, fed arbitrary JSON or a recorded answer with random damage, returns a model
  or raises an rm_client error, never ``KeyError``/``TypeError``/...;
* the error-body parser never raises;
* nothing unsafe reaches the wire: an invalid write raises RMValidationError with no HTTP
  call made (a recording adapter sees every request), and whatever IS sent satisfies the
  safety rules (no missing/negative/unintended-zero capacity, ms timeouts >= -1, recurrence
  dividing a day with the window inside one period, valid ids and signal commands).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
from pathlib import Path
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import requests
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from requests.adapters import HTTPAdapter

from shared_paths import FIXTURES_DIR
from rm_client import (
    DAY_MS,
    ReservationDefinition,
    ReservationRequest,
    Resource,
    RMClient,
    RMClientConfig,
    RMError,
    RMValidationError,
)
from rm_client.endpoints import ENDPOINTS, match
from rm_client.errors import parse_error_body
from rm_client.ids import APP_ID_RE, CONTAINER_ID_RE, NODE_ID_RE, RESERVATION_ID_RE
from rm_client.validation import SignalCommand
from rm_client.wire.bodies import decode_app_submission, decode_node_resource_option
from rm_client.wire.reservations import decode_reservation_submission

CAPTURES = FIXTURES_DIR / "yarn-3.3.6" / "captures"
# ~40 decoders x 2 properties: a modest count each keeps the file within seconds; the write
# properties (the safety net) get more examples.
DECODER_PROFILE = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROFILE = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**64, 2**64) | st.floats() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
    max_leaves=20,
)


def _seed_bodies() -> dict[str, list[Any]]:
    """Recorded answers per endpoint, the starting points for damage."""
    seeds: dict[str, list[Any]] = {}
    for line in (CAPTURES / "INDEX.txt").read_text().splitlines():
        parts = line.split()
        if not parts or line.startswith("#") or "\t" in line or parts[0].startswith("err-"):
            continue
        found = match(parts[-2], urlsplit(parts[-1]).path)
        f = CAPTURES / f"{parts[0]}.json"
        if found and found[0].decode and f.exists() and f.stat().st_size < 30_000:
            seeds.setdefault(found[0].name, []).append(json.loads(f.read_text()))
    return seeds


SEEDS = _seed_bodies()
DECODERS = {name: ep.decode for name, ep in ENDPOINTS.items() if ep.decode is not None}
DECODERS.update({"request:reservation": decode_reservation_submission, "request:app": decode_app_submission,
                 "request:node-resource": decode_node_resource_option})


def _decode_only_rm_errors(decoder: Any, doc: Any) -> None:
    try:
        decoder(doc)
    except RMError:
        pass


@pytest.mark.parametrize("name", sorted(DECODERS))
@DECODER_PROFILE
@given(doc=json_values)
def test_decoders_on_arbitrary_json_raise_only_rm_errors(name: str, doc: Any) -> None:
    _decode_only_rm_errors(DECODERS[name], doc)


@st.composite
def damaged(draw: st.DrawFn, name: str) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS[name])))
    for _ in range(draw(st.integers(1, 3))):
        parent: Any = None
        key: Any = None
        node = doc
        for _ in range(draw(st.integers(0, 9))):
            if isinstance(node, dict) and node:
                key = draw(st.sampled_from(sorted(node)))
            elif isinstance(node, list) and node:
                key = draw(st.integers(0, len(node) - 1))
            else:
                break
            parent, node = node, node[key]
        if parent is None:
            return draw(json_values)
        action = draw(st.sampled_from(["replace", "delete", "null", "stringify", "collapse"]))
        if action == "delete":
            del parent[key]
        elif action == "null":
            parent[key] = None
        elif action == "stringify":
            parent[key] = json.dumps(node) if not isinstance(node, str) else node + "x"
        elif action == "collapse" and isinstance(node, list):
            parent[key] = node[0] if node else {}
        else:
            parent[key] = draw(json_values)
    return doc


@pytest.mark.parametrize("name", sorted(SEEDS))
@DECODER_PROFILE
@given(data=st.data())
def test_decoders_on_damaged_recorded_answers_raise_only_rm_errors(name: str, data: st.DataObject) -> None:
    _decode_only_rm_errors(DECODERS[name], data.draw(damaged(name)))


@PROFILE
@given(body=st.binary(max_size=300) | st.text(max_size=300).map(str.encode) | json_values.map(
    lambda v: json.dumps({"RemoteException": v}).encode()))
def test_error_parser_never_raises(body: bytes) -> None:
    remote = parse_error_body(body)
    assert isinstance(remote.message, str)


# --- writes: nothing unsafe reaches the wire


class Recorder(HTTPAdapter):
    def __init__(self, answer: bytes) -> None:
        super().__init__()
        self.answer = answer
        self.calls: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.calls.append(request)
        resp = requests.Response()
        resp.status_code, resp._content, resp.url = 200, self.answer, request.url or ""
        resp._content_consumed = True
        return resp


def sent_or_refused(answer: bytes, write: Callable[[RMClient], Any]) -> requests.PreparedRequest | None:
    """Run ``write`` against a recording session: None when it was refused locally (then no
    request may have been made), else the one request that was sent."""
    client, rec = client_with(answer)
    try:
        write(client)
    except RMValidationError as err:
        assert rec.calls == [] and err.problems
        event("refused")
        return None
    event("sent")
    (call,) = rec.calls
    return call


def client_with(answer: bytes = b"{}") -> tuple[RMClient, Recorder]:
    rec = Recorder(answer)
    session = requests.Session()
    session.mount("http://", rec)
    return RMClient(RMClientConfig(urls=("http://rm:8088",)), session, sleep=lambda s: None,
                    rng=random.Random(0)), rec


weird = st.one_of(st.integers(-3, 3), st.integers(-2**70, 2**70), st.booleans(), st.floats(allow_nan=False),
                  st.text(max_size=4), st.none())
ids = st.one_of(st.just("localhost:45454"), st.just("not-a-node-id"), st.text(max_size=12))


def maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A valid value 4 times in 5, else anything (so both branches of each property run;
    ``one_of`` would flatten and weigh every alternative of ``weird`` equally)."""
    return st.integers(0, 4).flatmap(lambda k: weird if k == 0 else valid)


resources = st.one_of(st.builds(Resource, maybe(st.integers(0, 65536)), maybe(st.integers(0, 64))),
                      st.builds(Resource, st.integers(1, 65536), st.integers(1, 64)),
                      st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@PROFILE
@given(node_id=st.one_of(st.just("localhost:45454"), ids), resource=resources,
       timeout=maybe(st.integers(-1, 600_000)), allow_zero=st.booleans())
def test_node_resource_update_never_sends_an_unsafe_capacity(node_id: Any, resource: Any, timeout: Any,
                                                             allow_zero: bool) -> None:
    call = sent_or_refused(b'{"resourceInfo":{"memory":1,"vCores":1}}',
                           lambda client: client.update_node_resource(node_id, resource, timeout, allow_zero=allow_zero))
    if call is None:
        return
    assert NODE_ID_RE.fullmatch(unquote(urlsplit(call.url).path.split("/")[-2]))
    sent = decode_node_resource_option(json.loads(call.body))
    assert sent.resource is not None and sent.overcommit_timeout_ms is not None
    mem, vc = sent.resource.memory_mb, sent.resource.vcores
    assert mem >= 0 and vc >= 0 and sent.overcommit_timeout_ms >= -1
    assert allow_zero or (mem > 0 and vc > 0)


@st.composite
def definitions(draw: st.DrawFn) -> ReservationDefinition:
    """A definition the RM would accept, then (often) one field replaced by a boundary or
    garbage value."""
    period = draw(st.sampled_from([0, 60_000, 1_800_000, 3_600_000, 21_600_000, 86_400_000]))
    arrival = draw(st.integers(0, 2_000_000_000_000))
    window = draw(st.integers(1, period if period else 10**8))
    interpreter = draw(st.integers(0, 3))
    n = draw(st.integers(1, 3))
    longest = window // n if interpreter >= 2 else window  # R_ORDER*: stages run one after another
    reqs = []
    for _ in range(n):
        count = draw(st.integers(1, 10))
        reqs.append(ReservationRequest(Resource(draw(st.integers(1, 8192)), draw(st.integers(1, 8))), count,
                                       draw(st.integers(1, count)), draw(st.integers(1, max(1, longest)))))
    d = ReservationDefinition(arrival, arrival + window, tuple(reqs), interpreter, "r", 0, period)
    field = draw(st.sampled_from([None] * 5 + ["arrival_ms", "deadline_ms", "interpreter", "recurrence_period_ms",
                                              "priority", "name", "requests", "request"]))
    if field == "request":
        r = reqs[0]
        part = draw(st.sampled_from(["capability", "num_containers", "min_concurrency", "duration_ms"]))
        bad = draw(st.one_of(weird, st.integers(-1, 2 * window + 1),
                             st.builds(Resource, st.integers(-2, 2), st.integers(-2, 2))))
        reqs[0] = ReservationRequest(**{**{k: getattr(r, k) for k in r.__dataclass_fields__}, part: bad})
        return dataclasses.replace(d, requests=tuple(reqs))
    if field is not None:
        bad = draw(st.one_of(weird, st.integers(-1, arrival + 2 * window), st.just(7_000_000), st.just(()),
                             st.just("R_ORDER_NO_GAP")))
        return dataclasses.replace(d, **{field: bad})
    return d


@PROFILE
@given(rid=maybe(st.just("reservation_1795420810582_0001")),
       queue=maybe(st.just("root.default")), definition=definitions())
def test_reservation_submit_never_sends_an_impossible_definition(rid: Any, queue: Any, definition: Any) -> None:
    call = sent_or_refused(b"", lambda client: client.submit_reservation(rid, queue, definition))
    if call is None:
        return
    sent = decode_reservation_submission(json.loads(call.body))
    d = sent.definition
    assert d is not None and RESERVATION_ID_RE.fullmatch(sent.reservation_id or "") and (sent.queue or "").strip()
    window = d.deadline_ms - d.arrival_ms
    assert window > 0 and d.requests
    for r in d.requests:
        assert 1 <= r.min_concurrency <= r.num_containers and 0 < r.duration_ms <= window
        assert r.capability.memory_mb > 0 and r.capability.vcores > 0
    if d.recurrence_period_ms:
        assert DAY_MS % d.recurrence_period_ms == 0 and window <= d.recurrence_period_ms
    raw_interp = json.loads(call.body)["reservation-definition"]["reservation-requests"]["reservation-request-interpreter"]
    assert type(raw_interp) is int and 0 <= raw_interp <= 3


@PROFILE
@given(container_id=maybe(st.just("container_1795420810582_0002_01_000005")),
       command=maybe(st.sampled_from(list(SignalCommand))))
def test_signals_only_send_known_commands_to_valid_containers(container_id: Any, command: Any) -> None:
    call = sent_or_refused(b"", lambda client: client.signal_container(container_id, command))
    if call is None:
        return
    *_, cid, _, cmd = urlsplit(call.url).path.split("/")
    assert CONTAINER_ID_RE.fullmatch(cid) and cmd in {c.value for c in SignalCommand}


@PROFILE
@given(app_id=maybe(st.just("application_1795420810582_0002")),
       queue=maybe(st.just("default")), priority=maybe(st.integers(-10, 10)),
       op=st.sampled_from(["kill", "move", "priority"]))
def test_app_writes_only_reach_valid_apps(app_id: Any, queue: Any, priority: Any, op: str) -> None:
    writes: dict[str, Callable[[RMClient], Any]] = {
        "kill": lambda client: client.kill_app(app_id),
        "move": lambda client: client.move_app(app_id, queue),
        "priority": lambda client: client.set_app_priority(app_id, priority),
    }
    call = sent_or_refused(b'{"state":"KILLING","queue":"default","priority":0}', writes[op])
    if call is None:
        return
    assert APP_ID_RE.fullmatch(urlsplit(call.url).path.split("/")[5])
    body = json.loads(call.body)
    if op == "priority":
        assert type(body["priority"]) is int
    if op == "move":
        assert isinstance(body["queue"], str) and re.fullmatch(r"[^\s/?#&]+", body["queue"])

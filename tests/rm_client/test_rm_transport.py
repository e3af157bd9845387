"""Transport behaviour against a real HTTP server on loopback serving recorded RM bodies:
retries only for idempotent calls, full-jitter backoff through the injected sleep, timeouts,
HA failover (refused / standby), user.name, errors with context, local refusal."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from rm_fakes import RecordingAdapter, Reply, ScriptedRM, closed_port_url, recording_session

from rm_client import (
    Interpreter,
    ReservationDefinition,
    ReservationRequest,
    Resource,
    RMBadRequestError,
    RMClient,
    RMClientConfig,
    RMConfigError,
    RMConnectionError,
    RMDecodeError,
    RMNotFoundError,
    RMServerError,
    RMStandbyError,
    RMTimeoutError,
    RMValidationError,
)

ROOT = "/ws/v1/cluster"
APP = "application_1795420810582_0002"
CONTAINER = "container_1795420810582_0002_01_000005"


@pytest.fixture()
def captures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "yarn-3.3.6" / "captures"


def body(captures: Path, name: str) -> bytes:
    return (captures / f"{name}.json").read_bytes()


@pytest.fixture()
def rm() -> Iterator[ScriptedRM]:
    server = ScriptedRM()
    yield server
    server.close()


@pytest.fixture()
def rm2() -> Iterator[ScriptedRM]:
    server = ScriptedRM()
    yield server
    server.close()


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(urls: list[str], sleeps: Sleeps | None = None, **kw: object) -> RMClient:
    cfg = RMClientConfig(urls=tuple(urls), **{"connect_timeout_s": 1.0, "read_timeout_s": 2.0, **kw})  # type: ignore[arg-type]
    return RMClient(cfg, sleep=sleeps if sleeps is not None else Sleeps(), rng=random.Random(7))


def test_reads_decode_recorded_bodies(rm: ScriptedRM, captures: Path) -> None:
    rm.script("GET", ROOT + "/nodes", Reply(body=body(captures, "nodes-running")))
    rm.script("GET", ROOT + "/metrics", Reply(body=body(captures, "metrics-running")))
    client = make([rm.url])
    nodes = client.list_nodes()
    assert [n.id for n in nodes] == ["localhost:45455", "localhost:45454"]
    assert nodes[0].resource_utilization.containers_cpu_vcores == 0.026000000536441803
    assert client.get_cluster_metrics().total_mb == 16384
    assert [s.headers.get("Accept") for s in rm.seen] == ["application/json"] * 2


def test_idempotent_get_is_retried_with_full_jitter_backoff(rm: ScriptedRM, captures: Path) -> None:
    rm.script("GET", ROOT + "/metrics", Reply(503, b"busy"), Reply(502, b"bad gateway"),
              Reply(body=body(captures, "metrics")))
    sleeps = Sleeps()
    client = make([rm.url], sleeps, backoff_base_s=0.5, backoff_max_s=0.8, max_retries=3)
    assert client.get_cluster_metrics().available_mb == 16384
    assert len(rm.seen) == 3 and len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 0.8  # min(max, base * 2**n)
    expected = random.Random(7)
    assert sleeps == [expected.uniform(0, 0.5), expected.uniform(0, 0.8)]


def test_retries_give_up_after_max_retries(rm: ScriptedRM) -> None:
    rm.script("GET", ROOT + "/metrics", Reply(503, b"busy"))
    sleeps = Sleeps()
    with pytest.raises(RMServerError) as raised:
        make([rm.url], sleeps, max_retries=2).get_cluster_metrics()
    assert len(rm.seen) == 3 and len(sleeps) == 2
    assert raised.value.status == 503 and raised.value.remote_message == "busy"


def test_non_idempotent_post_is_never_repeated_after_it_may_have_run(rm: ScriptedRM) -> None:
    rm.script("POST", f"{ROOT}/containers/{CONTAINER}/signal/GRACEFUL_SHUTDOWN", Reply(503, b"proxy says no"))
    sleeps = Sleeps()
    with pytest.raises(RMServerError):
        make([rm.url], sleeps).signal_container(CONTAINER, "GRACEFUL_SHUTDOWN")
    assert len(rm.seen) == 1 and sleeps == []


def test_read_timeout_on_submit_raises_without_a_second_submit(rm: ScriptedRM) -> None:
    rm.script("POST", ROOT + "/reservation/submit", Reply(202, b"", delay_s=1.0))
    definition = ReservationDefinition(
        arrival_ms=1_900_000_000_000, deadline_ms=1_900_000_600_000, interpreter=Interpreter.R_ALL,
        requests=(ReservationRequest(Resource(1024, 1), 1, 1, 60_000),))
    client = make([rm.url], read_timeout_s=0.3)
    with pytest.raises(RMTimeoutError) as raised:
        client.submit_reservation("reservation_1795420810582_0007", "root.default", definition)
    assert raised.value.maybe_sent is True and raised.value.method == "POST"
    assert len([s for s in rm.seen if s.path.endswith("/submit")]) == 1


def test_read_timeout_on_get_is_retried_then_raises(rm: ScriptedRM) -> None:
    rm.script("GET", ROOT + "/scheduler", Reply(200, b"{}", delay_s=0.6))
    sleeps = Sleeps()
    with pytest.raises(RMTimeoutError) as raised:
        make([rm.url], sleeps, read_timeout_s=0.2, max_retries=1).get_scheduler()
    assert len(rm.seen) == 2 and len(sleeps) == 1
    assert raised.value.attempts == 2 and raised.value.rm_url == rm.url


def test_failover_from_a_refused_url_and_the_active_one_is_remembered(rm: ScriptedRM, captures: Path) -> None:
    rm.script("GET", ROOT + "/metrics", Reply(body=body(captures, "metrics")))
    dead = closed_port_url()
    sleeps = Sleeps()
    client = make([dead, rm.url], sleeps)
    assert client.get_cluster_metrics().total_vcores == 16
    assert client.active_url == rm.url and sleeps == []
    client.get_cluster_metrics()
    assert len(rm.seen) == 2


def _standby(server: ScriptedRM, active: ScriptedRM, captures: Path) -> None:
    """What a 3.3.6 standby answers: /info itself (haState STANDBY), 307 everywhere else."""
    info = body(captures, "info").replace(b'"haState":"ACTIVE"', b'"haState":"STANDBY"')
    server.script("GET", ROOT + "/info", Reply(body=info))
    server.default(Reply(307, b"This is standby RM. The redirect url is: /ws/v1/cluster/apps\n",
                         {"Location": active.url + ROOT + "/apps", "Content-Type": "text/plain"}))


def test_standby_redirect_fails_over_for_reads_and_writes(rm: ScriptedRM, rm2: ScriptedRM, captures: Path) -> None:
    _standby(rm, rm2, captures)
    rm2.script("GET", ROOT + "/info", Reply(body=body(captures, "info")))
    rm2.script("PUT", f"{ROOT}/apps/{APP}/state", Reply(202, body(captures, "apps-id-state-put-KILLED")))
    rm2.script("POST", f"{ROOT}/containers/{CONTAINER}/signal/FORCEFUL_SHUTDOWN", Reply(200, b""))
    sleeps = Sleeps()
    client = make([rm.url, rm2.url], sleeps)
    info = client.get_cluster_info()
    assert info.ha_state == "ACTIVE" and client.active_url == rm2.url
    assert client.kill_app(APP) == "KILLING"
    client.signal_container(CONTAINER, "FORCEFUL_SHUTDOWN")  # standby never ran it: safe to send on
    assert sleeps == []
    probe = client.probe_ha()
    assert probe[rm.url].ha_state == "STANDBY" and probe[rm2.url].ha_state == "ACTIVE"  # type: ignore[union-attr]


def test_a_write_reaching_the_standby_first_is_executed_once_on_the_active(rm: ScriptedRM, rm2: ScriptedRM,
                                                                          captures: Path) -> None:
    _standby(rm, rm2, captures)
    rm2.script("POST", ROOT + "/reservation/new-reservation", Reply(body=body(captures, "reservation-new-reservation")))
    client = make([rm.url, rm2.url])
    assert client.new_reservation() == "reservation_1795420810582_0001"
    assert [s.path for s in rm2.seen] == [ROOT + "/reservation/new-reservation"]
    assert [s.path for s in rm.seen] == [ROOT + "/reservation/new-reservation"]


def test_only_standbys_raise_standby_error_with_location(rm: ScriptedRM, rm2: ScriptedRM, captures: Path) -> None:
    _standby(rm, rm2, captures)
    sleeps = Sleeps()
    with pytest.raises(RMStandbyError) as raised:
        make([rm.url], sleeps, max_retries=1).list_apps()
    assert raised.value.status == 307 and raised.value.location == rm2.url + ROOT + "/apps"
    assert len(sleeps) == 1  # a standby did not run the call: retried after backoff
    # with only standbys, /info is still a true answer
    assert make([rm.url, rm.url]).get_cluster_info().ha_state == "STANDBY"


def test_refused_everywhere_retries_even_a_post_because_nothing_was_sent() -> None:
    sleeps = Sleeps()
    urls = [closed_port_url(), closed_port_url()]
    with pytest.raises(RMConnectionError) as raised:
        make(urls, sleeps, max_retries=2).new_application()
    assert raised.value.maybe_sent is False and raised.value.attempts == 6 and len(sleeps) == 2


def test_user_name_is_added_to_every_call(rm: ScriptedRM, captures: Path) -> None:
    rm.script("GET", ROOT + "/apps", Reply(body=body(captures, "apps-empty")))
    rm.script("PUT", f"{ROOT}/apps/{APP}/queue", Reply(body=body(captures, "apps-id-queue-put-move")))
    client = make([rm.url], user="alice")
    client.list_apps(states=("RUNNING", "ACCEPTED"), limit=5)
    assert client.move_app(APP, "root.default") == "root.default"
    assert [s.query["user.name"] for s in rm.seen] == [["alice"], ["alice"]]
    assert rm.seen[0].query["states"] == ["RUNNING,ACCEPTED"] and rm.seen[0].query["limit"] == ["5"]
    assert rm.seen[1].body == b'{"queue":"root.default"}'
    assert rm.seen[1].headers["Content-Type"] == "application/json"
    anonymous = make([rm.url])
    anonymous.list_apps()
    assert "user.name" not in rm.seen[-1].query  # writes would then run as dr.who


def test_errors_carry_context_for_both_body_forms(rm: ScriptedRM, captures: Path) -> None:
    rm.script("PUT", f"{ROOT}/apps/application_1795420810582_0099/state",
              Reply(404, body(captures, "err-apps-id-state-put-unknown-app")))
    rm.script("POST", f"{ROOT}/containers/{CONTAINER}/signal/OUTPUT_THREAD_DUMP",
              Reply(400, body(captures, "err-container-signal-bad-command")))
    client = make([rm.url])
    with pytest.raises(RMNotFoundError) as nf:
        client.kill_app("application_1795420810582_0099")
    e = nf.value
    assert (e.method, e.status, e.rm_url) == ("PUT", 404, rm.url)
    assert e.path == f"{ROOT}/apps/application_1795420810582_0099/state"
    assert e.remote_exception == "NotFoundException" and "not found" in (e.remote_message or "")
    assert "PUT /ws/v1/cluster/apps/application_1795420810582_0099/state -> HTTP 404 NotFoundException" in str(e)
    with pytest.raises(RMBadRequestError) as br:
        client.signal_container(CONTAINER, "OUTPUT_THREAD_DUMP")
    assert br.value.remote_exception is None and br.value.remote_message.startswith("Invalid command")


def test_non_json_success_body_is_a_decode_error_with_context(rm: ScriptedRM) -> None:
    rm.script("GET", ROOT + "/nodes", Reply(200, b"<html>proxy login</html>", {"Content-Type": "text/html"}))
    with pytest.raises(RMDecodeError) as raised:
        make([rm.url]).list_nodes()
    assert (raised.value.method, raised.value.status, raised.value.path) == ("GET", 200, ROOT + "/nodes")
    assert "proxy login" in raised.value.snippet


@pytest.mark.parametrize("call", [
    lambda c: c.update_node_resource("localhost:45454", None),
    lambda c: c.update_node_resource("localhost:45454", Resource(0, 4)),
    lambda c: c.update_node_resource("localhost:45454", Resource(-5, -1)),
    lambda c: c.update_node_resource("localhost:45454", Resource(4096, 4), overcommit_timeout_ms=1.5),
    lambda c: c.update_node_resource("localhost:45454", Resource(4096, 4), overcommit_timeout_ms=-2),
    lambda c: c.update_node_resource("not-a-node-id", Resource(4096, 4)),
    lambda c: c.signal_container(CONTAINER, "KILL_IT"),
    lambda c: c.signal_container("container_bogus", "GRACEFUL_SHUTDOWN"),
    lambda c: c.kill_app("app_bogus"),
    lambda c: c.move_app(APP, ""),
    lambda c: c.set_app_priority(APP, True),
    lambda c: c.delete_reservation("res-xyz"),
    lambda c: c.submit_reservation("reservation_1_0001", "root.default", ReservationDefinition(
        arrival_ms=1000, deadline_ms=1_801_000, recurrence_period_ms=60_000,
        requests=(ReservationRequest(Resource(1024, 1), 1, 1, 60_000),))),
], ids=["no-resource", "zero-memory", "negative", "float-timeout", "timeout-below-minus-1", "bad-node-id",
        "bad-command", "bad-container-id", "bad-app-id", "empty-queue", "bool-priority", "bad-reservation-id",
        "window-longer-than-period"])
def test_invalid_writes_are_refused_before_any_request(rm: ScriptedRM, call: object) -> None:
    client = make([rm.url])
    with pytest.raises(RMValidationError) as raised:
        call(client)  # type: ignore[operator]
    assert rm.seen == []
    assert raised.value.problems and "refused before sending" in str(raised.value)


def test_zero_capacity_is_sent_only_when_asked_for(rm: ScriptedRM, captures: Path) -> None:
    rm.script("POST", ROOT + "/nodes/localhost:45455/resource",
              Reply(body=body(captures, "nodes-id-resource-missing-resource")))
    client = make([rm.url])
    assert client.update_node_resource("localhost:45455", Resource(0, 0), 0, allow_zero=True) == Resource(0, 0)
    assert rm.seen[0].body == b'{"resource":{"memory":0,"vCores":0},"overCommitTimeout":0}'


def test_timeouts_tls_and_cert_reach_the_adapter(tmp_path: Path) -> None:
    ca, cert, key = (tmp_path / n for n in ("ca.pem", "c.pem", "k.pem"))
    for p in (ca, cert, key):
        p.write_text("x")
    adapter = RecordingAdapter(Reply(body=b'{"priority":3}'))
    cfg = RMClientConfig(urls=("https://rm:8090",), connect_timeout_s=1.5, read_timeout_s=7.0,
                         tls_verify=str(ca), client_cert=(str(cert), str(key)))
    client = RMClient(cfg, recording_session(adapter), sleep=Sleeps())
    assert client.get_app_priority(APP) == 3
    call = adapter.calls[0]
    assert call["timeout"] == (1.5, 7.0) and call["verify"] == str(ca) and call["cert"] == (str(cert), str(key))


def test_connect_timeout_is_a_transport_error_and_safe_to_fail_over() -> None:
    first = RecordingAdapter(raise_exc=requests.exceptions.ConnectTimeout("connect timed out"))
    second = RecordingAdapter(Reply(body=b'{"reservation-id":"reservation_1795420810582_0003"}'))
    session = requests.Session()
    session.mount("http://rm1:8088", first)
    session.mount("http://rm2:8088", second)
    sleeps = Sleeps()
    client = RMClient(RMClientConfig(urls=("http://rm1:8088", "http://rm2:8088")), session, sleep=sleeps)
    assert client.new_reservation() == "reservation_1795420810582_0003"
    assert len(first.calls) == 1 and len(second.calls) == 1 and sleeps == []
    only_first = RMClient(RMClientConfig(urls=("http://rm1:8088",), max_retries=0), session, sleep=sleeps)
    with pytest.raises(RMTimeoutError) as raised:
        only_first.get_cluster_metrics()
    assert raised.value.maybe_sent is False


def test_kerberos_without_the_extra_is_a_clear_config_error() -> None:
    try:
        import requests_gssapi  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("requests-gssapi is installed in this environment")
    with pytest.raises(RMConfigError) as raised:
        RMClient(RMClientConfig(urls=("http://rm:8088",), auth="kerberos"))
    assert "kerberos" in str(raised.value) and "requests-gssapi" in str(raised.value)


@pytest.mark.parametrize("kwargs, field", [
    ({"urls": ()}, "urls"),
    ({"urls": ("ftp://rm:21",)}, "urls[0]"),
    ({"urls": ("http://rm:8088",), "read_timeout_s": 0}, "read_timeout_s"),
    ({"urls": ("http://rm:8088",), "max_retries": -1}, "max_retries"),
    ({"urls": ("http://rm:8088",), "backoff_base_s": 9, "backoff_max_s": 1}, "backoff_base_s"),
    ({"urls": ("http://rm:8088",), "auth": "basic"}, "auth"),
    ({"urls": ("http://rm:8088",), "tls_verify": "/no/such/ca.pem"}, "tls_verify"),
])
def test_bad_config_names_the_key(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(RMConfigError) as raised:
        RMClientConfig(**kwargs)  # type: ignore[arg-type]
    assert str(raised.value).startswith(field)

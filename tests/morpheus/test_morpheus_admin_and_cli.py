"""Morpheus's admin routes (advice/morpheus_http.py) and `harvester slo` (cli_slo.py) against a
running sidecar over HTTP: the documents, and accept / override / reject / reset moving the
contract, being stored, and changing what the reservation loop plans and holds in the RM."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest

from harvester.cli import main

from morpheus_rig import ADMIN_TOKEN, JOB, Rig


@pytest.fixture()
def rig() -> Iterator[Rig]:
    r = Rig()
    try:
        r.step(25)  # the next window opens within the renewal lead: submitted
        yield r
    finally:
        r.close()


def call(rig: Rig, path: str, body: Any = None, method: str | None = None) -> tuple[int, Any]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(f"http://{rig.app.admin.address}{path}", data=data, method=method or ("POST" if data else "GET"),
                                 headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def cli(capsys: pytest.CaptureFixture[str], rig: Rig, *args: str) -> tuple[int, str, str]:
    code = main(["slo", *args, "--admin", f"http://{rig.app.admin.address}", "--token-file", str(rig.token_file)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_documents(rig: Rig) -> None:
    status, doc = call(rig, "/v1/morpheus/slos")
    (j,) = doc["jobs"]
    assert status == 200 and j["job"] == JOB.name and j["actionable"] and j["planned"] and j["runs"] == 12
    assert j["contract"]["state"] == "PROPOSED" and j["skyline"]["peak_memory_mb"] == 3072
    assert j["reservation"]["state"] == "SCHEDULED" and j["reservation"]["reservation_id"].startswith("reservation_")
    assert j["service"]["service"] == "reserved" and j["service"]["why"].startswith("reserved: LowCost: steps 1..3")
    assert j["start_at_once_until"] is None, "its reservation holds its longest run and opens before it could end"
    status, one = call(rig, f"/v1/morpheus/slo?job={JOB.name}")
    assert status == 200 and len(one["periods"]) == 12 and one["placement"]["offset_steps"] == 1
    assert one["skyline"]["estimator_form"] == {"resourceAllocation": {"0": {"memory": 3072, "vcores": 3},
                                                                      "180": {"memory": 0, "vcores": 0}}}
    assert one["reservations"][0]["history"][0]["state"] == "PLANNED"
    assert call(rig, "/v1/morpheus/slo")[0] == 400 and call(rig, "/v1/morpheus/slo?job=nope")[0] == 404
    status, res = call(rig, "/v1/morpheus/reservations")
    assert status == 200 and res["plan"]["capacity"] == {"memory_mb": 16384, "vcores": 16}
    assert res["actions"][0]["kind"] == "submit" and res["actions"][0]["fate"] == "sent"
    assert res["services"] == {JOB.name: j["service"]} and res["fallback_stays"] == {}
    assert rig.app.status()["morpheus"]["planned"] == 1


@pytest.mark.parametrize(("path", "body", "status", "error"), [
    ("/v1/morpheus/slo/accept", {}, 400, "'job' must be a non-empty string"),
    ("/v1/morpheus/slo/accept", {"job": "nope"}, 404, "no recurring job 'nope'"),
    # issue 25: every sign-off of an unknown job is a 404 that stores nothing (override stored one)
    ("/v1/morpheus/slo/override", {"job": "nope", "deadline_s": 100}, 404, "no recurring job 'nope'"),
    ("/v1/morpheus/slo/reject", {"job": "nope"}, 404, "no recurring job 'nope'"),
    ("/v1/morpheus/slo/reset", {"job": "nope"}, 404, "no recurring job 'nope'"),
    ("/v1/morpheus/slo/override", {"job": JOB.name}, 400, "needs at least one of"),
    ("/v1/morpheus/slo/override", {"job": JOB.name, "deadline_s": "soon"}, 400, "'deadline_s' must be a number"),
    ("/v1/morpheus/slo/override", {"job": JOB.name, "skyline_scale": -1}, 400, "skyline_scale must be > 0"),
    ("/v1/morpheus/slo/reset", {"job": JOB.name}, 400, "PROPOSED -> PROPOSED"),
    ("/v1/morpheus/slo/reject", b"not json", 400, "not JSON"),
])
def test_bad_sign_offs_change_nothing(rig: Rig, path: str, body: Any, status: int, error: str) -> None:
    got, doc = call(rig, path, body)
    assert got == status and error in doc["error"]
    assert rig.app.store.slo_contracts() == {} and call(rig, "/v1/morpheus/slos")[1]["jobs"][0]["contract"]["state"] == "PROPOSED"
    assert call(rig, "/v1/morpheus/slo/accept", method="GET")[0] == 405


def test_accept_override_reject_through_the_cli(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, rig, "list")
    assert code == 0 and JOB.name in out and "PROPOSED" in out and "SCHEDULED" in out
    code, out, _ = cli(capsys, rig, "accept", JOB.name, "--by", "ana", "--note", "ok")
    assert code == 0 and out.strip() == f"{JOB.name}: ACCEPTED (accepted by ana: ok)"
    assert rig.app.store.slo_contracts()[JOB.name].state.value == "ACCEPTED", "stored"
    code, out, _ = cli(capsys, rig, "override", JOB.name, "--deadline-s", "250", "--skyline-scale", "2", "--by", "ana")
    assert code == 0 and "OVERRIDDEN" in out
    rig.step(5)  # the reservation loop plans from the override: twice the skyline, the window ends by 250 s
    code, out, _ = cli(capsys, rig, "show", JOB.name)
    assert code == 0 and "sign-off: OVERRIDDEN by ana" in out and "terms: the owner's override" in out
    assert "accepted by ana: ok" in out, "the contract's history"
    (listed,) = rig.cluster.client.list_reservations(queue="root.default")
    assert [r.num_containers for r in listed.definition.requests] == [6], "the future window updated to the override"
    code, out, _ = cli(capsys, rig, "override", JOB.name, "--deadline-s", "200")
    rig.step(5)
    code, out, _ = cli(capsys, rig, "show", JOB.name)
    assert "plan: not placed: it-etl: the skyline needs 3 steps of 60s (180s) but the window" in out
    assert "service: static fallback (its own queue and static share): it-etl: the skyline needs 3 steps" in out
    warning = "WARNING: the skyline needs 3 steps of 60s (180s) but the window [9.2s, 200.0s] holds 2: LowCost will reject it"
    assert warning in out, "surfaced beside the sign-off, not only as LowCost's rejection"
    listed = cli(capsys, rig, "list")[1]
    assert warning in listed and "SERVICE" in listed
    assert f"{JOB.name}: static fallback (its own queue and static share): {JOB.name}: the skyline needs 3 steps" in listed
    assert rig.app.metrics.registry.get_sample_value("harvester_morpheus_jobs",
                                                     {"status": "skyline_longer_than_window"}) == 1
    code, out, _ = cli(capsys, rig, "reject", JOB.name, "--reason", "runs ad hoc now")
    assert code == 0 and "REJECTED (rejected by an operator: runs ad hoc now)" in out
    rig.step(5)
    doc = call(rig, "/v1/morpheus/reservations")[1]
    assert doc["plan"]["placed"] == [] and doc["plan"]["not_placed"] == {JOB.name: "rejected by its owner"}
    assert all(r["state"] in ("DELETED", "WITHDRAWN", "ACTIVE") for r in doc["reservations"]), doc["reservations"]
    ours = {r.reservation_id for r in rig.cluster.client.list_reservations(queue="root.default")}
    assert not ours & {r["reservation_id"] for r in doc["reservations"] if r["state"] == "DELETED"}, "gone from the RM"
    code, out, _ = cli(capsys, rig, "reset", JOB.name)
    assert code == 0 and "PROPOSED" in out


def test_sign_offs_need_the_admin_token(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    """Sign-offs change what is reserved in the RM: admin writes (issue 15, docs/security.md)."""
    req = urllib.request.Request(f"http://{rig.app.admin.address}/v1/morpheus/slo/accept",
                                 data=json.dumps({"job": JOB.name}).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=5)
    assert refused.value.code == 401
    code = main(["slo", "accept", JOB.name, "--admin", f"http://{rig.app.admin.address}"])
    assert code == 1 and "HTTP 401" in capsys.readouterr().err
    assert call(rig, "/v1/morpheus/slos")[1]["jobs"][0]["contract"]["state"] == "PROPOSED"  # nothing changed


def test_cli_errors(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, rig, "show")[0] == 2
    code, _, err = cli(capsys, rig, "accept", "nope")
    assert code == 1 and "HTTP 404" in err and "no recurring job 'nope'" in err
    code = main(["slo", "list", "--admin", "http://127.0.0.1:9"])
    assert code == 1 and "cannot reach the running sidecar" in capsys.readouterr().err
    code, out, _ = cli(capsys, rig, "list", "--json")
    assert code == 0 and json.loads(out)["jobs"][0]["job"] == JOB.name

"""`harvester explain reservation ID` against the embedded default (`make run`): a reservation
Morpheus submits for a demo recurring job, the one the demo's deadline job runs in that Jockey
resizes, an unknown id, and the store (which does not log reservation decisions)."""

from __future__ import annotations

import json
import re
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import pytest
from embedded_sidecar import T0, embedded_sidecar, settings_file

from harvester.advice.explain import ExplainSources
from harvester.advice.explain_reservation import explain_reservation, reservation_levers
from harvester.app import Harvester
from harvester.cli import main
from harvester.decisions.reservation_actions import Outcome, ReservationResult, SubmitReservation
from harvester.decisions.reservation_lifecycle import ReservationState, new_record
from harvester.decisions.reservation_reconcile import fold
from harvester.domain import DecisionRecord
from harvester.emulator import demo_deadline as dd


def _doc(app: Harvester, subject: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://{app.admin.address}/v1/explain/reservation?id={subject}", timeout=10) as r:
        return json.load(r)  # type: ignore[no-any-return]


@pytest.fixture()
def morpheus(tmp_path: Path) -> Iterator[Harvester]:
    """Morpheus's first refit and two reservation ticks: one window submitted, then listed."""
    with embedded_sidecar(tmp_path / "h.db") as app:
        assert app.loop("morpheus-refit").run_once() is not None
        assert app.loop("morpheus-reservations").run_once().summary["submits"] >= 1  # type: ignore[union-attr]
        app.clock.advance(app.morpheus_settings.reservations.control_period_s)  # type: ignore[attr-defined]
        assert app.loop("morpheus-reservations").run_once() is not None
        yield app


def _submitted(app: Harvester) -> tuple[str, str]:
    r = next(r for r in app.control.morpheus.reservations().records if r.reservation_id)
    assert r.reservation_id is not None
    return r.reservation_id, r.job


def _explain(app: Harvester, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, subject: str) -> str:
    """`harvester explain KIND SUBJECT` against the running sidecar: its output."""
    assert main(["explain", kind, subject, "--config", str(settings_file(tmp_path / "h.yaml", app))]) == 0
    return capsys.readouterr().out


def test_a_morpheus_reservation_is_explained_with_its_reason(morpheus: Harvester, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    rid, job = _submitted(morpheus)
    out = _explain(morpheus, tmp_path, capsys, "reservation", rid)
    assert out.startswith(f"reservation {rid} — from the running sidecar http://{morpheus.admin.address}")
    assert f"({rid}): SCHEDULED" in out and "listed by the RM" in out and f"LowCost (§6) placed {job}" in out
    assert f"submit {rid}  — sent, data 0 s old" in out
    assert f"formula: renew: the window of {job} opens at" in out
    # issue 25: instants in ISO-8601 UTC with how far from now (JSON keeps epoch numbers)
    assert re.search(r"window 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in \d+m\d\ds\) \.\. "
                     r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in \d+m\d\ds\), stages", out), out
    assert "epoch s" not in out and re.search(r"opens at 20\d\d-[-\dT:]+Z \(in \d+m\d\ds\)", out)
    assert "change it with: morpheus.reservations.renew_lead_s (now 600.0)" in out
    doc = _doc(morpheus, rid)
    assert doc["kind"] == "reservation" and doc["source"] == "sidecar"
    assert [r["reservation_id"] for r in doc["reservations"]] == [rid] and doc["jockey"] == []
    submit = next(d for d in doc["decisions"] if d["action"] == "submit")
    assert submit["loop"] == "morpheus-reservations" and submit["fate"] == "sent" and submit["data_age_s"] == 0.0
    assert submit["inputs"]["job"] == job
    states = [d["detail"] for d in doc["decisions"] if d["action"] == "lifecycle"]
    assert states == ["→ SCHEDULED", "→ SUBMITTED", "→ PLANNED"], "newest first"
    assert _doc(morpheus, job)["reservations"] == doc["reservations"], "the job's name finds its reservation"
    assert isinstance(doc["reservations"][0]["arrival_ms"], int), "JSON keeps numbers"


def test_a_submit_refused_for_lack_of_capacity_says_when_it_is_tried_again(morpheus: Harvester) -> None:
    sources: ExplainSources = morpheus.explain_sources()
    assert sources.live is not None and sources.live.reservations is not None
    view = sources.live.reservations
    r = next(r for r in view.records if r.reservation_id)
    planned = new_record(f"{r.job}@1", r.job, r.period_start_ms + 1, r.spec, ReservationState.PLANNED, sources.now, "planned")
    action = SubmitReservation(key=planned.key, as_of=sources.now, queue="root.default", spec=r.spec, reason="renew")
    gang = ("java.lang.Exception: The size of the largest gang in the reservation definition (<memory:5120, vCores:5>) "
            "exceed the capacity available (<memory:2048, vCores:2> )")
    records, _ = fold({planned.key: planned}, [ReservationResult(action, Outcome.REFUSED, None, gang,
                                                                 "BadRequestException")], sources.now)
    live = replace(sources.live, reservations=replace(view, records=(records[planned.key],)))
    doc = explain_reservation(replace(sources, live=live), planned.key, 10)
    assert doc is not None
    line = next(x for x in doc["summary"] if x.startswith("refused 1 time(s)"))
    assert "lack of capacity" in line and "exceed the capacity available" in line and "(in 5s)" in line, line
    event = next(d for d in doc["decisions"] if d["action"] == "event")
    assert "retry 1 in 5 s" in event["formula"]
    assert "morpheus.reservations.refused_retry_max_s" in [x["key"] for x in event["settings"]]


def test_the_reservation_jockey_resizes_is_explained_with_its_rule(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with embedded_sidecar(tmp_path / "h.db", {"morpheus": {"enabled": False}}) as app:
        period = (T0 // dd.PERIOD_S + 1) * dd.PERIOD_S  # as tests/jockey/test_embedded_jockey.py: the job 1 s old
        app.clock.advance(period + dd.SUBMIT_AT_S + 1 - T0)  # type: ignore[attr-defined]
        for name in ("telemetry", "jockey"):
            assert app.loop(name).run_once() is not None, app.loop(name).status()["last_error"]
        ctl = app.control.jockey_board.control().job(dd.JOB)
        assert ctl is not None and ctl.fate == "sent" and ctl.decided is not None
        assert main(["explain", "reservation", ctl.reservation_id, "--admin", f"http://{app.admin.address}"]) == 0
        out = capsys.readouterr().out
        assert "not one of Morpheus's reservations" in out and f"Jockey drives {dd.JOB}" in out
        assert f"jockey resize {ctl.reservation_id} {dd.RESERVED} → {ctl.decided} containers — sent" in out
        assert f"formula: Jockey: {ctl.reason}" in out and "change it with: jockey.quantile (now 0.95)" in out
        by_name = _doc(app, dd.JOB)
        assert [j["reservation_id"] for j in by_name["jockey"]] == [ctl.reservation_id]
        [resize] = by_name["decisions"]
        assert resize["inputs"]["rule"] == "raise" and resize["app_id"] == ctl.app_id and resize["data_age_s"] == 0.0


def test_an_unknown_reservation_gets_a_did_you_mean(morpheus: Harvester, capsys: pytest.CaptureFixture[str]) -> None:
    rid, _ = _submitted(morpheus)
    base = f"http://{morpheus.admin.address}"
    assert main(["explain", "reservation", rid[:-2], "--admin", base]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"nothing known about reservation {rid[:-2]!r}" in err and f"did you mean {rid!r}?" in err
    assert main(["explain", "reservation", "nightly-nothing", "--admin", base]) == 1
    err = capsys.readouterr().err
    assert "nothing known" in err and "Jockey's jobs and resizes" in err and "did you mean" not in err


def test_the_store_says_reservation_decisions_are_not_logged(morpheus: Harvester, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    rid, _ = _submitted(morpheus)
    cfg = settings_file(tmp_path / "h.yaml", morpheus)
    assert main(["explain", "reservation", rid, "--config", str(cfg), "--store"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in the store's decision log: ask the running sidecar" in err


@pytest.mark.parametrize(("loop", "kind", "reason", "fate", "keys"), [
    ("morpheus-reservations", "submit", "renew: the window of j opens at 9", "sent",
     ["morpheus.reservations.renew_lead_s", "morpheus.reservations.min_lead_s"]),
    ("morpheus-reservations", "update", "drift: back to our definition 2x60s", "dry_run",
     ["morpheus.reservations.correct_drift", "morpheus.actuate"]),
    ("morpheus-reservations", "delete", "window ended 400s ago", "sent", ["morpheus.reservations.delete_ended_after_s"]),
    ("morpheus-reservations", "dra_grant", "DRA: demand 6 > skyline 3", "sent",
     ["morpheus.dra.rho", "morpheus.dra.recent_window_s", "morpheus.dra.grant_s", "morpheus.dra.enabled"]),
    ("jockey", "resize", "Jockey: raise 2→4", "not admitted: LowCost admission: over capacity",
     ["jockey.quantile", "jockey.slack", "jockey.dead_zone", "jockey.lower_fraction", "jockey.min_update_interval_s",
      "morpheus.plan.capacity_fraction"]),
    ("guard", "nudge", "activation of reservation_1_0001 at 9.0", "deferred: busy",
     ["morpheus.nudge.enabled", "morpheus.nudge.settle_s"]),
])
def test_each_reservation_decision_names_the_settings_that_change_it(morpheus: Harvester, loop: str, kind: str,
                                                                     reason: str, fate: str, keys: list[str]) -> None:
    sources: ExplainSources = morpheus.explain_sources()
    levers = reservation_levers(sources, DecisionRecord(T0, loop, kind, "reservation_1_0001", reason, fate))
    assert [s["key"] for s in levers] == keys
    assert all(s["effect"] for s in levers) and levers[0]["value"] is not None


def test_explain_job_says_how_morpheus_serves_it(morpheus: Harvester, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A demo recurring job LowCost placed is `reserved`, with LowCost's reason (decisions/static_fallback.py)."""
    out = _explain(morpheus, tmp_path, capsys, "job", _submitted(morpheus)[1])
    assert "Morpheus: reserved: LowCost: steps " in out and "(terms: the inferred proposal" in out
    with urllib.request.urlopen(f"http://{morpheus.admin.address}/v1/explain/job?id={_submitted(morpheus)[1]}",
                                timeout=10) as r:
        doc = json.load(r)
    assert doc["morpheus"]["service"] == "reserved" and doc["morpheus"]["service_why"].startswith("reserved: LowCost: steps ")

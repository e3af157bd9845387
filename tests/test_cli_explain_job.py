"""Issue 25: `harvester explain job <id>` answered "nothing known" for the demo's own jobs. It now
gathers what Harvester knows of a job by its recurring name: its finished runs (Algorithm 1), the
apps running now with the RM's preemption counters, kills of its containers, Morpheus's SLO and
reservation, Jockey's control — and for an unknown job says what it looked at and what it knows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from harvester.app import Harvester
from harvester.cli import main
from harvester.emulator import demo_deadline as dd
from harvester.emulator.demo_recurring import DEMO_JOBS

from embedded_sidecar import T0, embedded_sidecar, run_loops


@pytest.fixture()
def demo(tmp_path: Path) -> Iterator[Harvester]:
    """The embedded default two minutes after start, every loop ticking as its thread would."""
    with embedded_sidecar(tmp_path / "h.db") as app:
        run_loops(app, 120.0)
        yield app


def _explain(app: Harvester, job: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict]:  # type: ignore[type-arg]
    base = f"http://{app.admin.address}"
    code = main(["explain", "job", job, "--admin", base])
    text = capsys.readouterr()
    if code != 0:
        return code, text.err, {}
    assert main(["explain", "job", job, "--admin", base, "--json"]) == 0
    return code, text.out, json.loads(capsys.readouterr().out)


def test_the_demos_running_apps_are_explained(demo: Harvester, capsys: pytest.CaptureFixture[str]) -> None:
    for job in ("demo-ds-service", "Sleep job"):  # what `harvester rm apps` shows right after start
        code, out, doc = _explain(demo, job, capsys)
        assert code == 0, out
        assert f"job {job} — from the running sidecar" in out and "running now: application_" in out, out
        [app] = doc["running"]
        assert app["app_id"].startswith("application_") and app["containers"] >= 1
        assert "preempted" in out, "the RM's own count of the containers it took (rm_overcommit cuts)"
        assert "no finished run" in out and "not one of Morpheus's recurring jobs" in out and "not a Jockey deadline job" in out
        code, out, by_id = _explain(demo, app["app_id"], capsys)
        assert code == 0 and f"{app['app_id']} is an app of job {job!r}" in out and by_id["job"] == job


def test_a_morpheus_recurring_job_shows_its_slo_and_reservation(demo: Harvester,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    job = DEMO_JOBS[0].name
    code, out, doc = _explain(demo, job, capsys)
    assert code == 0
    assert "12 finished run(s)" in out and "synthesized" in out
    assert f"Morpheus: recurring every {DEMO_JOBS[0].period_s:.0f} s" in out and "sign-off" in out
    assert f"Morpheus reservation {job}@" in out and "SCHEDULED" in out, out
    assert doc["morpheus"]["reservations"] and doc["morpheus"]["slo"]["period_s"] == DEMO_JOBS[0].period_s


def test_the_jockey_demo_job_is_explained_before_and_while_it_runs(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with embedded_sidecar(tmp_path / "h.db", {"morpheus": {"enabled": False}}) as app:
        run_loops(app, 10.0)
        code, out, doc = _explain(app, dd.JOB, capsys)
        assert code == 0, out
        assert f"Jockey drives {dd.JOB}" in out and "idle" in out and doc["jockey"]["state"] == "idle"
        period = (T0 // dd.PERIOD_S + 1) * dd.PERIOD_S
        app.clock.advance(period + dd.SUBMIT_AT_S + 1 - app.clock.now())  # type: ignore[attr-defined]
        for name in ("telemetry", "jobs", "jockey"):
            assert app.loop(name).run_once() is not None, app.loop(name).status()["last_error"]
        code, out, doc = _explain(app, dd.JOB, capsys)
        assert doc["jockey"]["state"] == "running" and "raise" in out and "running now: application_" in out, out


def test_an_unknown_job_says_what_was_searched_and_what_is_known(demo: Harvester,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, err, _ = _explain(demo, "nightly-nothing", capsys)
    assert code == 1 and err.count("\n") == 1
    assert "nothing known about job 'nightly-nothing'" in err
    for searched in ("finished runs", "apps running now", "Morpheus's recurring jobs", "Jockey's deadline jobs"):
        assert searched in err, err
    code, err, _ = _explain(demo, "demo-ds-servic", capsys)
    assert code == 1 and "did you mean 'demo-ds-service'?" in err

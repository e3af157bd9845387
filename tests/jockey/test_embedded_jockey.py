"""`make run` (the embedded default) with Jockey: the demo's deadline job `demo-nightly-sort` runs
every 15 minutes in the 2-container reservation its user's workflow makes; Jockey (on for the
embedded emulator only, with the demo's SYNTHESIZED prior runs) raises that reservation at the
job's first control period, and /v1/jockey/jobs and /metrics show it."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from rm_client import RMClient, RMClientConfig

from harvester.app import Harvester, jockey_settings
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.emulator import demo_deadline as dd

from embedded_sidecar import T0, embedded_sidecar


def get(app: Harvester, path: str) -> object:
    with urllib.request.urlopen(f"http://{app.admin.address}{path}", timeout=5) as r:
        return json.loads(r.read()) if path.startswith("/v1") else r.read().decode()


def test_the_demo_deadline_job_is_driven_right_after_it_starts(tmp_path: Path) -> None:
    with embedded_sidecar(tmp_path / "h.db", {"morpheus": {"enabled": False}}, t0=T0) as app:
        clock = app.clock
        assert isinstance(clock, SimClock)
        j = app.jockey_settings
        assert j.enabled and list(j.jobs) == [dd.JOB] and j.jobs[dd.JOB].reservation_name == dd.RESERVATION
        period = (T0 // dd.PERIOD_S + 1) * dd.PERIOD_S  # the first period that starts after T0
        clock.advance(period + dd.SUBMIT_AT_S + 1 - T0)  # the reservation was made 25 s ago, the job 1 s ago
        for name in ("telemetry", "jockey"):
            assert app.loop(name).run_once() is not None, app.loop(name).status()["last_error"]
        doc = get(app, f"/v1/jockey/job?name={dd.JOB}")
        assert isinstance(doc, dict) and doc["state"] == "running" and doc["app_id"]
        assert doc["allocation"] == dd.RESERVED and doc["rule"] == "raise" and doc["decided"] > dd.RESERVED
        assert doc["update"] == "sent" and "hard deadline 300s" in doc["reason"]
        text = get(app, "/metrics")
        assert f'harvester_jockey_allocation_containers{{job="{dd.JOB}",kind="decided"}} {doc["decided"]:.1f}' in text
        assert app.embedded is not None
        with RMClient(RMClientConfig(urls=(app.embedded.url,), user="root")) as rm:
            (listed,) = [r for r in rm.list_reservations(queue="root.default") if r.definition.name == dd.RESERVATION]
        assert listed.reservation_id == doc["reservation_id"]
        assert listed.definition.requests[-1].num_containers == doc["decided"], "the emulated RM holds the raise"


def test_never_for_a_real_rm_unless_enabled() -> None:
    rm = parse_settings({"cluster": {"source": "rm"}, "rm": {"urls": ["http://rm:8088"]}}, environ={})
    assert jockey_settings(rm).enabled is False and jockey_settings(rm).jobs == {}
    assert jockey_settings(parse_settings({}, environ={}), embedded=False).enabled is False, \
        "the embedded default with other ports (the simulator's) is no demo"


def test_no_demo_directory_is_left_in_the_system_temp_directory(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 25: every `serve` start left a harvester-demo-jockey-* directory in /tmp (65 after one
    test run). The demo job's prior runs now live in the state directory (beside the store), or —
    with the memory store, which promises nothing on disk — in a temporary one removed at stop."""
    import tempfile

    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))  # the system temp directory, for this test only
    state = tmp_path / "state"
    with embedded_sidecar(state / "h.db") as app:
        runs = app.jockey_settings.jobs[dd.JOB].runs
        assert runs.parent.parent == state and runs.is_file()
    with embedded_sidecar(state / "h.db") as app:  # a second start reuses it
        assert app.jockey_settings.jobs[dd.JOB].runs == runs
    with embedded_sidecar(tmp_path / "unused.db", {"store": {"backend": "memory"}}) as app:
        during = list(private.glob("harvester-demo-jockey-*"))
        assert len(during) == 1 and app.jockey_settings.jobs[dd.JOB].runs.parent == during[0]
    assert list(private.iterdir()) == [], "nothing left behind"
    assert {"demo", "h.db"} <= {p.name for p in state.iterdir()}

"""`make run` (the embedded default) with Morpheus: the demo's recurring jobs have SYNTHESIZED
history, the first refit finds their SLOs, and recurring reservations appear in the emulated RM
within a minute, visible through `harvester rm reservations`; never for a real RM."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from harvester.app import Harvester, morpheus_settings
from harvester.cli import main
from harvester.config import parse_settings
from harvester.emulator.demo_recurring import DEMO_JOBS

from embedded_sidecar import embedded_sidecar


@pytest.fixture()
def embedded(tmp_path: Path) -> Iterator[Harvester]:
    with embedded_sidecar(tmp_path / "h.db") as app:
        yield app


def test_reservations_from_synthesized_history_right_after_start(embedded: Harvester,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert embedded.morpheus_settings.enabled is True
    runs = embedded.store.job_runs(since=0.0, with_usage=True)
    assert len(runs) == 12 * len(DEMO_JOBS) and {r.origin for r in runs} == {"synthesized-demo"}
    assert embedded.loop("morpheus-refit").run_once().summary["actionable"] == len(DEMO_JOBS)
    summary = embedded.loop("morpheus-reservations").run_once().summary
    assert summary["planned"] == len(DEMO_JOBS) and summary["actions"] >= 1
    with urllib.request.urlopen(f"http://{embedded.admin.address}/v1/morpheus/slos", timeout=5) as r:
        doc = json.load(r)
    assert {j["job"]: j["synthesized_runs"] for j in doc["jobs"]} == {j.name: 12 for j in DEMO_JOBS}
    assert main(["rm", "reservations", "--rm-url", embedded.embedded.url, "--json"]) == 0  # type: ignore[union-attr]
    listed = json.loads(capsys.readouterr().out)
    names = [r["definition"]["name"] for r in listed]
    assert names and all(n.startswith("harvester-morpheus|demo-") for n in names)
    assert all(r["definition"]["interpreter"] == "R_ORDER_NO_GAP" for r in listed)


def test_never_for_a_real_rm_unless_enabled() -> None:
    rm = parse_settings({"cluster": {"source": "rm"}, "rm": {"urls": ["http://rm:8088"]}}, environ={})
    assert morpheus_settings(rm).enabled is False
    on = parse_settings({"cluster": {"source": "rm"}, "rm": {"urls": ["http://rm:8088"]}, "morpheus": {"enabled": True}},
                        environ={})
    assert morpheus_settings(on).enabled is True
    assert morpheus_settings(parse_settings({}, environ={}), embedded=False).enabled is False, \
        "the embedded default with other ports (the simulator's) is no demo"

"""`harvester rm …` against recorded RM answers served over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
from rm_fakes import Reply, ScriptedRM, closed_port_url

from harvester.cli import main


@pytest.fixture()
def rm(fixtures_dir: Path) -> Iterator[ScriptedRM]:
    cap = fixtures_dir / "yarn-3.3.6" / "captures"
    s = ScriptedRM()
    s.script("GET", "/ws/v1/cluster/nodes", Reply(body=(cap / "nodes-running.json").read_bytes()))
    s.script("GET", "/ws/v1/cluster/apps", Reply(body=(cap / "apps-running.json").read_bytes()))
    s.script("GET", "/ws/v1/cluster/reservation/list", Reply(body=(cap / "reservation-list-multiple.json").read_bytes()))
    s.script("GET", "/ws/v1/cluster/scheduler", Reply(body=(cap / "scheduler.json").read_bytes()))
    yield s
    s.close()


@pytest.mark.parametrize(("view", "expect"), [
    ("nodes", "localhost:45455"),
    ("apps", "application_1795420810582_0002"),
    ("reservations", "reservation_"),
    ("queues", "root.default"),
])
def test_views_print_tables(rm: ScriptedRM, capsys: pytest.CaptureFixture[str], view: str, expect: str) -> None:
    assert main(["rm", view, "--rm-url", rm.url]) == 0
    out = capsys.readouterr().out
    assert expect in out
    assert len(out.splitlines()) >= 2, "a header and at least one row"


def test_queues_say_what_each_percentage_is_of(rm: ScriptedRM, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rm", "queues", "--rm-url", rm.url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "USED OF CAP" in out[0] and "USED OF CLUSTER" in out[0]
    assert any(line.startswith("CAP/MAX OF PARENT:") for line in out) and any("the root is the cluster" in x for x in out)


def test_json_output_is_the_decoded_models(rm: ScriptedRM, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rm", "nodes", "--rm-url", rm.url, "--json"]) == 0
    nodes = json.loads(capsys.readouterr().out)
    assert {n["id"] for n in nodes} == {"localhost:45454", "localhost:45455"}
    assert all("resource_utilization" in n for n in nodes)


def test_rm_down_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = closed_port_url()  # refuses connections whatever else runs (e.g. `make run` on 18088)
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"rm:\n  urls: [{url}]\n  max_retries: 0\n")
    assert main(["rm", "nodes", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "connection refused" in err.lower()
    assert url in err and "rm.urls" in err, "where, and the setting to check"
    for internal in ("HTTPConnectionPool", "Max retries", "urllib3", "NewConnectionError", "Caused by"):
        assert internal not in err, err


def test_config_rm_urls_win_over_the_embedded_default(rm: ScriptedRM, capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    """cluster.source left at `embedded`: rm.urls still names the RM to show (not 127.0.0.1:18088)."""
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"rm:\n  urls: [{rm.url}]\n")
    assert main(["rm", "nodes", "--config", str(cfg)]) == 0
    assert "localhost:45455" in capsys.readouterr().out
    assert [s.path for s in rm.seen] == ["/ws/v1/cluster/nodes"]


def test_without_rm_urls_the_embedded_emulator_is_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    port = closed_port_url().rpartition(":")[2]
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"embedded:\n  listen: 127.0.0.1:{port}\nrm:\n  max_retries: 0\n")
    assert main(["rm", "nodes", "--config", str(cfg)]) == 1
    assert f"127.0.0.1:{port}" in capsys.readouterr().err


def test_bad_config_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "h.yaml"
    cfg.write_text("rm:\n  urls: [ftp://x]\n")
    assert main(["rm", "nodes", "--config", str(cfg)]) == 2
    assert "rm.urls[0]" in capsys.readouterr().err

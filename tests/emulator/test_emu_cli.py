"""`harvester emulator serve` (a real process) and `harvester rm record` (against an emulator
over real HTTP, replayed afterwards with the fixtures' own scenario reader)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from harvester.cli import main
from harvester.clock import ScaledClock
from harvester.domain import Resources
from harvester.emulator import Emulator, EmulatorConfig, EmulatorServer, Workload


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_its_url_answers_and_stops_on_a_signal(sig: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "harvester", "emulator", "serve", "--port", "0", "--size", "3",
                             "--seed", "7", "--speed", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert url.startswith("http://127.0.0.1:"), url
        nodes = requests.get(url + "/ws/v1/cluster/nodes", timeout=10).json()["nodes"]["node"]
        assert [n["id"] for n in nodes] == ["nm-00000:45454", "nm-00001:45454", "nm-00002:45454"]
        assert requests.get(url + "/ws/v1/cluster/info", timeout=10).json()["clusterInfo"]["haState"] == "ACTIVE"
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/ws/v1/cluster/info", timeout=2)


def test_serve_refuses_a_bad_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulator", "serve", "--size", "0", "--port", "0"]) == 2
    assert "--size" in capsys.readouterr().err


def test_rm_record_writes_a_replayable_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    emu = Emulator(ScaledClock(speed=20.0), EmulatorConfig(seed=3))
    Workload(emu).add_nodes(["localhost:45454", "localhost:45455"], Resources(8192, 8), physical_cores=2)
    out = tmp_path / "my-cluster-run"
    with EmulatorServer(emu) as server:
        code = main(["rm", "record", "--rm-url", server.url, "--out", str(out), "--seed", "5", "--steps", "25",
                     "--pace", "0.05", "--user", "root"])
    assert code == 0 and "recorded" in capsys.readouterr().out
    rows = [json.loads(line) for line in (out / "timeline.jsonl").read_text().splitlines()]
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert len(rows) >= 25 and {"t_ms", "method", "path", "request_body", "status", "body", "t_end_ms"} <= set(rows[0])
    assert all(r["path"].endswith("user.name=root") for r in rows if r["method"] != "GET")
    assert [e["event"] for e in events][:2] == ["scenario_start", "sequence"] and events[-1]["event"] == "scenario_end"
    steps = [e for e in events if e["event"] == "step"]
    assert len(steps) == len(rows) - sum(1 for r in rows if r["t_ms"] >= next(
        e["t_ms"] for e in events if e["event"] == "phase"))  # the cleanup's calls are not sequence steps
    assert (out / "README.md").read_text().startswith("# my-cluster-run")
    # the recording is what the fixtures' scenario reader and the client's decoders accept
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))
    from emu_timeline import load, start_epoch

    rows2, events2 = load(out)
    assert rows2 == rows and start_epoch(events2) > 1.7e9
    from rm_client.endpoints import decode_answer, match

    for r in rows:
        found = match(r["method"], r["path"].split("?")[0])
        if found is not None and r["status"] < 300 and found[0].decode is not None:
            assert decode_answer(found[0], r["status"], json.dumps(r["body"]).encode()) is not None
    with pytest.raises(SystemExit):  # `record` without its arguments is a usage error of `rm`
        main(["rm", "bogus"])


def test_serve_subclusters_serves_one_rm_per_name_with_the_same_node_ids() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "harvester", "emulator", "serve", "--port", "0", "--size", "2",
                             "--subclusters", "east,west"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        lines = [proc.stdout.readline().split() for _ in range(2)]  # type: ignore[union-attr]
        assert [name for name, _ in lines] == ["east", "west"]
        urls = [url for _, url in lines]
        assert len(set(urls)) == 2
        for url in urls:
            nodes = requests.get(url + "/ws/v1/cluster/nodes", timeout=10).json()["nodes"]["node"]
            assert [n["id"] for n in nodes] == ["nm-00000:45454", "nm-00001:45454"]
        stamps = {requests.get(u + "/ws/v1/cluster/info", timeout=10).json()["clusterInfo"]["startedOn"] for u in urls}
        assert len(stamps) == 2, "each sub-cluster is its own RM (its own cluster timestamp)"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_subclusters_refuses_bad_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulator", "serve", "--port", "0", "--subclusters", "a,a"]) == 2
    assert "--subclusters" in capsys.readouterr().err

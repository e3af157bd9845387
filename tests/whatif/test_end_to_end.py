"""A small what-if end to end: store → runs through the simulator → whatif.json / .md / figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harvester.whatif import run_whatif
from tests.whatif.builders import build


def small_store(tmp_path: Path) -> tuple[Path, object]:
    b = build(str(tmp_path / "h.db"), days=1.25, jobs_per_hour=4.0, job_seconds=600.0, containers=6)
    b.store.close()
    return tmp_path / "h.db", b.harvesting


@pytest.mark.slow
def test_report_of_a_small_replay(tmp_path: Path) -> None:
    path, h = small_store(tmp_path)
    seen: list[tuple[float, str]] = []
    doc = run_whatif(path, harvesting=h, days=0.25, policies="stock,yarn-pt", out=tmp_path / "out", processes=1,
                     recommend=False, progress=lambda f, s: seen.append((f, s)))
    on_disk = json.loads((tmp_path / "out" / "whatif.json").read_text())
    assert on_disk == json.loads(json.dumps(doc))
    for p in ("stock", "yarn-pt"):
        fig = doc["policies"][p]
        for key in ("harvested_core_hours", "task_kills", "wasted_core_hours", "unmet_primary_core_hours",
                    "job_time_mean_s"):
            assert fig[key] is not None and fig[key] >= 0
        assert fig["jobs_submitted"] == doc["coverage"]["jobs"] > 0
        assert fig["controller_errors"] == 0
    assert doc["coverage"]["nodes"] == 6 and doc["coverage"]["replay_days"] == pytest.approx(0.25)
    assert doc["coverage"]["history_days"] == pytest.approx(1.0)
    guard = next(v for v in doc["verdicts"] if v["technique"] == "the guard")
    assert guard["decision"] in ("turn it on", "leave it off") and guard["line"].startswith("here the guard")
    alg1 = next(v for v in doc["verdicts"] if v["technique"] == "Algorithm 1")
    assert alg1["decision"] == "not measured"
    md = (tmp_path / "out" / "whatif.md").read_text()
    assert "## Verdicts" in md and "## What the history covered" in md and "What it cannot know" in md
    assert (tmp_path / "out" / "whatif_policies.png").stat().st_size > 0
    assert (tmp_path / "out" / "whatif_job_time_cdf.png").stat().st_size > 0
    assert not (tmp_path / "out" / ".whatif-inputs.pkl").exists()
    assert seen[-1] == (1.0, "done") and all(0.0 <= f <= 1.0 for f, _ in seen)
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)


@pytest.mark.slow
def test_recommended_quantile_and_pool(tmp_path: Path) -> None:
    path, h = small_store(tmp_path)
    doc = run_whatif(path, harvesting=h, days=0.25, policies="yarn-pt,yarn-h", out=tmp_path / "out", processes=2)
    rec = doc["recommended_reserve"]
    assert rec["current"] == 0.95 and rec["tried"] == [0.9, 0.95, 0.99]
    assert rec["recommended"] in rec["tried"]
    assert set(doc["variants"]) >= {"yarn-pt@q0.9", "yarn-pt@q0.99"}
    assert (rec["recommended"] == 0.95) == ("yarn-h@q0.95" not in doc["variants"])
    alg1 = next(v for v in doc["verdicts"] if v["technique"] == "Algorithm 1")
    assert alg1["decision"] in ("turn it on", "leave it off")


@pytest.mark.slow
def test_only_the_morpheus_and_hdfs_comparisons(tmp_path: Path) -> None:
    path, h = small_store(tmp_path)
    doc = run_whatif(path, harvesting=h, days=0.25, policies=["morpheus", "hdfs-h"], out=tmp_path / "out", processes=2)
    assert doc["policies"] == {} and doc["recommended_reserve"] is None
    assert doc["hdfs"]["measured"] is False and "reimage" in doc["hdfs"]["why"]
    assert {v["decision"] for v in doc["verdicts"] if v["technique"] != "Morpheus"} == {"not measured"}

"""Harvester's Resource Estimator API against the recordings of the real Hadoop Resource
Estimator 3.3.6 (fixtures resourceestimator-3.3.6): every capture of INDEX.txt replayed IN ORDER
over real HTTP against `harvester`'s server, comparing status, content type and body.

Bodies are compared byte for byte, except the estimate (`estimator-*`, `estimation-*-after`):
the LP is degenerate (the fixtures' README), so there the objective of our skyline and of the
Estimator's must agree to 1e-6 on the same runs, and the constraints of its shape hold (same
axis and end, memory = 1,024 × vcores); later calls must repeat OUR first answer byte for byte
(stored, not solved again). Then the service is restarted on the same store file: history and
estimate are still there.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import numpy as np
import pytest
import requests
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.app_admin import estimator_server
from harvester.clock import SimClock
from harvester.config import Settings, parse_settings
from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.skyline import objective_terms, usage_matrix
from harvester.models.skyline_formats import from_estimator_json, parse_native_log
from harvester.observability.metrics import Metrics
from shared_paths import FIXTURES_DIR

ROOT = FIXTURES_DIR / "resourceestimator-3.3.6"
CAPTURES = ROOT / "captures"
ESTIMATES = ("estimator-etl_daily", "estimation-etl_daily-after", "estimator-etl_daily-second-call")


@dataclass(frozen=True)
class Capture:
    name: str
    status: int
    method: str
    path: str

    @property
    def body(self) -> bytes:
        return (CAPTURES / f"{self.name}.json").read_bytes()

    @property
    def content_type(self) -> str | None:
        response = (CAPTURES / f"{self.name}.http.txt").read_text().split("### RESPONSE", 1)[1].split("### BODY")[0]
        return next((line.split(":", 1)[1].strip() for line in response.splitlines()
                     if line.lower().startswith("content-type:")), None)


def captures() -> list[Capture]:
    out = []
    for line in (CAPTURES / "INDEX.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        out.append(Capture(f[0], int(f[2]), f[5], urlsplit(f[6]).path))
    return out


def settings(data_dir: Path, store: Path) -> Settings:
    return parse_settings({"store": {"path": str(store)},
                           "estimator": {"listen": "127.0.0.1:0", "data_dir": str(data_dir), "open_writes": True}},
                          environ={})


def serve(s: Settings, store: SqliteHistoryStore) -> AdminServer:
    server = estimator_server(s, store, Metrics(CollectorRegistry()), None, SimClock(1_795_000_000.0).now)
    server.start()
    return server


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    """The Estimator's working directory of the recording: the input under data/."""
    (tmp_path / "estimator" / "data").mkdir(parents=True)
    shutil.copy(ROOT / "etl_daily-3runs.txt", tmp_path / "estimator" / "data" / "etl_daily-3runs.txt")
    return tmp_path / "estimator"


@pytest.fixture()
def running(data_dir: Path, tmp_path: Path) -> Iterator[tuple[Settings, SqliteHistoryStore, AdminServer]]:
    s = settings(data_dir, tmp_path / "store.db")
    store = SqliteHistoryStore(s.store.path)
    server = serve(s, store)
    yield s, store, server
    server.stop()
    store.close()


def etl_daily_usage() -> np.ndarray:
    runs = parse_native_log((ROOT / "etl_daily-3runs.txt").read_text().splitlines()).runs
    return usage_matrix([r.skyline.vcores for r in runs])


def check_estimate(ours: bytes, theirs: bytes) -> None:
    """Same LP optimum and the answer's constraints (the README: compare objectives, not steps)."""
    mine, recorded = json.loads(ours), json.loads(theirs)
    assert list(mine) == ["resourceAllocation"]
    keys = [int(k) for k in mine["resourceAllocation"]]
    assert keys == sorted(keys) and all(k % 5 == 0 for k in keys)
    assert keys[0] == 0 and keys[-1] == int(list(recorded["resourceAllocation"])[-1]) == 315
    assert mine["resourceAllocation"][str(keys[-1])] == {"memory": 0, "vcores": 0}
    m_mem, m_vc = from_estimator_json(mine, 5)
    r_mem, r_vc = from_estimator_json(recorded, 5)
    np.testing.assert_array_equal(m_mem, 1024 * m_vc)
    c = etl_daily_usage()
    ours_obj = objective_terms(m_vc.astype(float), c, 0.1, 0.1)[0]
    theirs_obj = objective_terms(r_vc.astype(float), c, 0.1, 0.1)[0]
    assert ours_obj == pytest.approx(theirs_obj, abs=1e-6)
    assert theirs_obj == pytest.approx(13.06781, abs=5e-6)  # the README's figure


def test_every_capture_replays_in_order(running) -> None:
    _, _, server = running
    first_estimate: bytes | None = None
    seen = []
    for cap in captures():
        resp = requests.request(cap.method, server.url + cap.path, headers={"Accept": "application/json"}, timeout=60)
        assert resp.status_code == cap.status, (cap.name, resp.text)
        assert resp.headers.get("Content-Type") == cap.content_type, cap.name
        if cap.name in ESTIMATES:
            check_estimate(resp.content, cap.body)
            first_estimate = first_estimate or resp.content
            assert resp.content == first_estimate, f"{cap.name}: the stored estimate, not a new solve"
        else:
            assert resp.content == cap.body, cap.name
        seen.append(cap.name)
    assert len(seen) == 15 and first_estimate is not None


def test_history_and_estimate_survive_a_restart(running, data_dir: Path) -> None:
    s, store, server = running
    assert requests.post(server.url + "/resourceestimator/translator/data/etl_daily-3runs.txt", timeout=10).status_code == 204
    estimate = requests.get(server.url + "/resourceestimator/estimator/etl_daily", timeout=60).content
    server.stop()
    store.close()

    store2 = SqliteHistoryStore(s.store.path)
    again = serve(s, store2)
    try:
        history = requests.get(again.url + "/resourceestimator/skylinestore/history/*/*", timeout=10)
        assert history.content == (CAPTURES / "history-all.json").read_bytes()
        assert requests.get(again.url + "/resourceestimator/skylinestore/estimation/etl_daily", timeout=10).content == estimate
        # the restarted service still refuses the runs it holds
        dup = requests.post(again.url + "/resourceestimator/translator/data/etl_daily-3runs.txt", timeout=10)
        assert (dup.status_code, dup.content) == (500, (CAPTURES / "err-translator-post-same-file-again.json").read_bytes())
    finally:
        again.stop()
        store2.close()

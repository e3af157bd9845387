"""The Resource Estimator API beyond the recorded calls, over real HTTP on loopback: the
translator reads nothing outside its data directory; a file with a duplicate run adds nothing;
minJobRuns; a stored estimate outlives history changes until it is deleted; DELETE of a run;
malformed lines; writes need the token unless `open_writes`; two pipelines in one file."""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest
import requests
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.app_admin import estimator_server
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.skyline_formats import from_estimator_json
from harvester.observability.metrics import Metrics
from shared_paths import FIXTURES_DIR

ETL = (FIXTURES_DIR / "resourceestimator-3.3.6" / "etl_daily-3runs.txt").read_text()
TOKEN = "estimator-token-0123456789"
BASE = "/resourceestimator"


def line(pipeline: str, run: str, counts: list[int]) -> str:
    units = "".join(f"{n}:{5 * k}|" for k, n in enumerate(counts))
    return f"{pipeline} {len(counts)} 0 0 0 {run} 1024:1| {units}"


Serve = Callable[..., AdminServer]


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    (d / "data").mkdir(parents=True)
    (d / "data" / "etl.txt").write_text(ETL)
    return d


@pytest.fixture()
def serve(tmp_path: Path, data_dir: Path) -> Iterator[Serve]:
    started: list[tuple[AdminServer, SqliteHistoryStore]] = []

    def start(token: str | None = None, **estimator: object) -> AdminServer:
        conf = {"listen": "127.0.0.1:0", "data_dir": str(data_dir), "open_writes": True, **estimator}
        s = parse_settings({"estimator": conf}, environ={})
        store = SqliteHistoryStore(tmp_path / f"store{len(started)}.db")
        server = estimator_server(s, store, Metrics(CollectorRegistry()), token, SimClock(0.0).now)
        server.start()
        started.append((server, store))
        return server

    yield start
    for server, store in started:
        server.stop()
        store.close()


def call(server: AdminServer, method: str, path: str, **kw: object) -> requests.Response:
    return requests.request(method, server.url + BASE + path, timeout=60, **kw)  # type: ignore[arg-type]


def error(resp: requests.Response) -> tuple[int, str, str]:
    doc = resp.json()
    assert list(doc) == ["exception", "message", "javaClassName"]
    assert doc["javaClassName"].endswith("." + doc["exception"])
    return resp.status_code, doc["exception"], doc["message"]


# --- the translator reads only inside its data directory ---------------------------------


def test_paths_outside_the_data_directory_are_refused_unread(serve: Serve, data_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(line("leak", "leak_run1", [3, 3]) + "\n")
    (data_dir / "data" / "link.txt").symlink_to(secret)
    (data_dir / "escape").symlink_to(tmp_path)
    server = serve()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)  # sends the path as is (no ../ folding)
    for path in ("../secret.txt", "data/../../secret.txt", f"/{secret}", "data/link.txt", "escape/secret.txt",
                 "%2E%2E/secret.txt", "data/..%2F..%2Fsecret.txt", "/etc/passwd", "/etc/no-such-file"):
        conn.request("POST", f"{BASE}/translator/{path}")
        resp = conn.getresponse()
        doc = json.loads(resp.read())
        assert (resp.status, doc["exception"]) == (403, "ForbiddenException"), path
        assert "outside the translator's data directory" in doc["message"], path
        assert str(data_dir) not in doc["message"].replace(path, "")  # where the data directory is, is not told
    conn.close()
    assert call(server, "GET", "/skylinestore/history/*/*").content == b"{}"


def test_absolute_paths_inside_the_data_directory_are_read(serve: Serve, data_dir: Path) -> None:
    server = serve()
    assert call(server, "POST", f"/translator/{data_dir}/data/etl.txt").status_code == 204
    assert len(call(server, "GET", "/skylinestore/history/etl_daily/*").json()) == 3


def test_without_a_data_directory_every_file_is_refused(serve: Serve) -> None:
    server = serve(data_dir=None)
    status, exc, message = error(call(server, "POST", "/translator/data/etl.txt"))
    assert (status, exc) == (403, "ForbiddenException") and "estimator.data_dir" in message


def test_directories_fifos_and_large_files(serve: Serve, data_dir: Path) -> None:
    os.mkfifo(data_dir / "data" / "pipe")
    (data_dir / "data" / "big.txt").write_text(ETL * 40)
    server = serve(max_file_mb=0.05)
    assert error(call(server, "POST", "/translator/data")) == (404, "FileNotFoundException", "data (Is a directory)")
    assert error(call(server, "POST", "/translator/data/pipe"))[:2] == (403, "ForbiddenException")  # no hang on a FIFO
    status, exc, message = error(call(server, "POST", "/translator/data/big.txt"))
    assert (status, exc) == (400, "BadRequestException") and "estimator.max_file_mb" in message


# --- duplicates, malformed lines: all or nothing ------------------------------------------


def test_a_file_with_one_duplicate_run_adds_nothing(serve: Serve, data_dir: Path) -> None:
    server = serve()
    assert call(server, "POST", "/translator/data/etl.txt").status_code == 204
    before = call(server, "GET", "/skylinestore/history/*/*").content
    (data_dir / "data" / "mixed.txt").write_text(line("etl_daily", "etl_daily_run4", [1, 2, 3]) + "\n"
                                                 + ETL.splitlines()[0] + "\n")
    status, exc, message = error(call(server, "POST", "/translator/data/mixed.txt"))
    assert (status, exc) == (500, "DuplicateRecurrenceIdException")
    assert message == ("Trying to addHistory duplicate resource skylines for {pipelineId: etl_daily, runId: "
                       "etl_daily_run1}. Use updateHistory function instead.")
    assert call(server, "GET", "/skylinestore/history/*/*").content == before  # run4 was not added either


@pytest.mark.parametrize(("text", "status", "exc"), [
    ("etl_daily 3 0 0 0 etl_daily_run1 1024:1|", 500, "ArrayIndexOutOfBoundsException"),
    ("etl_daily 3 0 0 0 etl_daily_run1 1024:1| 2:0|x:5|", 400, "NumberFormatException"),
    ("etl_daily 3 0 0 0 etl_daily_run1 1024:1| 2:0|-4:5|", 400, "NumberFormatException"),
])
def test_a_malformed_line_adds_nothing(serve: Serve, data_dir: Path, text: str, status: int, exc: str) -> None:
    (data_dir / "data" / "bad.txt").write_text(line("other", "other_run1", [2, 2]) + "\n\n" + text + "\n")
    server = serve()
    got = error(call(server, "POST", "/translator/data/bad.txt"))
    assert got[:2] == (status, exc) and got[2].startswith("data/bad.txt: line 3: ")
    assert call(server, "GET", "/skylinestore/history/*/*").content == b"{}"


# --- estimates --------------------------------------------------------------------------


def test_min_job_runs_is_the_estimators_error(serve: Serve, data_dir: Path) -> None:
    (data_dir / "data" / "one.txt").write_text(line("p", "p_run1", [2, 4, 4, 1]) + "\n")
    (data_dir / "data" / "two.txt").write_text(line("p", "p_run2", [2, 5, 3, 1]) + "\n")
    server = serve()
    assert call(server, "POST", "/translator/data/one.txt").status_code == 204
    assert error(call(server, "GET", "/estimator/p")) == (
        500, "InvalidInputException",
        "Job ResourceSkyline history is containing less job runs than 2, please try again with valid Job "
        "ResourceSkyline history")
    assert call(server, "GET", "/skylinestore/estimation/p").content == b"null"
    assert call(server, "POST", "/translator/data/two.txt").status_code == 204
    assert call(server, "GET", "/estimator/p").status_code == 200


def test_min_job_runs_is_configurable(serve: Serve, data_dir: Path) -> None:
    (data_dir / "data" / "one.txt").write_text(line("p", "p_run1", [2, 4, 4, 1]) + "\n")
    server = serve(min_job_runs=1)
    assert call(server, "POST", "/translator/data/one.txt").status_code == 204
    assert call(server, "GET", "/estimator/p").json() == {"resourceAllocation": {
        "0": {"memory": 2048, "vcores": 2}, "5": {"memory": 4096, "vcores": 4}, "15": {"memory": 1024, "vcores": 1},
        "20": {"memory": 0, "vcores": 0}}}


def test_a_stored_estimate_is_answered_until_it_is_deleted(serve: Serve) -> None:
    server = serve()
    assert call(server, "POST", "/translator/data/etl.txt").status_code == 204
    first = call(server, "GET", "/estimator/etl_daily").content
    assert call(server, "DELETE", "/skylinestore/history/etl_daily/etl_daily_run2").status_code == 204
    assert call(server, "GET", "/estimator/etl_daily").content == first  # history changed: not solved again
    assert call(server, "DELETE", "/skylinestore/estimation/etl_daily").status_code == 204
    assert call(server, "GET", "/skylinestore/estimation/etl_daily").content == b"null"
    second = call(server, "GET", "/estimator/etl_daily").content
    assert second != first  # solved again from runs 1 and 3 (run 2 peaks higher)
    assert call(server, "GET", "/skylinestore/estimation/etl_daily").content == second


def test_deleting_a_run(serve: Serve) -> None:
    server = serve()
    assert call(server, "POST", "/translator/data/etl.txt").status_code == 204
    assert call(server, "DELETE", "/skylinestore/history/etl_daily/etl_daily_run1").status_code == 204
    assert call(server, "GET", "/skylinestore/history/etl_daily/etl_daily_run1").content == b"null"
    assert [k["runId"] for k, _ in call(server, "GET", "/skylinestore/history/etl_daily/*").json()] == [
        "etl_daily_run3", "etl_daily_run2"]
    assert error(call(server, "DELETE", "/skylinestore/history/etl_daily/etl_daily_run1")) == (
        500, "RecurrenceIdNotFoundException", "Trying to deleteHistory non-existing recurring pipeline  "
        "{pipelineId: etl_daily, runId: etl_daily_run1}'s resource skylines")
    # deleted, it can be added again (the file's other runs are still there: a duplicate)
    assert error(call(server, "POST", "/translator/data/etl.txt"))[1] == "DuplicateRecurrenceIdException"


def test_two_pipelines_with_runs_of_different_lengths(serve: Serve, data_dir: Path) -> None:
    rng = np.random.default_rng(26)
    lines = []
    for p, n, k in (("etl_daily", 30, 60), ("hourly_agg", 12, 24)):
        for i in range(n):
            counts = np.maximum(0, rng.normal(20 if p == "etl_daily" else 6, 4, int(k * rng.uniform(0.7, 1.0)))).round()
            counts[0] = max(counts[0], 1)
            lines.append(line(p, f"{p}_run{i}", [int(c) for c in counts]))
    rng.shuffle(lines)
    (data_dir / "data" / "two.txt").write_text("\n".join(lines) + "\n")
    server = serve()
    assert call(server, "POST", "/translator/data/two.txt").status_code == 204
    everything = call(server, "GET", "/skylinestore/history/*/*").json()
    assert len(everything) == 42
    for p, n in (("etl_daily", 30), ("hourly_agg", 12)):
        mine = call(server, "GET", f"/skylinestore/history/{p}/*").json()
        assert len(mine) == n and {k["pipelineId"] for k, _ in mine} == {p}
        doc = call(server, "GET", f"/estimator/{p}").json()
        mem, vc = from_estimator_json(doc, 5)
        np.testing.assert_array_equal(mem, 1024 * vc)  # memory = container × containers at every step
        assert vc.max() > 0


def test_the_wildcard_is_not_a_pipeline_to_estimate(serve: Serve) -> None:
    server = serve()
    assert error(call(server, "GET", "/estimator/*"))[:2] == (400, "BadRequestException")


def test_unknown_paths_and_methods(serve: Serve) -> None:
    server = serve()
    assert call(server, "GET", "/skylinestore/history/only_one").status_code == 404
    assert call(server, "GET", "/translator/data/etl.txt").status_code == 405
    assert call(server, "POST", "/estimator/etl_daily").status_code == 405
    assert call(server, "PUT", "/estimator/etl_daily").status_code == 405


# --- who may write ------------------------------------------------------------------------


def test_writes_need_the_admin_token_unless_open(serve: Serve) -> None:
    closed = serve(token=TOKEN, open_writes=False)
    assert call(closed, "POST", "/translator/data/etl.txt").status_code == 401
    assert call(closed, "DELETE", "/skylinestore/estimation/etl_daily").status_code == 401
    assert call(closed, "GET", "/skylinestore/history/*/*").content == b"{}"  # reads are open
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert call(closed, "POST", "/translator/data/etl.txt", headers=auth).status_code == 204
    no_token = serve(open_writes=False)
    assert call(no_token, "POST", "/translator/data/etl.txt").status_code == 403


def test_history_of_one_run_and_unknown_ones(serve: Serve) -> None:
    server = serve()
    assert call(server, "GET", "/skylinestore/history/etl_daily/*").content == b"null"
    assert call(server, "POST", "/translator/data/etl.txt").status_code == 204
    one = call(server, "GET", "/skylinestore/history/etl_daily/etl_daily_run2").json()
    assert [k for k, _ in one] == [{"pipelineId": "etl_daily", "runId": "etl_daily_run2"}]
    assert call(server, "GET", "/skylinestore/history/etl_daily/nope").content == b"null"
    assert len(json.loads(call(server, "GET", "/skylinestore/history/*/nope").content)) == 3  # `*` pipeline: all

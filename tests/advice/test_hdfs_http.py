"""GET /v1/hdfs/placement-table over a real admin server on loopback: ETag, 304, long-poll."""

from __future__ import annotations

import json
import threading
import time
from typing import Iterator

import pytest
import requests
from prometheus_client import CollectorRegistry

from harvester.advice.admin_http import AdminServer
from harvester.board.hdfs import PlacementBoard
from harvester.advice.hdfs_http import PATH, placement_table_route
from harvester.observability.metrics import Metrics
from hdfs_placement import SCHEMA, PlacementTable
from hdfs_tables import nine_cell_table


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[AdminServer, dict]]:
    """One admin server for the module (stopping one takes 0.5 s); each test gets its own board."""
    current: dict = {}
    srv = AdminServer("127.0.0.1:0")
    srv.route(PATH, lambda req: current["route"](req))
    srv.start()
    yield srv, current
    srv.stop()


@pytest.fixture()
def served(server) -> Iterator[tuple[str, PlacementBoard]]:
    srv, current = server
    board = PlacementBoard()
    current["route"] = placement_table_route(board, Metrics(CollectorRegistry()), max_wait_s=1.0)
    yield f"http://{srv.address}{PATH}", board
    board.close()


def test_no_table_yet_is_503_with_retry_after(served) -> None:
    url, _ = served
    r = requests.get(url, timeout=5)
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    assert "no placement table yet" in r.json()["error"]


def test_200_with_the_flat_table_and_its_version_as_etag(served) -> None:
    url, board = served
    table = nine_cell_table(7, grid_version=3)
    board.publish(table)
    r = requests.get(url, timeout=5)
    assert r.status_code == 200 and r.headers["ETag"] == '"7"' and r.headers["Content-Type"] == "application/json"
    assert r.headers["Cache-Control"] == "no-cache"
    doc = r.json()
    assert doc["schema"] == SCHEMA and doc["version"] == 7 and doc["grid_version"] == 3
    assert r.content.decode() == table.dumps(), "the canonical text the plug-in parses"
    assert PlacementTable.from_json(doc) == table
    flat = all(not isinstance(v, (dict, list)) or (isinstance(v, list) and all(
        isinstance(o, dict) and all(not isinstance(x, (dict, list)) for x in o.values()) for o in v)) for v in doc.values())
    assert flat, "values are scalars or arrays of flat objects (hand-written Java reader)"


@pytest.mark.parametrize("tag", ['"7"', 'W/"7"', "7", '"3", "7"', "*"])
def test_if_none_match_of_the_current_version_is_304_at_once_without_wait(served, tag: str) -> None:
    url, board = served
    board.publish(nine_cell_table(7))
    t0 = time.monotonic()
    r = requests.get(url, headers={"If-None-Match": tag}, timeout=5)
    assert r.status_code == 304 and r.headers["ETag"] == '"7"' and r.content == b""
    assert time.monotonic() - t0 < 1.0


def test_an_older_etag_gets_the_new_table_at_once(served) -> None:
    url, board = served
    board.publish(nine_cell_table(7))
    r = requests.get(url, params={"wait": 2}, headers={"If-None-Match": '"6"'}, timeout=5)
    assert r.status_code == 200 and r.json()["version"] == 7


def test_long_poll_times_out_with_304(served) -> None:
    url, board = served
    board.publish(nine_cell_table(7))
    t0 = time.monotonic()
    r = requests.get(url, params={"wait": 0.5}, headers={"If-None-Match": '"7"'}, timeout=5)
    waited = time.monotonic() - t0
    assert r.status_code == 304 and 0.45 <= waited < 2.0


def test_long_poll_is_capped(served) -> None:
    url, board = served
    board.publish(nine_cell_table(7))
    t0 = time.monotonic()
    r = requests.get(url, params={"wait": 3600}, headers={"If-None-Match": '"7"'}, timeout=10)
    assert r.status_code == 304 and time.monotonic() - t0 < 3.0, "max_wait_s=1 caps a wait of an hour"


def test_long_poll_answers_200_as_soon_as_a_new_version_is_published(served) -> None:
    url, board = served
    board.publish(nine_cell_table(7))
    threading.Timer(0.3, lambda: board.publish(nine_cell_table(8, busy=frozenset({"10.1.0.0:9866"})))).start()
    t0 = time.monotonic()
    r = requests.get(url, params={"wait": 1}, headers={"If-None-Match": '"7"'}, timeout=5)
    waited = time.monotonic() - t0
    assert r.status_code == 200 and r.headers["ETag"] == '"8"' and 0.25 <= waited < 0.95
    assert json.loads(r.content)["datanodes"][0]["busy"] is True


def test_waiting_for_the_first_table(served) -> None:
    url, board = served
    threading.Timer(0.3, lambda: board.publish(nine_cell_table(1))).start()
    r = requests.get(url, params={"wait": 2}, timeout=5)
    assert r.status_code == 200 and r.json()["version"] == 1


@pytest.mark.parametrize("wait", ["soon", "-1", "nan"])
def test_a_bad_wait_is_400(served, wait: str) -> None:
    url, board = served
    board.publish(nine_cell_table(1))
    r = requests.get(url, params={"wait": wait}, timeout=5)
    assert r.status_code == 400 and "wait=" in r.json()["error"]

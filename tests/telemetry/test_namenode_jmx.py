"""NameNodeJmxClient over real HTTP on loopback, against the recorded Hadoop 3.3.6 JMX."""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from harvester.telemetry.namenode_jmx import NameNodeJmxClient, NameNodeJmxError
from harvester.telemetry.namenode_model import INFO_QUERY, STATUS_QUERY, parse_namenode_info
from harvester.telemetry.source import TelemetryError
from nn_fakes import DN, FakeNameNode, info_doc, recorded_info_doc
from rm_fakes import closed_port_url


@pytest.fixture()
def nn() -> Iterator[FakeNameNode]:
    server = FakeNameNode()
    yield server
    server.close()


def test_reads_the_recorded_namenode_info(nn: FakeNameNode) -> None:
    client = NameNodeJmxClient([nn.url])
    info = client.namenode_info()
    assert nn.seen == [INFO_QUERY], "one URL: no HA status query"
    assert (info.url, info.version, info.started_ms, info.total_blocks) == (nn.url, "3.3.6", 1795431979089, 75)
    assert info.cluster_id == "CID-ab20810c-0fac-4cdb-b36c-046c2b53148d"
    (dn,) = info.live
    # values exactly as recorded in LiveNodes (a JSON string inside the JSON)
    assert (dn.name, dn.hostname, dn.xfer_addr, dn.rack) == ("localhost:9866", "localhost", "127.0.0.1:9866", "/default-rack")
    assert (dn.capacity_bytes, dn.remaining_bytes, dn.dfs_used_bytes) == (270553174016, 84638343168, 25284721)
    assert (dn.num_blocks, dn.admin_state, dn.last_block_report_min, dn.volume_failures) == (75, "In Service", 1, 0)
    assert info.dead == ()
    client.close()


def test_ha_picks_the_active_namenode_and_remembers_it() -> None:
    standby, active = FakeNameNode(state="standby"), FakeNameNode(info_doc([DN("dn1", "10.0.0.1")]), state="active")
    try:
        client = NameNodeJmxClient([standby.url, active.url])
        assert client.namenode_info().url == active.url
        assert standby.seen == [STATUS_QUERY], "the standby's LiveNodes are never read"
        client.namenode_info()
        assert standby.seen == [STATUS_QUERY], "the active one is asked first next time"
        assert active.seen == [STATUS_QUERY, INFO_QUERY, STATUS_QUERY, INFO_QUERY]
    finally:
        standby.close()
        active.close()


def test_no_active_namenode_names_each_problem() -> None:
    standby = FakeNameNode(state="standby")
    try:
        with pytest.raises(NameNodeJmxError) as err:
            NameNodeJmxClient([standby.url, closed_port_url()], connect_timeout_s=1).namenode_info()
        msg = str(err.value)
        assert "no active NameNode answered" in msg and "not the active NameNode" in msg and "cannot connect" in msg
        assert isinstance(err.value, TelemetryError), "a failed poll fails the tick like RM telemetry"
    finally:
        standby.close()


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, b"<html>boom</html>", "HTTP 500"),
        (200, b"not json", "HTTP 200 but not JSON"),
        (200, b'{"beans": []}', "no bean in the answer"),
        (200, json.dumps({"beans": [{"LiveNodes": "{oops"}]}).encode(), "LiveNodes is not valid JSON"),
    ],
)
def test_bad_answers_raise_with_the_url_and_the_problem(nn: FakeNameNode, status: int, body: bytes, expected: str) -> None:
    nn.status_code, nn.raw_body = status, body
    with pytest.raises(NameNodeJmxError, match=expected) as err:
        NameNodeJmxClient([nn.url]).namenode_info()
    assert nn.url in str(err.value)


def test_a_livenode_missing_its_xferaddr_is_named() -> None:
    doc = recorded_info_doc()
    doc["beans"][0]["LiveNodes"] = json.dumps({"h:9866": {"capacity": 1, "remaining": 1, "numBlocks": 0}})
    with pytest.raises(ValueError, match=r"LiveNodes\['h:9866'\]: xferaddr"):
        parse_namenode_info(doc, "u")


def test_read_timeout_is_reported() -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts the connection, never answers
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(NameNodeJmxError, match="timed out"):
            NameNodeJmxClient([url], connect_timeout_s=1, read_timeout_s=0.2).namenode_info()
    finally:
        listener.close()


def test_dead_nodes_and_builders_round_trip() -> None:
    doc = info_doc([DN("a", "10.0.0.1", blocks=5)], dead=[DN("b", "10.0.0.2")], total_blocks=9)
    info = parse_namenode_info(doc, "u")
    assert [d.xfer_addr for d in info.live] == ["10.0.0.1:9866"] and info.total_blocks == 9
    assert [(d.hostname, d.xfer_addr, d.last_contact_s) for d in info.dead] == [("b", "10.0.0.2:9866", 700)]

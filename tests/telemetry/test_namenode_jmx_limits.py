"""NameNode JMX under issue 15: a bounded answer, credentials never in messages, the configured
auth (SPNEGO when hdfs.auth is kerberos) applied to every request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from nn_fakes import DN, FakeNameNode, info_doc

from harvester.telemetry.namenode_jmx import NameNodeJmxClient, NameNodeJmxError


@pytest.fixture()
def nn() -> Iterator[FakeNameNode]:
    server = FakeNameNode(info_doc([DN(f"dn-{i}", f"10.0.0.{i}") for i in range(3)]))
    yield server
    server.close()


def test_an_answer_over_the_cap_fails_the_poll_with_a_clear_error(nn: FakeNameNode) -> None:
    nn.raw_body = b'{"beans": [' + b'{"x": 1},' * 200_000 + b'{}]}'
    client = NameNodeJmxClient([nn.url], max_response_bytes=64 * 1024)
    with pytest.raises(NameNodeJmxError, match="larger than 65536"):
        client.namenode_info()


def test_credentials_in_the_url_are_not_in_errors(nn: FakeNameNode) -> None:
    nn.status_code = 500
    host = nn.url.removeprefix("http://")
    client = NameNodeJmxClient([f"http://hdfs:s3cr3t@{host}"])
    with pytest.raises(NameNodeJmxError) as raised:
        client.namenode_info()
    assert "s3cr3t" not in str(raised.value) and "***@" in str(raised.value)


class _Token(requests.auth.AuthBase):
    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        r.headers["Authorization"] = "Negotiate dGVzdA=="
        return r


def test_the_configured_auth_is_applied_to_every_request(nn: FakeNameNode) -> None:
    info = NameNodeJmxClient([nn.url, nn.url], auth=_Token()).namenode_info()
    assert len(info.live) == 3
    assert nn.authorizations and set(nn.authorizations) == {"Negotiate dGVzdA=="}

"""Test doubles for the NameNode side: a real HTTP server on loopback answering `/jmx?qry=...`
with beans shaped exactly like the recorded Hadoop 3.3.6 NameNodeInfo
(../shared/fixtures/hdfs-3.3.6/nn-jmx-NameNodeInfo.json), and builders of such beans.

Fakes, not mocks (DESIGN.md principle 13): `NameNodeJmxClient` talks real HTTP to `FakeNameNode`.
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shared_paths import FIXTURES_DIR

INFO_QUERY = "Hadoop:service=NameNode,name=NameNodeInfo"
STATUS_QUERY = "Hadoop:service=NameNode,name=NameNodeStatus"


def recorded_info_doc() -> dict[str, Any]:
    """The recorded NameNodeInfo answer, parsed (a fresh copy each call)."""
    path = FIXTURES_DIR / "hdfs-3.3.6" / "nn-jmx-NameNodeInfo.json"
    return json.loads(path.read_text())


@dataclass(frozen=True)
class DN:
    """One DataNode for `info_doc`; the other LiveNodes fields are copied from the recording."""

    hostname: str
    ip: str
    rack: str = "/default-rack"
    capacity: int = 4 * 10**12
    remaining: int = 3 * 10**12
    blocks: int = 1000
    admin_state: str = "In Service"
    port: int = 9866  # xfer port: several DataNodes on one host differ only by it


def info_doc(nodes: list[DN], *, started_ms: int = 1795431979089, total_blocks: int | None = None,
             dead: list[DN] = ()) -> dict[str, Any]:
    """A NameNodeInfo answer like the recorded one, with these DataNodes in LiveNodes/DeadNodes."""
    doc = recorded_info_doc()
    bean = doc["beans"][0]
    template = next(iter(json.loads(bean["LiveNodes"]).values()))
    live = {}
    for n in nodes:
        entry = copy.deepcopy(template)
        used = n.capacity - n.remaining
        entry.update(infoAddr=f"{n.ip}:9864", xferaddr=f"{n.ip}:{n.port}", location=n.rack, capacity=n.capacity,
                     remaining=n.remaining, used=used, usedSpace=used, blockPoolUsed=used, numBlocks=n.blocks,
                     adminState=n.admin_state)
        live[f"{n.hostname}:{n.port}"] = entry
    bean["LiveNodes"] = json.dumps(live)
    bean["DeadNodes"] = json.dumps({f"{n.hostname}:{n.port}": {"lastContact": 700, "decommissioned": False,
                                                              "adminState": "In Service", "xferaddr": f"{n.ip}:{n.port}"}
                                    for n in dead})
    bean["NNStartedTimeInMillis"] = started_ms
    bean["TotalBlocks"] = sum(n.blocks for n in nodes) if total_blocks is None else total_blocks
    return doc


def status_doc(state: str) -> dict[str, Any]:
    return {"beans": [{"name": STATUS_QUERY, "modelerType": "org.apache.hadoop.hdfs.server.namenode.NameNode",
                       "NNRole": "NameNode", "HostAndPort": "localhost:8020", "SecurityEnabled": False,
                       "LastHATransitionTime": 0, "State": state}]}


class FakeNameNode:
    """Serves `/jmx?qry=<bean>` from `beans` (settable at any time); `seen` lists the queries."""

    def __init__(self, info: dict[str, Any] | None = None, *, state: str = "active") -> None:
        self._lock = threading.Lock()
        self.beans: dict[str, Any] = {INFO_QUERY: info or recorded_info_doc(), STATUS_QUERY: status_doc(state)}
        self.status_code = 200
        self.raw_body: bytes | None = None
        self.seen: list[str] = []
        self.authorizations: list[str | None] = []  # the Authorization header of each request
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                split = urlsplit(self.path)
                qry = (parse_qs(split.query).get("qry") or [""])[0]
                owner.authorizations.append(self.headers.get("Authorization"))
                status, body = owner._answer(split.path, qry)
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def _answer(self, path: str, qry: str) -> tuple[int, bytes]:
        with self._lock:
            self.seen.append(qry)
            if self.raw_body is not None:
                return self.status_code, self.raw_body
            if path != "/jmx":
                return 404, b"<html>Not Found</html>"
            doc = self.beans.get(qry, {"beans": []})  # the real servlet answers an empty list
            return self.status_code, json.dumps(doc, indent=4).encode()

    def set_info(self, doc: dict[str, Any]) -> None:
        with self._lock:
            self.beans[INFO_QUERY] = doc

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

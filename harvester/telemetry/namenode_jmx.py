"""A small typed client of the NameNode's JMX servlet (Hadoop 3.3.6), for HDFS-H's inputs.

`GET {nn_http}/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo` answers
`{"beans": [{...}]}` whose `LiveNodes` / `DeadNodes` are JSON STRINGS inside the JSON
(../shared/fixtures/hdfs-3.3.6/nn-jmx-NameNodeInfo.json). `LiveNodes` maps
`<hostname>:<xferPort>` to the DataNode's `xferaddr` (ip:port — how HDFS names a DataNode
and the id of `hdfs_placement.DataNode`), `location` (rack), `capacity`, `remaining`,
`used`, `numBlocks`, `lastContact` (seconds), `lastBlockReport` (minutes), `adminState`.
`NNStartedTimeInMillis` and `TotalBlocks` let the reimage heuristic tell a DataNode wipe
from a NameNode restart or a mass delete.

HA: with several URLs the active NameNode is the one whose
`Hadoop:service=NameNode,name=NameNodeStatus` bean says `"State": "active"` (a standby also
serves LiveNodes, but it may lag). The URL that answered last is asked first next time.

Errors: every failure raises `NameNodeJmxError` (a `TelemetryError`, so a tick fails with it)
whose message names the URL, the HTTP status when there was one and what was wrong. Every
request has a connect and a read timeout; GETs are not retried here — the polling loop's next
tick is the retry (with back-off while it fails, loop/runner.py). Answers are read as a stream
and refused past `max_response_bytes` (LiveNodes grows ~0.5 KB per DataNode). URLs in
messages are redacted (userinfo, secret query values). `auth` is a requests auth object:
SPNEGO with REQUIRED mutual authentication when `hdfs.auth: kerberos`
(rm_client.transport.spnego_auth). The transport is a `requests.Session` (the test seam:
tests serve the recorded JMX over real HTTP on loopback).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import requests
from rm_client.redact import redact_text, redact_url

from harvester.telemetry.namenode_model import INFO_QUERY, STATUS_QUERY, NameNodeInfo, parse_namenode_info
from harvester.telemetry.source import TelemetryError


class NameNodeJmxError(TelemetryError):
    """The NameNode could not be read: unreachable, an HTTP error, or an answer we cannot parse."""

    dependency = "namenode"


class NameNodeJmxClient:
    """Reads NameNodeInfo from the (active) NameNode; see the module docstring."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        connect_timeout_s: float = 3.0,
        read_timeout_s: float = 10.0,
        tls_verify: bool | str = True,
        session: requests.Session | None = None,
        max_response_bytes: int = 64 * 1024 * 1024,
        auth: Any = None,
    ) -> None:
        if not urls:
            raise ValueError("NameNodeJmxClient needs at least one NameNode URL")
        self.urls = tuple(u.rstrip("/") for u in urls)
        self._timeout = (connect_timeout_s, read_timeout_s)
        self._verify = tls_verify
        self._session = session if session is not None else requests.Session()
        self._owns_session = session is None
        self._max_bytes = max_response_bytes
        self._auth = auth
        self._lock = threading.Lock()
        self._preferred = 0

    def close(self) -> None:
        if self._owns_session:
            self._session.close()

    def _read(self, resp: requests.Response, where: str) -> bytes:
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            raise NameNodeJmxError(f"{where}: answer of {declared} bytes is larger than {self._max_bytes} "
                                   "(hdfs.max_response_mb): not read")
        chunks, size = [], 0
        for chunk in resp.iter_content(1 << 20):
            size += len(chunk)
            if size > self._max_bytes:
                raise NameNodeJmxError(f"{where}: answer larger than {self._max_bytes} bytes (hdfs.max_response_mb): "
                                       "reading stopped")
            chunks.append(chunk)
        return b"".join(chunks)

    def _get_bean_doc(self, url: str, query: str) -> Any:
        full = f"{url}/jmx"
        where = f"GET {redact_url(full)}?qry={query}"
        try:
            resp = self._session.get(full, params={"qry": query}, timeout=self._timeout, verify=self._verify,
                                     headers={"Accept": "application/json"}, stream=True, auth=self._auth)
            try:
                body = self._read(resp, where)
            finally:
                resp.close()
        except requests.Timeout as exc:
            raise NameNodeJmxError(f"{where}: timed out ({type(exc).__name__})") from None
        except requests.RequestException as exc:
            raise NameNodeJmxError(f"{where}: cannot connect ({type(exc).__name__}: {redact_text(str(exc))})") from None
        text = body[:200].decode("utf-8", "replace")
        if resp.status_code != 200:
            raise NameNodeJmxError(f"{where}: HTTP {resp.status_code}: {text!r}")
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise NameNodeJmxError(f"{where}: HTTP 200 but not JSON: {text!r}") from None

    def _is_active(self, url: str) -> bool:
        doc = self._get_bean_doc(url, STATUS_QUERY)
        beans = doc.get("beans") if isinstance(doc, dict) else None
        state = beans[0].get("State") if isinstance(beans, list) and beans and isinstance(beans[0], dict) else None
        return state == "active"

    def namenode_info(self) -> NameNodeInfo:
        """NameNodeInfo of the active NameNode (of the only one when a single URL is given)."""
        with self._lock:
            order = [self._preferred] + [i for i in range(len(self.urls)) if i != self._preferred]
        problems: list[str] = []
        for i in order:
            url = self.urls[i]
            try:
                if len(self.urls) > 1 and not self._is_active(url):
                    problems.append(f"{redact_url(url)}: not the active NameNode")
                    continue
                doc = self._get_bean_doc(url, INFO_QUERY)
            except NameNodeJmxError as exc:
                problems.append(str(exc))
                continue
            try:
                info = parse_namenode_info(doc, redact_url(url) or url)
            except ValueError as exc:
                raise NameNodeJmxError(f"GET {redact_url(url)}/jmx?qry={INFO_QUERY}: unexpected answer: {exc}") from None
            with self._lock:
                self._preferred = i
            return info
        raise NameNodeJmxError("no active NameNode answered: " + "; ".join(problems))

"""HTTP to the ResourceManager(s): timeouts, HA failover, retries with backoff, auth, TLS.

The ``requests.Session`` is injected (the test seam): tests mount an adapter or point the
client at a loopback server; production gets a plain session.

Rules (DESIGN.md principle 11):

* every attempt has ``(connect_timeout_s, read_timeout_s)``; redirects are never followed
  (a standby's 307 is a failover signal, and credentials never go to a host not configured);
* HA: URLs are tried starting with the last one that answered as active. A standby RM
  answers every REST path except ``/ws/v1/cluster/info`` with ``307`` + ``Location`` of the
  active RM and the text "This is standby RM. The redirect url is: ..." (or, with no active RM
  known, the text "There is no active RM right now" / "Can not find any active RM";
  Hadoop 3.3.6 ``RMWebAppFilter.doFilter``). Such an answer means the request was NOT
  executed, so the next URL is tried for every call, writes included;
* an attempt that provably never reached an RM (connection refused, DNS failure, connect
  timeout, TLS handshake failure, standby answer) is always safe to repeat elsewhere;
* an attempt that MAY have reached the RM (read timeout, connection reset mid-request,
  502/503/504 from a proxy) is repeated only for idempotent calls; non-idempotent calls raise
  at once so the caller can look before re-trying (never a blind second submit or signal);
* after a full round over all URLs fails, the next round waits uniform(0, min(max, base*2**n))
  ("full jitter") with the injected ``sleep``; at most ``max_retries`` extra rounds;
* a caller may bound a whole logical call, retries and back-off included, with
  ``with transport.deadline(seconds): ...`` (per thread): every attempt's connect and read
  timeouts are at most what is left, no round starts once it is spent, and a call whose
  deadline passed before it could be sent raises :class:`RMTimeoutError` with
  ``maybe_sent=False`` (the sidecar's actuator uses the remaining time of its tick);
* answers are read as a stream and refused once larger than ``max_response_bytes``
  (:class:`RMResponseTooLargeError`, the connection is closed): a huge answer costs at most
  that much memory;
* URLs in messages and logs are redacted (:mod:`rm_client.redact`); retries log at DEBUG
  (the caller decides what a failed call is worth in its log).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3

from rm_client.config import RMClientConfig
from rm_client.errors import (
    RMConfigError,
    RMConnectionError,
    RMError,
    RMResponseTooLargeError,
    RMStandbyError,
    RMTimeoutError,
    error_for_response,
)
from rm_client.redact import redact_url

__all__ = ["Answer", "Transport", "is_standby_answer"]

log = logging.getLogger("rm_client")

_GATEWAY = (502, 503, 504)  # a proxy in front of the RM: the RM may or may not have run it
_STANDBY_TEXTS = ("This is standby RM", "There is no active RM right now", "Can not find any active RM")


@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP answer that is not a transport failure nor a standby page."""

    status: int
    body: bytes
    headers: Mapping[str, str]
    rm_url: str
    attempts: int


def is_standby_answer(status: int, body: bytes) -> bool:
    """True for the pages RMWebAppFilter serves on a standby RM (307 or a 200 text page)."""
    head = body[:200].decode("utf-8", "replace").lstrip()
    if any(head.startswith(t) for t in _STANDBY_TEXTS):
        return True
    return status == 307


def spnego_auth(principal: str | None = None, keytab: str | None = None) -> Any:
    """SPNEGO (requests-gssapi, imported only when Kerberos is configured: optional extra) with
    REQUIRED mutual authentication — an answer whose server did not prove its identity is
    refused — and, when given, the credentials of `principal` from `keytab` (else the default
    credential cache of `kinit`). Errors never quote the keytab's path."""
    try:
        from requests_gssapi import REQUIRED, HTTPSPNEGOAuth  # type: ignore[import-not-found]
    except ImportError as exc:
        raise RMConfigError(
            "auth=kerberos needs the optional 'kerberos' extra (requests-gssapi): "
            "pip install 'harvester[kerberos]'; it is imported only when Kerberos is enabled"
        ) from exc
    creds = None
    if principal or keytab:
        try:
            import gssapi  # type: ignore[import-not-found]  # requests-gssapi's own dependency

            name = gssapi.Name(principal, gssapi.NameType.kerberos_principal) if principal else None
            creds = gssapi.Credentials(name=name, usage="initiate",
                                       store={"client_keytab": keytab} if keytab else None)
        except Exception as exc:  # gssapi.exceptions.GSSError and friends: one clear line
            text = str(exc).replace(keytab, "<keytab>") if keytab else str(exc)
            raise RMConfigError(f"kerberos: cannot get credentials for {principal or 'the default principal'} "
                                f"from the keytab: {text}") from None
    return HTTPSPNEGOAuth(mutual_authentication=REQUIRED, creds=creds)


def _never_connected(exc: requests.exceptions.ConnectionError) -> bool:
    """Refused / unresolvable / connect-timeout: urllib3's NewConnectionError (DNS failures
    are a subclass) or ConnectTimeoutError inside requests' MaxRetryError wrapper."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, urllib3.exceptions.NewConnectionError | urllib3.exceptions.ConnectTimeoutError)


class Transport:
    """Sends one logical call to the RM(s) and returns the first non-standby answer.

    ``sleep`` and ``rng`` are injected so tests run without waiting; ``session`` defaults to
    a new ``requests.Session`` owned (and closed) by the transport.
    """

    def __init__(
        self,
        config: RMClientConfig,
        session: requests.Session | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._session = session if session is not None else requests.Session()
        self._owns_session = session is None
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._monotonic = monotonic
        self._auth = spnego_auth(config.kerberos_principal, config.kerberos_keytab) if config.auth == "kerberos" else None
        self._lock = threading.Lock()
        self._active = 0
        self._local = threading.local()  # this thread's deadline (monotonic seconds) or None

    @property
    def active_url(self) -> str:
        """The URL that answered last as active (the first URL until then)."""
        with self._lock:
            return self.config.urls[self._active]

    def close(self) -> None:
        if self._owns_session:
            self._session.close()

    @contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """Every call of this thread inside the block ends within `seconds` (nested: the
        earlier deadline wins); see the module docstring."""
        prev = getattr(self._local, "ends", None)
        ends = self._monotonic() + max(0.0, seconds)
        self._local.ends = ends if prev is None else min(prev, ends)
        try:
            yield
        finally:
            self._local.ends = prev

    def _left(self) -> float | None:
        ends = getattr(self._local, "ends", None)
        return None if ends is None else ends - self._monotonic()

    def _read(self, resp: requests.Response, ctx: dict[str, Any]) -> bytes:
        """The body, read as a stream: refused past `max_response_bytes` or the deadline."""
        cap = self.config.max_response_bytes
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > cap:
            resp.close()
            raise RMResponseTooLargeError(
                f"answer of {int(declared)} bytes is larger than max_response_bytes={cap}: not read", **ctx)
        chunks, size = [], 0
        for chunk in resp.iter_content(1 << 20):
            size += len(chunk)
            if size > cap:
                resp.close()
                raise RMResponseTooLargeError(
                    f"answer larger than max_response_bytes={cap}: reading stopped at {size} bytes", **ctx)
            left = self._left()
            if left is not None and left <= 0:
                resp.close()
                raise RMTimeoutError(f"the call's deadline passed while reading the answer ({size} bytes so far)",
                                     maybe_sent=True, **ctx)
            chunks.append(chunk)
        return b"".join(chunks)

    def backoff_s(self, round_no: int) -> float:
        """Full-jitter delay before retry round ``round_no`` (0-based)."""
        cap = min(self.config.backoff_max_s, self.config.backoff_base_s * (2 ** round_no))
        return self._rng.uniform(0.0, cap)

    def _params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        out = dict(params or {})
        if self.config.auth == "simple" and self.config.user:
            out["user.name"] = self.config.user
        return out

    def send(
        self,
        method: str,
        path: str,
        *,
        idempotent: bool,
        params: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        reject: Callable[[Answer], bool] | None = None,
        only_url: str | None = None,
    ) -> Answer:
        """Send ``method path`` and return the answer (any status; the caller interprets it).

        ``reject(answer)`` marks a normal-looking answer as coming from a standby (used for
        ``/info``, which a standby answers itself). ``only_url`` pins one URL, no retries.
        Raises :class:`RMTransportError` subclasses or :class:`RMStandbyError`.
        """
        cfg = self.config
        urls = (only_url.rstrip("/"),) if only_url else cfg.urls
        rounds = 1 if only_url else cfg.max_retries + 1
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        query = self._params(params)
        attempts = 0
        last: RMError | None = None
        for round_no in range(rounds):
            if round_no:
                delay = self.backoff_s(round_no - 1)
                left = self._left()
                if left is not None and delay >= left:
                    break  # no time for another round: the last error stands
                log.debug("rm_client: %s %s: retry round %d in %.2fs after: %s", method, path, round_no, delay, last)
                self._sleep(delay)
            with self._lock:
                start = 0 if only_url else self._active
            order = [(start + k) % len(urls) for k in range(len(urls))]
            while order:
                i = order.pop(0)
                base = urls[i]
                left = self._left()
                if left is not None and left <= 0:
                    if last is None:
                        last = RMTimeoutError("the call's deadline passed before it could be sent", maybe_sent=False,
                                              method=method, path=path, rm_url=base, attempts=attempts)
                    order.clear()
                    break
                attempts += 1
                ctx = {"method": method, "path": path, "rm_url": base, "attempts": attempts}
                maybe_sent = True
                connect_s, read_s = cfg.connect_timeout_s, cfg.read_timeout_s
                if left is not None:
                    connect_s, read_s = min(connect_s, left), min(read_s, left)
                try:
                    resp = self._session.request(
                        method, base + path, params=query, data=body, headers=headers,
                        timeout=(connect_s, read_s), allow_redirects=False,
                        verify=cfg.tls_verify, cert=cfg.client_cert, auth=self._auth, stream=True,
                    )
                    try:
                        content = self._read(resp, {k: v for k, v in ctx.items() if k != "attempts"}
                                             | {"status": resp.status_code})
                    finally:
                        resp.close()
                except (RMResponseTooLargeError, RMTimeoutError):
                    raise  # the RM answered (too much, or too slowly): not a reason to ask again
                except requests.exceptions.ConnectTimeout as exc:
                    maybe_sent = False
                    last = RMTimeoutError(f"connect timeout after {connect_s:.3g}s ({exc})",
                                          maybe_sent=False, **ctx)
                except requests.exceptions.ReadTimeout as exc:
                    last = RMTimeoutError(f"no answer within {read_s:.3g}s ({exc})", maybe_sent=True, **ctx)
                except requests.exceptions.SSLError as exc:
                    maybe_sent = False
                    last = RMConnectionError(f"TLS handshake failed: {exc}", maybe_sent=False, **ctx)
                except requests.exceptions.ConnectionError as exc:
                    maybe_sent = not _never_connected(exc)
                    last = RMConnectionError(f"connection failed: {exc}", maybe_sent=maybe_sent, **ctx)
                except requests.exceptions.RequestException as exc:
                    last = RMConnectionError(f"HTTP exchange failed: {exc}", maybe_sent=True, **ctx)
                else:
                    answer = Answer(resp.status_code, content, resp.headers, base, attempts)
                    if is_standby_answer(resp.status_code, content) or (reject is not None and reject(answer)):
                        maybe_sent = False
                        location = resp.headers.get("Location")
                        last = RMStandbyError(
                            "answered by a standby ResourceManager", location=location,
                            body=content[:2000].decode("utf-8", "replace"),
                            method=method, path=path, rm_url=base, status=resp.status_code,
                        )
                        self._prefer_location(order, urls, location)
                        log.info("rm_client: %s is standby; trying the next RM URL", redact_url(base))
                    elif resp.status_code in _GATEWAY:
                        last = error_for_response(method=method, path=path, status=resp.status_code,
                                                  body=content, rm_url=base)
                    else:
                        if not only_url:
                            with self._lock:
                                self._active = i
                        return answer
                if maybe_sent and not idempotent:
                    log.debug("rm_client: %s %s may have reached %s; not repeating a non-idempotent call",
                              method, path, redact_url(base))
                    assert last is not None
                    raise last
        assert last is not None
        if hasattr(last, "attempts"):
            last.attempts = attempts
        raise last

    @staticmethod
    def _prefer_location(order: list[int], urls: tuple[str, ...], location: str | None) -> None:
        """Move the configured URL the standby redirected to (same scheme/host/port) first."""
        if not location:
            return
        try:
            target = urlsplit(location)
            wanted = (target.scheme, target.hostname, target.port)
            for j in list(order):
                u = urlsplit(urls[j])
                if (u.scheme, u.hostname, u.port) == wanted:
                    order.remove(j)
                    order.insert(0, j)
                    return
        except ValueError:  # a malformed Location (bad port): keep the configured order
            return

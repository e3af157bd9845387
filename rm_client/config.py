"""Client settings. The sidecar's YAML section ``rm:`` maps one-to-one onto
:class:`RMClientConfig` (``ca_bundle`` -> ``tls_verify=<path>``)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from rm_client.errors import RMConfigError
from rm_client.redact import redact_url

__all__ = ["RMClientConfig"]


@dataclass(frozen=True)
class RMClientConfig:
    """How to reach the ResourceManager(s).

    ``urls``: every RM web address of an HA pair (``http://rm1:8088``); the active one is
    found and remembered. ``user``: simple-auth identity sent as ``?user.name=`` on every call
    (without it the RM treats writes as the static user ``dr.who``); ignored with Kerberos.
    Timeouts are per HTTP attempt. ``max_retries``: extra rounds over all URLs for idempotent
    calls (and for any call whose request provably never reached an RM); delays are "full
    jitter": uniform(0, min(backoff_max_s, backoff_base_s * 2**round)). ``tls_verify``: True,
    False, or a CA bundle path; ``client_cert``: a PEM path or (cert, key) paths.
    ``max_response_bytes``: an answer larger than this is refused while it is read
    (:class:`~rm_client.errors.RMResponseTooLargeError`); a 10,000-node ``/nodes`` is ~20 MB.
    Kerberos (``auth="kerberos"``, SPNEGO with REQUIRED mutual authentication): the
    credentials of ``kerberos_principal`` from ``kerberos_keytab`` when given, else the
    default credential cache (``kinit``).
    """

    urls: tuple[str, ...]
    user: str | None = None
    connect_timeout_s: float = 3.0
    read_timeout_s: float = 10.0
    max_retries: int = 3
    backoff_base_s: float = 0.2
    backoff_max_s: float = 5.0
    auth: Literal["simple", "kerberos"] = "simple"
    tls_verify: bool | str = True
    client_cert: str | tuple[str, str] | None = None
    max_response_bytes: int = 64 * 1024 * 1024
    kerberos_principal: str | None = None
    kerberos_keytab: str | None = None

    def __post_init__(self) -> None:
        urls = (self.urls,) if isinstance(self.urls, str) else self.urls
        if not isinstance(urls, Sequence) or not urls:
            raise RMConfigError("urls: at least one ResourceManager URL is required")
        clean = []
        for i, url in enumerate(urls):
            if not isinstance(url, str):
                raise RMConfigError(f"urls[{i}]: must be a string, got {type(url).__name__}")
            try:  # a malformed URL (unclosed IPv6 bracket, bad port) is refused, its password not shown
                parts = urlsplit(url.strip())
                parts.port  # noqa: B018 (validates the port)
            except ValueError as exc:
                raise RMConfigError(f"urls[{i}]: {redact_url(url)!r} is not a URL ({exc})") from None
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise RMConfigError(f"urls[{i}]: {redact_url(url)!r} is not an http(s)://host:port URL")
            if parts.query or parts.fragment:
                raise RMConfigError(f"urls[{i}]: {redact_url(url)!r} must not carry a query or fragment")
            clean.append(url.strip().rstrip("/"))
        object.__setattr__(self, "urls", tuple(clean))
        if self.user is not None and (not isinstance(self.user, str) or not self.user.strip()):
            raise RMConfigError("user: must be a non-empty user name or null")
        for name in ("connect_timeout_s", "read_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise RMConfigError(f"{name}: must be a number of seconds > 0, got {value!r}")
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise RMConfigError(f"max_retries: must be an integer >= 0, got {self.max_retries!r}")
        for name in ("backoff_base_s", "backoff_max_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise RMConfigError(f"{name}: must be a number of seconds >= 0, got {value!r}")
        for name in ("connect_timeout_s", "read_timeout_s", "backoff_base_s", "backoff_max_s"):
            if not math.isfinite(getattr(self, name)):
                raise RMConfigError(f"{name}: must be a finite number of seconds, got {getattr(self, name)!r}")
        mrb = self.max_response_bytes
        if isinstance(mrb, bool) or not isinstance(mrb, int) or mrb < 1024:
            raise RMConfigError(f"max_response_bytes: must be an integer >= 1024, got {mrb!r}")
        if self.backoff_base_s > self.backoff_max_s:
            raise RMConfigError("backoff_base_s: must not exceed backoff_max_s")
        if self.auth not in ("simple", "kerberos"):
            raise RMConfigError(f"auth: must be 'simple' or 'kerberos', got {self.auth!r}")
        if self.kerberos_keytab is not None and not os.path.isfile(self.kerberos_keytab):
            raise RMConfigError("kerberos_keytab: the keytab file does not exist")  # the path is not echoed
        if isinstance(self.tls_verify, str) and not os.path.exists(self.tls_verify):
            raise RMConfigError(f"tls_verify: CA bundle {self.tls_verify!r} does not exist")
        if not isinstance(self.tls_verify, bool | str):
            raise RMConfigError("tls_verify: must be true, false or a CA bundle path")
        if isinstance(self.client_cert, tuple | list) and len(self.client_cert) != 2:
            raise RMConfigError("client_cert: give one PEM path or a (certificate, key) pair of paths")
        certs = (self.client_cert,) if isinstance(self.client_cert, str) else (self.client_cert or ())
        for path in certs:
            if not isinstance(path, str) or not os.path.exists(path):
                raise RMConfigError(f"client_cert: {path!r} does not exist")

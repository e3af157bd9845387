"""The one exception tree of ``rm_client`` and the parser for the RM's error bodies.

Every failure of a call surfaces as a subclass of :class:`RMError`; nothing else escapes a
client method or a decoder (no ``KeyError``/``TypeError``/``requests`` exceptions)::

    RMError                          base; carries method, path, status, remote class/message
    ├── RMConfigError                the client configuration is unusable (no URLs, missing
    │                                kerberos extra, bad timeouts)
    ├── RMValidationError            a write was refused LOCALLY, before any HTTP was sent;
    │                                ``problems`` names every wrong field (also a ValueError)
    ├── RMTransportError             no usable HTTP answer from any RM URL
    │   ├── RMConnectionError        refused / DNS / TLS handshake / reset
    │   └── RMTimeoutError           connect or read timeout
    ├── RMHTTPError                  the RM answered with an error status (other codes land here)
    │   ├── RMBadRequestError        400 (validation inside the RM, bad JSON, labels disabled)
    │   ├── RMAuthError              401 / 403
    │   │   ├── RMUnauthorizedError  401 (SPNEGO negotiation failed or missing)
    │   │   └── RMForbiddenError     403 (ACLs; delegation tokens on a simple-auth channel)
    │   ├── RMNotFoundError          404 (unknown app, reservation id the RM cannot find)
    │   ├── RMServerError            5xx (3.3.6 also answers 500 for a wrong HTTP method,
    │   │                            a move to a parent queue, a priority change in a
    │   │                            reservation queue, an interpreter ordinal out of range)
    │   └── RMStandbyError           answered by a standby RM (307 redirect or its text page)
    │                                and no active RM was reachable
    └── RMDecodeError                a 2xx body that is not JSON or not the expected shape
        └── RMResponseTooLargeError  an answer over ``max_response_bytes`` (reading stopped)

Error bodies (recorded from a real 3.3.6 RM, fixtures ``captures/err-*``) come in two forms,
both usually served as ``application/json``:

* ``{"RemoteException":{"exception":..,"message":..,"javaClassName":..}}`` (``message`` may be
  absent, e.g. the 500 for a wrong HTTP method);
* plain text, e.g. ``Invalid ContainerId: container_bogus`` (container signal),
  ``This API only supports to retrieve scheduler configuration ...`` (scheduler-conf),
  ``Delegation token operations can only be carried out on a Kerberos ...`` (403).

:func:`parse_error_body` understands both; :func:`error_for_response` picks the class.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rm_client.redact import redact_text, redact_url

__all__ = [
    "Problem",
    "RMAuthError",
    "RMBadRequestError",
    "RMConfigError",
    "RMConnectionError",
    "RMDecodeError",
    "RMError",
    "RMForbiddenError",
    "RMHTTPError",
    "RMNotFoundError",
    "RMResponseTooLargeError",
    "RMServerError",
    "RMStandbyError",
    "RMTimeoutError",
    "RMTransportError",
    "RMUnauthorizedError",
    "RMValidationError",
    "RemoteError",
    "error_for_response",
    "parse_error_body",
]

_SNIPPET = 300


class RMError(Exception):
    """Base of every rm_client failure.

    Attributes (``None`` when not applicable): ``method`` and ``path`` of the call,
    ``rm_url`` (the RM base URL that answered or was tried last), ``status`` (HTTP status),
    ``remote_exception`` (short Java class, e.g. ``BadRequestException``),
    ``remote_java_class`` (fully qualified), ``remote_message`` (the RM's message or the
    plain-text body), ``hint`` (what an operator can do, for known 3.3.6 pitfalls).
    Credentials never reach the text: ``rm_url`` and ``message`` are redacted
    (:mod:`rm_client.redact`: URL userinfo, secret query values).
    """

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        path: str | None = None,
        rm_url: str | None = None,
        status: int | None = None,
        remote_exception: str | None = None,
        remote_java_class: str | None = None,
        remote_message: str | None = None,
        hint: str | None = None,
    ) -> None:
        message = redact_text(message)
        super().__init__(message)
        self.message = message
        self.method = method
        self.path = path
        self.rm_url = rm_url
        self.status = status
        self.remote_exception = remote_exception
        self.remote_java_class = remote_java_class
        self.remote_message = remote_message
        self.hint = hint

    @property
    def rm_url(self) -> str | None:
        return self._rm_url

    @rm_url.setter
    def rm_url(self, url: str | None) -> None:
        self._rm_url = redact_url(url)

    def __str__(self) -> str:
        parts = []
        if self.method or self.path:
            parts.append(f"{self.method or '?'} {self.path or '?'}")
        if self.status is not None:
            parts.append(f"-> HTTP {self.status}")
        if self.remote_exception:
            parts.append(self.remote_exception + ":")
        parts.append(self.message)
        text = " ".join(parts)
        if self.rm_url:
            text += f" [rm={self.rm_url}]"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class RMConfigError(RMError, ValueError):
    """The client configuration cannot work (raised at construction, never mid-call)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One wrong field of a refused write: ``field`` is a dotted path in the call's arguments."""

    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class RMValidationError(RMError, ValueError):
    """A write refused before any HTTP request was made; ``problems`` lists every wrong field."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...], *, method: str | None = None,
                 path: str | None = None) -> None:
        self.problems = tuple(problems)
        text = "refused before sending: " + "; ".join(str(p) for p in self.problems)
        super().__init__(text, method=method, path=path)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(p.field for p in self.problems)


class RMTransportError(RMError):
    """No usable HTTP answer. ``maybe_sent`` tells whether the RM may have received the request
    (False for refused connections and connect timeouts: safe to send again anywhere);
    ``attempts`` counts the HTTP attempts made over all URLs and retries."""

    def __init__(self, message: str, *, maybe_sent: bool, attempts: int = 1, **context: Any) -> None:
        super().__init__(message, **context)
        self.maybe_sent = maybe_sent
        self.attempts = attempts


class RMConnectionError(RMTransportError):
    """Connection refused, name resolution, TLS handshake failure, or the peer reset it."""


class RMTimeoutError(RMTransportError):
    """The connect or read timeout of :class:`~rm_client.config.RMClientConfig` expired."""


class RMHTTPError(RMError):
    """The RM answered with an error status. ``body`` keeps the raw text (truncated)."""

    def __init__(self, message: str, *, body: str = "", **context: Any) -> None:
        super().__init__(message, **context)
        self.body = body


class RMBadRequestError(RMHTTPError):
    """HTTP 400."""


class RMAuthError(RMHTTPError):
    """HTTP 401 or 403."""


class RMUnauthorizedError(RMAuthError):
    """HTTP 401: authentication missing or failed (SPNEGO)."""


class RMForbiddenError(RMAuthError):
    """HTTP 403: authenticated but not allowed (queue/app ACLs, delegation-token rules)."""


class RMNotFoundError(RMHTTPError):
    """HTTP 404."""


class RMServerError(RMHTTPError):
    """HTTP 5xx."""


class RMStandbyError(RMHTTPError):
    """A standby RM answered (RMWebAppFilter: 307 + ``Location`` of the active RM, or a text
    page "There is no active RM right now") and no other configured URL was active."""

    def __init__(self, message: str, *, location: str | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.location = location


class RMDecodeError(RMError):
    """A successful answer whose body is not JSON or not the shape of the endpoint.

    ``where`` is the JSON path of the offending value (e.g. ``nodes.node[3].totalResource``);
    ``snippet`` the start of the body."""

    def __init__(self, message: str, *, where: str = "", snippet: str = "", **context: Any) -> None:
        full = f"{where}: {message}" if where else message
        super().__init__(full, **context)
        self.where = where
        self.snippet = snippet


class RMResponseTooLargeError(RMDecodeError):
    """The answer was larger than ``RMClientConfig.max_response_bytes``: reading stopped there
    (and the connection was closed) instead of holding an unbounded body in memory."""


@dataclass(frozen=True, slots=True)
class RemoteError:
    """The parsed error body: the RemoteException triple, or ``message`` = the plain text."""

    exception: str | None
    java_class_name: str | None
    message: str
    is_remote_exception: bool


def parse_error_body(body: bytes | str) -> RemoteError:
    """Parse an RM error body of either form (never raises).

    JSON ``{"RemoteException":{...}}`` gives the three fields (a missing ``message`` becomes
    ``""``); anything else (plain text, HTML, empty) is returned stripped as ``message``.
    """
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(stripped)
        except (ValueError, RecursionError):
            doc = None
        remote = doc.get("RemoteException") if isinstance(doc, dict) else None
        if isinstance(remote, dict):
            exc = remote.get("exception")
            cls = remote.get("javaClassName")
            msg = remote.get("message")
            return RemoteError(
                exception=exc if isinstance(exc, str) else None,
                java_class_name=cls if isinstance(cls, str) else None,
                message=msg if isinstance(msg, str) else "",
                is_remote_exception=True,
            )
    return RemoteError(exception=None, java_class_name=None, message=stripped, is_remote_exception=False)


_BY_STATUS: dict[int, type[RMHTTPError]] = {
    400: RMBadRequestError,
    401: RMUnauthorizedError,
    403: RMForbiddenError,
    404: RMNotFoundError,
}


def error_for_response(
    *,
    method: str,
    path: str,
    status: int,
    body: bytes | str,
    rm_url: str | None = None,
    hint: str | None = None,
) -> RMHTTPError:
    """Build the :class:`RMHTTPError` subclass for an error status, with the parsed body."""
    remote = parse_error_body(body)
    cls: type[RMHTTPError] = _BY_STATUS.get(status) or (RMServerError if status >= 500 else RMHTTPError)
    message = remote.message or f"HTTP {status} with an empty body"
    return cls(
        message,
        body=remote.message[:_SNIPPET] if not remote.is_remote_exception else _text(body)[:_SNIPPET],
        method=method,
        path=path,
        rm_url=rm_url,
        status=status,
        remote_exception=remote.exception,
        remote_java_class=remote.java_class_name,
        remote_message=remote.message,
        hint=hint,
    )


def _text(body: bytes | str) -> str:
    return body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body

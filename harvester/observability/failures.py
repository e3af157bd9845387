"""Failures told to people in one line: what failed, where, what to check — no library internals.

A refused connection surfaces from `requests` as "HTTPConnectionPool(host=..., port=...): Max
retries exceeded with url: ... (Caused by NewConnectionError('<urllib3.connection...>: Failed to
establish a new connection: [Errno 111] Connection refused'))", and rm_client keeps that text in
its messages. `cause(exc)` reduces any such failure (a requests/urllib3 exception, an OSError, an
rm_client `RMTransportError`, or their text) to a plain phrase such as "connection refused";
`one_line(...)` builds the sentence the CLI prints and the log shows. Import-light (no requests
import): the CLI uses it before anything heavy is loaded.
"""

from __future__ import annotations

import errno
import re

#: (pattern in the failure's text, plain phrase), first match wins.
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), phrase) for p, phrase in (
    (r"connection refused|errno 111\b|ECONNREFUSED", "connection refused (nothing listens there)"),
    (r"name or service not known|nodename nor servname|temporary failure in name resolution|"
     r"getaddrinfo failed|no address associated|NameResolutionError|errno -[23]\b", "host name not found"),
    (r"certificate verify failed|CERTIFICATE_VERIFY_FAILED|SSLError|ssl\.|TLS", "TLS handshake failed"),
    (r"read timed out|no answer within", "no answer in time (read timeout)"),
    (r"connect timeout|connection to .* timed out|ConnectTimeout", "connect timeout (host down or filtered?)"),
    (r"timed out|timeout", "timed out"),
    (r"no route to host|errno 113\b", "no route to host"),
    (r"network is unreachable|errno 101\b", "network unreachable"),
    (r"connection reset|connection aborted|remote ?disconnected|remote end closed|broken pipe|errno 104\b",
     "the connection was closed by the other side"),
    (r"address already in use|errno 98\b", "address already in use"),
))

_ERRNO_PHRASES = {errno.ECONNREFUSED: "connection refused (nothing listens there)", errno.EHOSTUNREACH: "no route to host",
                  errno.ENETUNREACH: "network unreachable", errno.ECONNRESET: "the connection was closed by the other side",
                  errno.ETIMEDOUT: "timed out", errno.EADDRINUSE: "address already in use"}


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception, its causes/contexts and the exceptions urllib3 wraps (`.reason`, args)."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 12:
        e = todo.pop(0)
        if any(e is s for s in seen):
            continue
        seen.append(e)
        for nxt in (e.__cause__, e.__context__, getattr(e, "reason", None), *getattr(e, "args", ())):
            if isinstance(nxt, BaseException):
                todo.append(nxt)
    return seen


def cause(exc: BaseException | str) -> str:
    """A plain phrase for why a call failed (module docstring); the exception's own first line,
    without wrapper text, when no known cause is recognised."""
    if isinstance(exc, str):
        texts = [exc]
    else:
        chain = _chain(exc)
        for e in chain:
            if isinstance(e, OSError) and e.errno in _ERRNO_PHRASES:
                return _ERRNO_PHRASES[e.errno]
        texts = [f"{type(e).__name__}: {e}" for e in chain]
    joined = " | ".join(texts)
    for pattern, phrase in _PHRASES:
        if pattern.search(joined):
            return phrase
    first = texts[-1] if texts else ""
    first = first.splitlines()[0] if first else "unknown error"
    # "X(host=..., port=...): Max retries exceeded with url: /p (Caused by Y('...'))" -> Y's text
    inner = re.search(r"Caused by \w+\((?:'|\")?(?:<[^>]*>: )?(.*?)(?:'|\")?\)\)?$", first)
    return (inner.group(1) if inner else first)[:200]


def is_network_failure(exc: BaseException) -> bool:
    """True for failures to reach a peer (refused, DNS, TLS, timeouts, resets) — the kind an
    operator fixes outside Harvester, shown without a traceback."""
    names = {c.__name__ for e in _chain(exc) for c in type(e).__mro__}
    return bool(names & {"RMTransportError", "ConnectionError", "Timeout", "TimeoutError", "NameNodeJmxError",
                         "URLError", "ConnectionRefusedError", "socket.gaierror", "gaierror", "SSLError"})


def summary(exc: BaseException) -> str:
    """"<call> at <where>: <cause>" from the first exception of the chain carrying its call's
    context (rm_client's method/path/rm_url, a client's url), else "<Type>: <cause>"."""
    for e in _chain(exc):
        method, path = getattr(e, "method", None), getattr(e, "path", None)
        where = getattr(e, "rm_url", None) or getattr(e, "url", None)
        if (method and path) or isinstance(where, str):
            what = f"{method} {path}" if method and path else type(e).__name__
            return f"{what}{f' at {where}' if isinstance(where, str) else ''}: {cause(exc)}"
    return f"{type(exc).__name__}: {cause(exc)}"


def one_line(what: str, where: str, exc: BaseException | str, check: str = "") -> str:
    """"<what> at <where> failed: <cause>; check <check>" on one line."""
    text = f"{what} at {where} failed: {cause(exc)}"
    return f"{text}; check {check}" if check else text


def answer_line(status: int, body: str) -> str:
    """An HTTP error answer on one line: the JSON document's `error` when there is one, else the
    body with its whitespace collapsed (at most 200 characters)."""
    import json

    text = body.strip()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        text = doc["error"]
    return f"HTTP {status}: {' '.join(text.split())[:200]}"

"""What the `harvester` subcommands share: exit codes, the one-line failure, the sidecar's admin
URL and reading one JSON document from it (import-light: requests is loaded when a call is made).
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

EXIT_OK, EXIT_FAILURE, EXIT_CONFIG = 0, 1, 2

#: What to check when the running sidecar cannot be reached.
CHECK_SIDECAR = "that `harvester serve` runs with these settings (server.admin_listen), or give --admin URL"


class SidecarError(Exception):
    """The running sidecar could not be asked (one line: what, where, why, what to check)."""


class AdminRefused(SidecarError):
    """The sidecar answered 401/403: it was reached, and refused who asked (one line naming
    the token settings)."""


def refusal_line(method: str, url: str, status: int, body: str) -> str:
    """A 401 / 403 of the admin face told as what it is: authentication or authorization
    refused, and where the token comes from (docs/security.md)."""
    from harvester.admin_token import TOKEN_SETTINGS
    from harvester.observability.failures import answer_line

    if status == 401:
        why = (f"authentication refused (no or wrong bearer token); give the token `harvester serve` uses: "
               f"{TOKEN_SETTINGS}")
    else:
        why = ("authorization refused: the sidecar has no admin token configured, so it refuses this call from "
               "everyone; set server.auth.token_file (or $HARVESTER_ADMIN_TOKEN) for `harvester serve`, restart it, and "
               f"give the CLI the same token ({TOKEN_SETTINGS})")
    return f"{method} {url}: {answer_line(status, body)}: {why}"


def fail(code: int, message: str) -> int:
    """Print the one-line failure (URL userinfo masked: a URL given with a password, e.g. to
    --admin, is echoed by the messages of requests) and return `code`."""
    from rm_client.redact import redact_text

    print(f"harvester: {redact_text(message)}", file=sys.stderr)
    return code


def admin_base(given: str | None, listen: str | None) -> str:
    """The sidecar's admin base URL: `given` (--admin/--url), else the settings' admin address
    with a wildcard host (0.0.0.0, ::) asked on loopback."""
    if given:
        return given.rstrip("/")
    host, _, port = (listen or "").rpartition(":")
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def cli_token(given: Any, settings: Any) -> str | None:
    """The bearer token this command sends (`given`: its --token-file): admin_token.client_token
    for these settings; `TokenError` when the configured one is unusable."""
    from harvester.admin_token import client_token

    return client_token(given, settings.server.auth.token_file, embedded=settings.cluster.source == "embedded")


def sidecar_json(base: str, path: str, *, method: str = "GET", timeout_s: float = 10.0,
                 ok: tuple[int, ...] = (200,), token: str | None = None, body: Any = None) -> tuple[int, Any]:
    """(status, document) of one admin call, with `Authorization: Bearer <token>` when given
    (admin writes; reads closed by server.auth.public_reads) and `body` as JSON; `AdminRefused`
    on 401/403, `SidecarError` when it cannot be made or the answer is another status than `ok`
    and 404 (which callers read as "no such route or subject")."""
    import requests

    from harvester.observability.failures import answer_line, one_line

    url = base + path
    try:
        resp = requests.request(method, url, timeout=timeout_s, json=body,
                                headers={"Authorization": f"Bearer {token}"} if token else None)
    except requests.RequestException as exc:
        raise SidecarError(one_line(f"{method} {path}", base, exc, CHECK_SIDECAR)) from None
    if resp.status_code in (401, 403):
        raise AdminRefused(refusal_line(method, url, resp.status_code, resp.text))
    if resp.status_code not in ok and resp.status_code != 404:
        raise SidecarError(f"{method} {url}: {answer_line(resp.status_code, resp.text)}")
    try:
        return resp.status_code, resp.json()
    except ValueError:
        raise SidecarError(f"{method} {url}: HTTP {resp.status_code} but not JSON") from None



def stop_on_signals() -> threading.Event:
    """An event SIGTERM or SIGINT sets (installed before the servers start, so an early signal counts)."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def wait_until(stop: threading.Event) -> None:
    """Block until `stop` is set, waking every second: a signal the kernel delivers to another
    thread (gRPC's, the servers') does not interrupt an untimed wait in the main thread, so Python
    would never run the handler and the process would not stop (seen under load in CI)."""
    while not stop.wait(1.0):
        pass

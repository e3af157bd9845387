"""Checks a settings file passes only if `serve` can start with it (issue 15: 14 of 46 broken
settings got through `config check`). `harvester config check` and `harvester serve` run the
same `preflight(settings)`. Whether the listen ports are free is not a property of the file (a
sidecar started from it holds them): `serve` checks it when it starts, `check --ports` on demand
(binding each address for a moment), with the same one-line error. Two listen addresses on one
port are refused by the schema (config_base.listens_clash).

What the schema (config*.py) cannot see:
- a non-loopback listen address without TLS (`server.tls`) AND an admin token is refused,
  unless `server.allow_insecure_remote` (the embedded emulator's address too: it has no auth);
- the admin token (`$HARVESTER_ADMIN_TOKEN` / `server.auth.token_file`) is usable;
- the TLS files are a certificate chain and its key (and a CA bundle for mutual TLS);
- the SQLite store: its folder takes a new file, an existing file opens for writing and is a
  SQLite database;
- `estimator.open_writes` on a non-loopback `estimator.listen` (no token guards its writes);
- Kerberos (`rm.auth` / `hdfs.auth: kerberos`) has its extra (requests-gssapi) installed;
- each listen host is this machine's (bound on port 0); with `ports=True` (`serve` at start, `check
  --ports`) each listen address can be bound (a port in use).
Each problem is one line naming its key; `PreflightError` joins them with "; ".
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import socket
import ssl
import tempfile
from collections.abc import Mapping

from harvester.admin_token import TokenError, read_admin_token
from harvester.config import Settings


class PreflightError(Exception):
    """`serve` would not start with these settings (one line)."""


def is_loopback(host: str) -> bool:
    """True when every address `host` names is this machine's loopback."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0].split("%")[0]).is_loopback for i in infos)


def listen_addresses(settings: Settings) -> dict[str, str]:
    """Every address `serve` listens on, by setting, in the order it binds them."""
    out = {"embedded.listen": settings.embedded.listen} if settings.cluster.source == "embedded" else {}
    out |= {"server.admin_listen": settings.server.admin_listen, "server.grpc_listen": settings.server.grpc_listen}
    if settings.estimator.enabled:
        out["estimator.listen"] = settings.estimator.listen
    return out


def _exposure(settings: Settings, token: str | None, addresses: Mapping[str, str]) -> list[str]:
    s = settings.server
    if s.allow_insecure_remote:
        return []
    problems = []
    for key, listen in addresses.items():
        host = listen.rpartition(":")[0]
        if is_loopback(host):
            continue
        if key == "embedded.listen":
            problems.append(f"{key}: {host} is not loopback and the built-in emulator has no authentication "
                            "(set server.allow_insecure_remote: true to serve it anyway)")
            continue
        if key == "estimator.listen" and settings.estimator.open_writes:
            problems.append(f"{key}: {host} is not loopback and estimator.open_writes lets anyone there add and "
                            "delete history (set it false, or server.allow_insecure_remote: true)")
            continue
        missing = [what for what, ok in (("no TLS (server.tls)", s.tls.enabled), ("no admin token (server.auth)", token))
                   if not ok]
        if missing:
            problems.append(f"{key}: {host} is not loopback and there is {' and '.join(missing)}; "
                            "configure them, or set server.allow_insecure_remote: true")
    return problems


def _tls(settings: Settings) -> list[str]:
    from harvester.advice.tls import server_ssl_context

    try:
        server_ssl_context(settings.server.tls)
    except (ssl.SSLError, OSError, ValueError) as exc:
        return [f"server.tls: the certificate, key or CA files are not usable: {getattr(exc, 'reason', None) or exc}"]
    return []


def _store(settings: Settings) -> list[str]:
    st = settings.store
    if st.backend != "sqlite":
        return []
    path = st.path
    if path.is_dir():
        return [f"store.path: {path} is a directory; name the SQLite file"]
    folder = path.resolve().parent
    probe = folder
    while not probe.exists():
        probe = probe.parent
    try:
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".harvester-check-"):
            pass
    except OSError as exc:
        return [f"store.path: cannot create files in {probe} ({exc.strerror or exc})"]
    if path.exists():
        try:
            with open(path, "r+b") as f:
                head = f.read(16)
        except OSError as exc:
            return [f"store.path: {path} cannot be opened for writing ({exc.strerror or exc})"]
        if head and head != b"SQLite format 3\x00":
            return [f"store.path: {path} is not a SQLite database"]
    return []


def _extras(settings: Settings) -> list[str]:
    rms = [("rm.auth", settings.rm.auth)] + [(f"rm.clusters[{i}].auth", c.auth) for i, c in enumerate(settings.rm.clusters)]
    users = [k for k, auth in (*rms, ("hdfs.auth", settings.hdfs.auth)) if auth == "kerberos"]
    if not users:
        return []
    if importlib.util.find_spec("requests_gssapi") is None:
        return [f"{users[0]}: kerberos needs the optional 'kerberos' extra (requests-gssapi): "
                "pip install 'harvester[kerberos]'"]
    from rm_client import RMConfigError
    from rm_client.transport import spnego_auth

    krb = settings.kerberos
    try:  # the credentials serve would acquire (a keytab needs its KDC)
        spnego_auth(krb.principal, str(krb.keytab) if krb.keytab else None)
    except RMConfigError as exc:
        return [f"{users[0]}: {exc}"]
    return []


def _cpus(settings: Settings) -> list[str]:
    """server.grpc_advice_cpus must be CPUs this process may run on, and leave some for the loops."""
    if not settings.server.grpc_advice_cpus:
        return []
    from harvester.advice.advice_process import split_cpus

    try:
        split_cpus(settings.server.grpc_advice_cpus)
    except ValueError as exc:
        return [str(exc)]
    return []


def _binds(addresses: Mapping[str, str], *, ports: bool) -> list[str]:
    """Each listen address that cannot be bound, in the order serve binds them, with the setting
    to change. `ports=False` binds each host on port 0: whether the address is this machine's
    does not depend on what else runs. `ports=True` binds the configured port (a fixed one
    only: port 0 always binds), which a running sidecar of the same file holds."""
    import errno

    from harvester.observability.failures import cause

    problems = []
    for key, address in addresses.items():
        host, _, port = address.rpartition(":")
        if ports and int(port) == 0:
            continue
        try:
            infos = socket.getaddrinfo(host.strip("[]"), int(port) if ports else 0, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
            family, kind, proto, _, sockaddr = infos[0]
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is no conflict
                s.bind(sockaddr)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                problems.append(f"{address} is already in use ({key}): another `harvester serve` (make run) may be "
                                f"running; stop it, or set {key} to a free port (port 0 picks one)")
            else:
                problems.append(f"cannot listen on {address} ({key}): {cause(exc)}")
    return problems


def listen_problem(settings: Settings) -> str | None:
    """Why `serve` could not listen where its settings say (None: every address is free):
    checked before anything starts so the message names the address and the setting to change."""
    problems = _binds(listen_addresses(settings), ports=True)
    return problems[0] if problems else None


def preflight(settings: Settings, *, ports: bool = False, environ: Mapping[str, str] | None = None,
              addresses: Mapping[str, str] | None = None) -> str | None:
    """Raise `PreflightError` with every problem (see the module docstring); returns the admin
    token (None: none configured) so the caller reads it once. `addresses`: the listen
    addresses to check (default: every one `serve` binds; `harvester estimator serve` binds one)."""
    problems: list[str] = []
    try:
        token = read_admin_token(settings.server.auth.token_file, os.environ if environ is None else environ)
    except TokenError as exc:
        token = None
        problems.append(str(exc))
    listens = listen_addresses(settings) if addresses is None else addresses
    problems += _exposure(settings, token, listens) + _tls(settings) + _store(settings) + _extras(settings) + _cpus(settings)
    problems += _binds(listens, ports=ports)
    if problems:
        raise PreflightError("; ".join(problems))
    return token



"""The admin bearer token: where it comes from (import-light: the CLI reads it too).

`$HARVESTER_ADMIN_TOKEN` wins, else the first line of `server.auth.token_file`. A token shorter
than `MIN_TOKEN_CHARS` is refused (a guessable token is no protection). Errors never quote it.

A token FILE must be private, as ssh requires of a private key and PostgreSQL of its server key:
no access for group or others (`chmod 600`), except that a file owned by root may be readable by
its group (0640 root:harvester, the usual way to hand a secret to a service user). Otherwise it is
refused in one line naming the file and its mode: others may have read the token already.

The local token (issue 25): a sidecar of `cluster.source: embedded` (the demo, loopback only) with
no token configured creates one in `local_token_path()` — `$XDG_STATE_HOME/harvester/admin.token`,
mode 0600, kept across restarts — and the CLI of the same user on the same host reads it, so
`harvester tenants --refit` works in the embedded default without ceremony. A real deployment
(`cluster.source: rm`) never gets one: it configures `server.auth.token_file` or the variable.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from harvester.paths import state_dir

TOKEN_ENV = "HARVESTER_ADMIN_TOKEN"
MIN_TOKEN_CHARS = 16
#: How to give the CLI a token, named in every "refused" message.
TOKEN_SETTINGS = f"--token-file FILE, ${TOKEN_ENV}, or server.auth.token_file in --config"


class TokenError(ValueError):
    """The configured token cannot be used (message names the source, never the token)."""


def local_token_path() -> Path:
    """Where the embedded default's sidecar keeps the token it made (module docstring)."""
    return state_dir() / "admin.token"


def too_open(st: os.stat_result) -> bool:
    """True when a secret file's mode lets others in (module docstring: 0600, or 0640 owned by root)."""
    allowed_group = 0o040 if st.st_uid == 0 else 0
    return bool(stat.S_IMODE(st.st_mode) & 0o077 & ~allowed_group)


def _checked(raw: str, source: str) -> str:
    token = raw.strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenError(f"{source}: the admin token must be at least {MIN_TOKEN_CHARS} characters without spaces")
    return token


def read_token_file(path: Path, source: str) -> str:
    """The token in `path` (its first line); `TokenError` naming `source` when the file cannot be
    read, lets others in, or holds no usable token."""
    try:
        st = path.stat()
        if too_open(st):
            raise TokenError(f"{source}: the token file is open to others (mode {stat.S_IMODE(st.st_mode):04o}); "
                             f"run chmod 600 {path} (or 640 with owner root), and replace the token if others could "
                             "read it")
        raw = path.read_text(encoding="utf-8").splitlines()[0] if st.st_size else ""
    except (OSError, UnicodeDecodeError, IndexError) as exc:
        raise TokenError(f"{source}: cannot read the token ({type(exc).__name__})") from None
    return _checked(raw, source)


def read_admin_token(token_file: Path | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The token, None when none is configured; `TokenError` when the configured one is unusable."""
    env = os.environ if environ is None else environ
    raw = env.get(TOKEN_ENV)
    if raw is not None:
        return _checked(raw, f"${TOKEN_ENV}")
    if token_file is not None:
        return read_token_file(token_file, f"server.auth.token_file ({token_file})")
    return None


def local_token(create: bool) -> str | None:
    """The local token of the embedded default (module docstring): read from `local_token_path()`;
    with `create`, made first when missing or unusable (an unusable one — open to others, short,
    another user's — is replaced: whoever could read it holds a dead token). None when there is
    none and `create` is false."""
    import secrets

    path = local_token_path()
    try:
        if path.stat().st_uid == os.getuid():
            return read_token_file(path, str(path))
    except (OSError, TokenError):
        pass
    if not create:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_urlsafe(32) + "\n")
    try:
        try:
            os.link(tmp, path)  # atomic and exclusive: two sidecars starting at once share one token
        except FileExistsError:
            try:
                if path.stat().st_uid == os.getuid():
                    return read_token_file(path, str(path))  # the other sidecar's, made a moment ago
            except (OSError, TokenError):
                pass
            os.replace(tmp, path)  # an unusable file: replaced
            return read_token_file(path, str(path))
    finally:
        tmp.unlink(missing_ok=True)
    return read_token_file(path, str(path))


def serving_token(token_file: Path | None, *, embedded: bool) -> str | None:
    """The token `serve` checks admin calls against: the configured one, else for the embedded
    default the local token (made when missing), else None (admin writes refused)."""
    configured = read_admin_token(token_file)
    if configured is None and embedded:
        return local_token(create=True)
    return configured


def client_token(given: Path | None, token_file: Path | None, *, embedded: bool) -> str | None:
    """The token the CLI sends: `--token-file` (`given`), else `$HARVESTER_ADMIN_TOKEN`, else
    `server.auth.token_file`, else for the embedded default the local token if a sidecar made one."""
    if given is not None:
        return read_token_file(given, f"--token-file ({given})")
    configured = read_admin_token(token_file)
    if configured is None and embedded:
        return local_token(create=False)
    return configured

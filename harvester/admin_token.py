"""The admin bearer token: where it comes from (import-light: the CLI reads it too).

`$HARVESTER_ADMIN_TOKEN` wins, else the first line of `server.auth.token_file`. A token shorter
than `MIN_TOKEN_CHARS` is refused (a guessable token is no protection). Errors never quote it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TOKEN_ENV = "HARVESTER_ADMIN_TOKEN"
MIN_TOKEN_CHARS = 16


class TokenError(ValueError):
    """The configured token cannot be used (message names the source, never the token)."""


def read_admin_token(token_file: Path | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The token, None when none is configured; `TokenError` when the configured one is unusable."""
    env = os.environ if environ is None else environ
    raw, source = env.get(TOKEN_ENV), f"${TOKEN_ENV}"
    if raw is None and token_file is not None:
        source = f"server.auth.token_file ({token_file})"
        try:
            raw = token_file.read_text(encoding="utf-8").splitlines()[0] if token_file.stat().st_size else ""
        except (OSError, UnicodeDecodeError, IndexError) as exc:
            raise TokenError(f"{source}: cannot read the token ({type(exc).__name__})") from None
    if raw is None:
        return None
    token = raw.strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenError(f"{source}: the admin token must be at least {MIN_TOKEN_CHARS} characters without spaces")
    return token

"""Input echoed in an error message: `shown(value)` — the one place that decides how much of
what a caller sent comes back to them, and without which secrets (issue 25).

A settings error quoted a whole `rm.urls` entry, password included, when the URL was malformed;
`GetSlo` put a 20 KB job name into its status, so the client got RESOURCE_EXHAUSTED (the status
is a header) instead of NOT_FOUND. `shown` gives the value's repr with the userinfo of URLs
masked (rm_client.redact) and cut to `MAX_ECHO` characters, saying how long it was. Import-light:
rm_client is loaded only when a value is shown.
"""

from __future__ import annotations

from typing import Any

#: Characters of an echoed value at most (a hostname, a job name, a URL fit).
MAX_ECHO = 120
#: Characters of a whole error message at most (a gRPC status travels in a header: clients
#: refuse one over 8-16 KB, and no sentence of ours is near this long).
MAX_MESSAGE = 1000


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text` cut to `limit` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def shown(value: Any, *, url: bool = False, limit: int = MAX_ECHO) -> str:
    """`repr(value)` fit for an error message: a URL's userinfo masked (`url=True`: the value IS
    a URL even without a scheme, e.g. "user:pw@rm:8088"), at most `limit` characters."""
    from rm_client.redact import redact_text, redact_url

    if isinstance(value, str):
        text = repr(redact_url(value) if url or "://" in value else redact_text(value))
    else:
        text = redact_text(repr(value))
    return clip(text, limit)

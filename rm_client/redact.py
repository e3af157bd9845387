"""Credentials never leave the client in text: URLs and messages are redacted before they are
shown (errors, logs, status pages).

An RM URL may carry credentials (``http://user:password@rm:8088``: requests sends them as HTTP
basic auth), and a query may carry a delegation token or a signature. ``redact_url`` keeps the
scheme, host, port and path and replaces the userinfo and secret-looking query values by
``***``; ``redact_text`` does the same to every URL inside a free text (an exception message
from requests/urllib3 may quote the URL it failed on).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "redact_text", "redact_url"]

MASK = "***"
#: Query parameters whose value is a credential (Hadoop: `delegation`; signed URLs; generic).
_SECRET_PARAMS = re.compile(r"(?i)^(delegation|token|access_token|password|passwd|secret|signature|sig|key|api_key)$")
#: userinfo of any URL in a text: scheme://<userinfo>@
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@'\"<>]+@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:delegation|token|access_token|password|passwd|secret|signature|sig|api_key)=)[^&\s'\"<>]+"
)


#: The scheme of a URL at the start of a string ("http://", "ftp://", ...).
_SCHEME = re.compile(r"(?i)^[a-z][a-z0-9+.\-]*://")


def _mask_userinfo(url: str) -> str:
    """`url` with everything before the last "@" of its authority masked — found by position,
    not by a URL parser, so that a malformed URL (bad port, unclosed IPv6 bracket, spaces, no
    scheme, empty host) loses its password too."""
    scheme = _SCHEME.match(url)
    start = scheme.end() if scheme else 0
    ends = [i for i in (url.find(c, start) for c in "/?#") if i >= 0]
    at = url.rfind("@", start, min(ends) if ends else len(url))
    return url if at < 0 else url[:start] + MASK + url[at:]


def redact_url(url: str | None) -> str | None:
    """The URL without its userinfo and with secret query values masked (None stays None);
    malformed URLs too (`_mask_userinfo`)."""
    if url is None:
        return None
    url = _mask_userinfo(url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_PARAMS.match(k) for k, _ in pairs):
            query = urlencode([(k, MASK if _SECRET_PARAMS.match(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_text(text: str) -> str:
    """`text` with the userinfo and secret query values of every URL in it masked."""
    return _SECRET_QUERY.sub(lambda m: m.group(1) + MASK, _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text))

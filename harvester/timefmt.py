"""Times as an operator reads them: ISO-8601 UTC instants and short relative spans — pure.

Text for people only (explanations, reasons, tables); JSON documents keep epoch seconds.

    iso_utc(1795871040.0)                 -> "2026-11-28T13:04:00Z"
    span(192.4)                           -> "3m12s"
    relative(1795871040.0, now)           -> "in 3m12s" / "3m12s ago" / "now"
"""

from __future__ import annotations

import datetime as dt

from rm_client.tables import duration


def iso_utc(t: float) -> str:
    """Epoch seconds as ISO-8601 UTC to the second (`Z`)."""
    return dt.datetime.fromtimestamp(t, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def span(seconds: float) -> str:
    """A duration's size in its two largest units: 45s, 3m12s, 2h05m, 3d4h (rm_client's tables' form)."""
    return duration(int(round(abs(seconds))) * 1000)


def relative(t: float, now: float) -> str:
    """`t` seen from `now`: "in 3m12s", "3m12s ago", or "now" within half a second."""
    d = t - now
    if abs(d) < 0.5:
        return "now"
    return f"in {span(d)}" if d > 0 else f"{span(d)} ago"


def when(t: float, now: float) -> str:
    """`iso_utc(t)` with `relative(t, now)` in parentheses."""
    return f"{iso_utc(t)} ({relative(t, now)})"

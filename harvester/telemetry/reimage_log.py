"""The operator's reimage log: a CSV file `timestamp,hostname[,tenant]` (OSDI'16 §3.3 input).

No Hadoop API reports disk reimages (the paper reads AutoPilot's logs), so an operator may
export theirs. Format (docs/hdfs.md):

    timestamp,hostname,tenant
    2026-11-02T04:10:00Z,search-017.dc1,search/index
    1795431979,web-003.dc1,

- a header row naming at least `timestamp` and `hostname` (any column order; other columns
  are ignored); `tenant` is optional — empty or absent = mapped by `harvesting.tenants`;
- `timestamp`: epoch seconds (integer or decimal; values above 1e11 are taken as
  milliseconds) or ISO 8601 (`Z` or an offset; without one it is UTC);
- one row per reimaged server; blank lines and lines starting with `#` are skipped.

The whole file is read at every grid refit (operators append to it). A malformed row fails
the read with `ReimageLogError` naming the file and line: a half-read log would silently
lower the tenants' rates.
"""

from __future__ import annotations

import csv
from datetime import datetime, timezone
from pathlib import Path

from harvester.models.reimage_detection import SOURCE_LOG, ReimageEvent
from harvester.textfile import read_text


class ReimageLogError(Exception):
    """The reimage log cannot be read or has a malformed row (the message names the line)."""


def parse_timestamp(text: str) -> float:
    """Epoch seconds from epoch seconds / milliseconds or ISO 8601; ValueError otherwise."""
    s = text.strip()
    try:
        value = float(s)
    except ValueError:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00").replace("z", "+00:00"))
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.timestamp()
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        raise ValueError(f"{text!r} is not a time")
    return value / 1000.0 if value > 1e11 else value


def load_reimage_log(path: str | Path) -> list[ReimageEvent]:
    """Every row of the log as a `ReimageEvent` (source "log"), in file order."""
    p = Path(path)
    text = read_text(p, ReimageLogError)
    rows = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.lstrip().startswith("#")]
    if not rows:
        return []
    reader = csv.reader([line for _, line in rows])
    header = [h.strip().lower() for h in next(reader)]
    missing = [c for c in ("timestamp", "hostname") if c not in header]
    if missing:
        raise ReimageLogError(f"{p}:{rows[0][0]}: header lacks {', '.join(missing)} (expected timestamp,hostname[,tenant])")
    ti, hi = header.index("timestamp"), header.index("hostname")
    tenant_i = header.index("tenant") if "tenant" in header else None
    out: list[ReimageEvent] = []
    for (lineno, _), fields in zip(rows[1:], reader):
        if len(fields) <= max(ti, hi):
            raise ReimageLogError(f"{p}:{lineno}: expected at least {max(ti, hi) + 1} fields, got {len(fields)}")
        host = fields[hi].strip()
        if not host:
            raise ReimageLogError(f"{p}:{lineno}: empty hostname")
        try:
            t = parse_timestamp(fields[ti])
        except ValueError:
            raise ReimageLogError(f"{p}:{lineno}: timestamp {fields[ti]!r} is neither epoch seconds nor ISO 8601") from None
        tenant = fields[tenant_i].strip() if tenant_i is not None and tenant_i < len(fields) else ""
        out.append(ReimageEvent(time=t, hostname=host, tenant=tenant, source=SOURCE_LOG, reason=f"{p.name}:{lineno}"))
    return out

"""What every settings section shares (DESIGN.md principle 10): the base model and the small
validators several sections use. A new section (e.g. `morpheus:`) derives from `Section`.

`Section` forbids unknown keys, is frozen, and refuses `.inf` / `nan` for every float: a
period of `.inf` once killed a loop thread with an OverflowError while /readyz said ready, and
`telemetry.stale_after_s: .inf` switched the fail-safe off. Every number of the schema also
carries an upper bound (`le=`) so a typo like `window_days: 1e6` is refused instead of
allocating gigabytes; cross-field rules live in each section's model validator.

Types are strict (issue 25): `poll_interval_s: true` was read as 1.0 and `"10"` as 10. A number
must be a YAML number (an integer is fine where a float is expected, never the reverse), a
boolean `true`/`false`, a string a string. Paths (`FilePath`) are the one exception: YAML gives
them as strings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict

#: The longest period any loop may be configured with (a day... times 30: refits, retention).
MAX_PERIOD_S = 30 * 86400.0
#: The longest network timeout worth waiting for.
MAX_TIMEOUT_S = 600.0


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


#: A file path of the schema: given as a string in YAML (the one lax type of a strict schema).
FilePath = Annotated[Path, Strict(False)]


def check_listen(value: str) -> str:
    """host:port with a port in 0..65535 (0 = any free port); IPv6 hosts in brackets."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected host:port, got {value!r}")
    return value


_ANY_HOST = ("", "0.0.0.0", "::", "*")
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def listens_clash(a: str, b: str) -> bool:
    """True when two host:port listen addresses would take the same socket: the same fixed
    port (0 picks a free one each time) on the same host, a host and a wildcard (0.0.0.0, ::),
    or two names of this machine's loopback. Addresses of different hosts may share a port."""
    host_a, _, port_a = a.rpartition(":")
    host_b, _, port_b = b.rpartition(":")
    if port_a != port_b or int(port_a or 0) == 0:
        return False
    ha, hb = host_a.strip("[]").lower(), host_b.strip("[]").lower()
    return ha == hb or ha in _ANY_HOST or hb in _ANY_HOST or (ha in _LOOPBACK_NAMES and hb in _LOOPBACK_NAMES)

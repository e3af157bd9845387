"""What every settings section shares (DESIGN.md principle 10): the base model and the small
validators several sections use. A new section (e.g. `morpheus:`) derives from `Section`.

`Section` forbids unknown keys, is frozen, and refuses `.inf` / `nan` for every float: a
period of `.inf` once killed a loop thread with an OverflowError while /readyz said ready, and
`telemetry.stale_after_s: .inf` switched the fail-safe off. Every number of the schema also
carries an upper bound (`le=`) so a typo like `window_days: 1e6` is refused instead of
allocating gigabytes; cross-field rules live in each section's model validator.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

#: The longest period any loop may be configured with (a day... times 30: refits, retention).
MAX_PERIOD_S = 30 * 86400.0
#: The longest network timeout worth waiting for.
MAX_TIMEOUT_S = 600.0


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def check_listen(value: str) -> str:
    """host:port with a port in 0..65535 (0 = any free port); IPv6 hosts in brackets."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected host:port, got {value!r}")
    return value

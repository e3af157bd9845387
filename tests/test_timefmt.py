"""harvester/timefmt.py: instants as ISO-8601 UTC and spans relative to now (text only)."""

from __future__ import annotations

import pytest

from harvester.timefmt import iso_utc, relative, span, when

T = 1_795_871_040.0  # 2026-11-28T13:04:00Z


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (45.4, "45s"), (192.4, "3m12s"), (-192.4, "3m12s"),
                                               (7500, "2h05m"), (3 * 86400 + 4 * 3600, "3d4h")])
def test_span(seconds: float, text: str) -> None:
    assert span(seconds) == text


def test_iso_and_relative() -> None:
    assert iso_utc(T) == "2026-11-28T13:04:00Z"
    assert relative(T, T - 192) == "in 3m12s" and relative(T, T + 65) == "1m05s ago" and relative(T, T + 0.2) == "now"
    assert when(T, T - 5) == "2026-11-28T13:04:00Z (in 5s)"

"""Primary tenants: the OSDI'16 utilization patterns (patterns.py) and N servers' series (layout.py)."""

from __future__ import annotations

from typing import Literal

Pattern = Literal["periodic", "constant", "unpredictable"]
PATTERNS: tuple[Pattern, ...] = ("periodic", "constant", "unpredictable")
# OSDI'16 §3.2, Fig. 3: periodic tenants hold ~40 % of servers; ~75 % run periodic or constant
DEFAULT_MIX: dict[str, float] = {"periodic": 0.40, "constant": 0.35, "unpredictable": 0.25}

"""Jockey's control-policy knobs (decisions/deadline_control.py, §5) in an import-light module:
the `jockey:` settings (config_jockey.py) take their defaults from here without loading numpy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DeadlineParams:
    """Policy knobs (module docstring); live, from the `jockey:` settings (config_jockey.py)."""

    quantile: float = 0.95
    slack: float = 1.3
    early_slack: float = 0.2
    dead_zone: float = 0.05
    lower_fraction: float = 0.5
    knee_tolerance: float = 0.0
    cap_to_demand: bool = True
    min_allocation: int = 1
    max_allocation: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.quantile <= 1.0:
            raise ValueError(f"quantile must be in (0, 1], got {self.quantile}")
        if self.slack < 1.0 or self.early_slack < 0.0:
            raise ValueError("slack must be >= 1 and early_slack >= 0")
        if not 0.0 <= self.dead_zone < 1.0:
            raise ValueError(f"dead_zone is a fraction of the deadline in [0, 1), got {self.dead_zone}")
        if not 0.0 < self.lower_fraction <= 1.0:
            raise ValueError(f"lower_fraction must be in (0, 1], got {self.lower_fraction}")
        if self.knee_tolerance < 0:
            raise ValueError("knee_tolerance must be >= 0")
        if self.min_allocation < 1 or (self.max_allocation is not None and self.max_allocation < self.min_allocation):
            raise ValueError("need 1 <= min_allocation <= max_allocation")

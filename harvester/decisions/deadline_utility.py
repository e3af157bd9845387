"""Utility of finishing a deadline job at a given time (Jockey, EuroSys'12 §2.2, §4) — pure.

§2.2: "Directly specifying a utility function to indicate a job's deadline and importance
alleviates this problem for our users", and "many internal deadlines are 'soft' – that is,
finishing after four hours instead of three is undesirable, but does not trigger a financial
penalty". Jockey's control loop picks the allocation that maximizes the job's utility and, among
those, has the least impact on the cluster (fewest containers).

The shape here, for a job finishing `t` seconds after it started:

    U(t) = value                                          t <= deadline_s
         = value − soft_penalty_per_s · (t − deadline_s)  deadline_s < t <= hard_deadline_s
         = −hard_penalty                                  t > hard_deadline_s

`hard_deadline_s = deadline_s` (the default) is a pure hard deadline; a positive
`soft_penalty_per_s` with a later hard deadline is a soft deadline that turns hard. U never
increases with t (validated), so finishing earlier is never worse. Values come from a params
dataclass; live, from `jockey.jobs` (config_jockey.py) or `POST /v1/jockey/deadline`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class DeadlineUtility:
    deadline_s: float
    hard_deadline_s: float | None = None
    value: float = 1.0
    soft_penalty_per_s: float = 0.0
    hard_penalty: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.deadline_s) and self.deadline_s > 0):
            raise ValueError(f"deadline_s must be a positive number of seconds, got {self.deadline_s}")
        hard = self.hard
        if not hard >= self.deadline_s:
            raise ValueError(f"hard_deadline_s ({hard}) must be >= deadline_s ({self.deadline_s})")
        if self.soft_penalty_per_s < 0 or self.hard_penalty < 0:
            raise ValueError("penalties must be >= 0")
        if self.value - self.soft_penalty_per_s * (hard - self.deadline_s) < -self.hard_penalty - 1e-12:
            raise ValueError("utility would rise at the hard deadline: need value − soft_penalty_per_s·(hard − "
                             "deadline) >= −hard_penalty")

    @property
    def hard(self) -> float:
        return self.deadline_s if self.hard_deadline_s is None else float(self.hard_deadline_s)

    def __call__(self, t: np.ndarray | float) -> np.ndarray:
        """U at finishing time(s) `t` (seconds since the job started)."""
        tt = np.asarray(t, dtype=np.float64)
        soft = self.value - self.soft_penalty_per_s * (tt - self.deadline_s)
        return np.where(tt <= self.deadline_s, self.value, np.where(tt <= self.hard, soft, -self.hard_penalty))

    def describe(self) -> str:
        if self.hard == self.deadline_s:
            return f"hard deadline {self.deadline_s:.0f}s (U={self.value:g} before, −{self.hard_penalty:g} after)"
        return (f"soft deadline {self.deadline_s:.0f}s (−{self.soft_penalty_per_s:g}/s), hard at {self.hard:.0f}s "
                f"(−{self.hard_penalty:g})")

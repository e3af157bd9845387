"""Recurring identities of trace jobs: the `JobSpec.name` under which Algorithm 1 finds a job's
previous run (OSDI'16 §4.1, Algorithm 1 line 3: `models.job_history` looks runs up by name) — pure.

No public trace labels recurring jobs (../shared/traces/README.md). Each loader keeps the
identity its trace has, by one of these rules, and its docstring says which and what the data
shows (measured by `python -m harvester.sim.traces.recurrence FORMAT PATH`):
- `app_name`: a free-text job name through the sidecar's own recurring-name rule
  (models/job_names.py with the default `morpheus.history.name_rules`: dates and 10–13 digit
  timestamps stripped), so a trace groups runs exactly as the live sidecar groups RM apps;
- `keyed`: a column naming what the job reads (SWIM FB-2010's anonymized input path);
- `signature`: a digest of the job's structure, its parts each with an instance count rounded
  to its order of magnitude (`magnitude`: counts follow the day's input, so they vary from run
  to run) — used only for jobs big enough that the structure is distinctive;
- none: the trace's own unique id.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from harvester.config_morpheus import DEFAULT_NAME_RULES
from harvester.models.job_names import NameNormalizer

_APP_NAME = NameNormalizer((r.pattern, r.replace) for r in DEFAULT_NAME_RULES)


def app_name(name: str) -> str:
    """A job name through the default recurring-name rule (`etl-2026-11-24` -> `etl`)."""
    return _APP_NAME(name)


def keyed(prefix: str, key: object) -> str | None:
    """`prefix + key` for a present key (a non-empty string), else None."""
    return f"{prefix}{key.strip()}" if isinstance(key, str) and key.strip() else None


def magnitude(count: float) -> int:
    """Order of magnitude of a count: 0 for 1–9, 1 for 10–99, … (counts below 1 are 0)."""
    return int(math.floor(math.log10(count))) if count >= 1 else 0


def signature(prefix: str, parts: Iterable[object]) -> str:
    """`prefix` + a stable digest of the multiset of `parts` (order does not matter)."""
    text = "\n".join(sorted(str(p) for p in parts))
    return prefix + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Recurrence:
    """How often names recur among a workload's runs."""

    runs: int
    names: int
    recurring_names: int   # names with >= 2 runs
    recurring_runs: int    # runs of those names

    @property
    def share(self) -> float:
        """Share of runs that belong to a recurring name (the synthetic `recurring_fraction`)."""
        return self.recurring_runs / self.runs if self.runs else 0.0

    @property
    def repeat_share(self) -> float:
        """Share of runs that have an earlier run of their name (what Algorithm 1 can use)."""
        return (self.runs - self.names) / self.runs if self.runs else 0.0

    def describe(self) -> str:
        return (f"recurrence {self.share:.0%} of runs ({self.recurring_names:,} of {self.names:,} names run "
                f"twice or more; {self.repeat_share:.0%} of runs follow an earlier run of their name)")


def recurrence(names: Iterable[str]) -> Recurrence:
    counts = Counter(names)
    rec = [n for n in counts.values() if n >= 2]
    return Recurrence(sum(counts.values()), len(counts), len(rec), sum(rec))

"""A recurring job's identity from an application name (Morpheus §3: "the user periodically
submits JobX"; §4 derives its period from the submissions of that one job) — pure.

Recurring pipelines often put the run's date or a timestamp into the application name
(`sales-report-2026-11-24`, `etl_1795504820`); the rule (`morpheus.history.name_rules`) is a
list of regex substitutions applied in order, then surrounding separators are trimmed. An
empty result keeps the original name (a name that is nothing but a date is its own job).
"""

from __future__ import annotations

import re
from typing import Iterable

SEPARATORS = " -_."


class NameNormalizer:
    """`normalize(name)`: the recurring job's name (module docstring)."""

    def __init__(self, rules: Iterable[tuple[str, str]] = ()) -> None:
        self._rules = [(re.compile(pattern), replace) for pattern, replace in rules]

    def __call__(self, name: str) -> str:
        out = name
        for pattern, replace in self._rules:
            out = pattern.sub(replace, out)
        out = out.strip(SEPARATORS)
        return out or name

"""Morpheus vs the jobs' static allocations on the recorded recurring jobs (placeholder: filled below)."""

from __future__ import annotations

from typing import Any

from harvester.whatif.recorded import Recorded


def compare(rec: Recorded) -> dict[str, Any]:
    return {"measured": False, "why": "not implemented yet"}

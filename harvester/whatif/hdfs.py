"""HDFS-H vs stock placement on the recorded DataNodes and reimages (placeholder: filled below)."""

from __future__ import annotations

from typing import Any

from harvester.sim.given import GivenInputs
from harvester.whatif.recorded import Recorded


def compare(rec: Recorded, given: GivenInputs) -> dict[str, Any]:
    return {"measured": False, "why": "not implemented yet"}

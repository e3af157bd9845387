"""Loaders for the real cluster traces staged in ../shared/traces, plus two generic formats.

Every loader takes a path and a `limit` (rows read at most; None = all) so tests and quick
runs stay fast on large files, and says in its docstring where the data comes from (each
folder's SOURCE.md). docs/traces.md describes the generic formats and how every staged trace
maps onto them.

Formats by name (what a scenario's `format:` key accepts):
- utilization series: `bitbrains`, `alibaba-machines`, `utilization-csv` (generic long CSV)
- jobs: `alibaba-2018-dags`, `alibaba-2017-batch`, `swim`, `hawk-eagle`, `jobs-csv` (generic)
- machines and events: `alibaba-machine-meta`, `alibaba-server-event`, `backblaze`
"""

from __future__ import annotations

from harvester.sim.traces.common import TraceError
from harvester.sim.traces.jobs import JOB_FORMATS, load_jobs
from harvester.sim.traces.machines import (
    DriveStats,
    MachineMeta,
    ServerEvent,
    load_alibaba_machine_meta,
    load_alibaba_server_events,
    load_backblaze,
)
from harvester.sim.traces.utilization import UTILIZATION_FORMATS, UtilSeries, load_utilization

__all__ = [
    "JOB_FORMATS",
    "UTILIZATION_FORMATS",
    "DriveStats",
    "MachineMeta",
    "ServerEvent",
    "TraceError",
    "UtilSeries",
    "load_alibaba_machine_meta",
    "load_alibaba_server_events",
    "load_backblaze",
    "load_jobs",
    "load_utilization",
]

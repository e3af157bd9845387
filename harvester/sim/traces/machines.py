"""Machine attributes and machine/disk events: Alibaba machine_meta and server_event, Backblaze.

None of these is a reimage log (no public trace has one, ../shared/traces/README.md); they
give real failure domains for racks and real failure/error rates to sanity-check the
OSDI'16-parameterized reimage generator against.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harvester.sim.traces.common import read_table, require_columns


@dataclass(frozen=True, slots=True)
class MachineMeta:
    """One machine's latest record: failure domains (rack-like placement attributes), cores, status."""

    machine_id: str
    failure_domain_1: str
    failure_domain_2: str
    cpus: int
    memory_norm: float
    status: str


def load_alibaba_machine_meta(path: str | Path, limit: int | None = None) -> list[MachineMeta]:
    """Alibaba cluster-trace-v2018 `machine_meta` (alibaba-2018-machines/SOURCE.md).

    Source: gohsyi/cluster_optimization @d147f57 `data/machine_meta.csv` (complete upstream
    file, 4,034 machines, no header): `machine_id, time_stamp, failure_domain_1 (292 values),
    failure_domain_2 (21 values), cpu_num, mem_size (normalized), status`. The latest record
    per machine is returned, in machine-id order. Used for racks (`failure_domain_1`).
    """
    df = read_table(path, limit=limit, header=None, names=["machine", "t", "fd1", "fd2", "cpus", "mem", "status"],
                    dtype={"fd1": str, "fd2": str})
    df = df.sort_values(["machine", "t"], kind="stable").drop_duplicates("machine", keep="last")
    key = df["machine"].str.extract(r"(\d+)$")[0].astype(float)
    df = df.assign(_k=key).sort_values("_k", kind="stable")
    return [MachineMeta(str(r.machine), str(r.fd1), str(r.fd2), int(r.cpus), float(r.mem), str(r.status))
            for r in df.itertuples(index=False)]


@dataclass(frozen=True, slots=True)
class ServerEvent:
    """A machine event: `kind` is add, softerror or harderror; `detail` e.g. machine_fail."""

    time_s: float
    machine_id: str
    kind: str
    detail: str


def load_alibaba_server_events(path: str | Path, limit: int | None = None) -> list[ServerEvent]:
    """Alibaba cluster-trace-v2017 `server_event` (alibaba-2017-server-event/SOURCE.md).

    Source: Prasanna2002/Alibaba_trace @1b1d720 `server_event.csv` (complete upstream file,
    no header): `timestamp (s), machine_id, event_type, event_detail, cpus, memory, disk`.
    1,313 `add` events at t=0 and 39 `softerror`s on 7 machines in ~23 h: a weak proxy for
    machine unavailability, used only to sanity-check rates.
    """
    import pandas as pd

    df = read_table(path, limit=limit, header=None, names=["t", "machine", "kind", "detail", "cpus", "mem", "disk"])
    df = df.sort_values("t", kind="stable")
    return [ServerEvent(float(r.t), str(r.machine), str(r.kind), "" if pd.isna(r.detail) else str(r.detail))
            for r in df.itertuples(index=False)]


@dataclass(frozen=True, slots=True)
class DriveStats:
    """Drive-days observed and failures; `annualized_failure_rate` = failures / drive-years."""

    drives: int
    drive_days: int
    failures: int
    days: int

    @property
    def annualized_failure_rate(self) -> float:
        return self.failures / self.drive_days * 365.0 if self.drive_days else float("nan")

    @property
    def monthly_failure_probability(self) -> float:
        """Chance a drive fails in 30 days at the observed daily rate (for reimage sanity checks)."""
        daily = self.failures / self.drive_days if self.drive_days else float("nan")
        return float(1.0 - (1.0 - daily) ** 30)


def load_backblaze(path: str | Path, limit: int | None = None) -> DriveStats:
    """Backblaze Drive Stats, daily per-drive snapshots 2013-04-10..05-19 (backblaze-2013/SOURCE.md).

    Source: dvarfe/Backblaze_ML_Ops @b180add `Data/Sources/2013-*.csv`, cut to 10 columns:
    `date, serial_number, model, capacity_bytes, failure (1 on the last day before failing),
    smart_*`. 22,892 drives, 120 failures over 40 days. Disk failure is one cause of
    reimaging (OSDI'16 §3.3), so its rate is a floor for the generator's per-server rate.
    """
    import pandas as pd

    df = read_table(path, limit=limit, usecols=["date", "serial_number", "failure"])
    require_columns(df, path, ["date", "serial_number", "failure"])
    failures = int(pd.to_numeric(df["failure"], errors="coerce").fillna(0).astype(np.int64).sum())
    return DriveStats(drives=int(df["serial_number"].nunique()), drive_days=int(len(df)), failures=failures,
                      days=int(df["date"].nunique()))

"""Primary-tenant CPU utilization series: Bitbrains, Alibaba 2018 machines, generic long CSV.

All loaders return `UtilSeries`: one per server/VM, times in seconds from the trace's own
origin (the earliest timestamp in what was read, so series of one file stay time-aligned),
utilization as a fraction of the server's CPU in [0, 1] (values above 100 % are clipped: a
VM can slightly exceed its provisioned MHz). Rows with a missing CPU value are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from harvester.sim.traces.common import TraceError, read_table, require_columns

if TYPE_CHECKING:  # pandas is imported where a trace is read (start-up cost)
    import pandas as pd


@dataclass(frozen=True, slots=True, eq=False)
class UtilSeries:
    """One server's CPU utilization over time (`times_s` ascending, `util` in [0, 1])."""

    name: str
    times_s: np.ndarray
    util: np.ndarray
    tenant: str | None = None
    source: str = ""
    origin_s: float = 0.0  # absolute time of times_s == 0 (Unix epoch s when the trace has one)

    @property
    def span_s(self) -> float:
        return float(self.times_s[-1] - self.times_s[0]) if self.times_s.size else 0.0


def _series_from_frame(df: pd.DataFrame, source: str, tenant_col: str | None = None) -> list[UtilSeries]:
    """`df` has columns server, t, util (fraction) [, tenant]; returns one series per server."""
    df = df.dropna(subset=["util", "t"])
    if df.empty:
        raise TraceError(f"{source}: no usable rows")
    origin = float(df["t"].min())
    out: list[UtilSeries] = []
    for server, g in df.groupby("server", sort=True):
        g = g.sort_values("t", kind="stable").drop_duplicates("t", keep="last")
        tenant = None
        if tenant_col is not None:
            vals = g[tenant_col].dropna()
            tenant = str(vals.iloc[0]) if len(vals) else None
        out.append(UtilSeries(str(server), g["t"].to_numpy(np.float64) - origin,
                              np.clip(g["util"].to_numpy(np.float32), 0.0, 1.0), tenant, source, origin))
    return out


def load_bitbrains(path: str | Path, limit: int | None = None) -> list[UtilSeries]:
    """Bitbrains GWA-T-12 "Rnd" per-VM usage (../shared/traces/bitbrains-rnd-7d/SOURCE.md).

    Source: GWA-T-12 (TU Delft Grid Workloads Archive), business-critical VMs of the hosting
    provider Bitbrains, copied by JessieRayeBauer/Time-Series-Forecasting- @0901a0d; a 7-day
    cut of all 499 VMs with data, one row per VM per ~300 s. Columns used: `vm_id`, the
    timestamp (header says ms but the values are Unix epoch SECONDS), `CPU usage [%]`
    (percent of the VM's provisioned CPU). Cite Shen, van Beek, Iosup, CCGrid 2015.
    """
    import pandas as pd

    df = read_table(path, limit=limit)
    require_columns(df, path, ["vm_id", "Timestamp [ms]", "CPU usage [%]"])
    frame = pd.DataFrame({"server": "bitbrains-vm" + df["vm_id"].astype(str), "t": df["Timestamp [ms]"].astype(float),
                          "util": df["CPU usage [%]"].astype(float) / 100.0})
    return _series_from_frame(frame, f"bitbrains:{Path(path).name}")


def load_alibaba_machines(path: str | Path, limit: int | None = None) -> list[UtilSeries]:
    """Alibaba cluster-trace-v2018 `machine_usage` (../shared/traces/alibaba-2018-machines/SOURCE.md).

    Source: alibaba/clusterdata cluster-trace-v2018, head of `machine_usage.csv` (first
    100,000 rows: 16 co-located hosts m_1932..m_1947, ~60 s irregular samples over 8 days) as
    committed by gohsyi/cluster_optimization @d147f57. No header; columns `machine_id,
    time_stamp (s), cpu_util_percent, ...`. These hosts run online services AND batch work,
    so the series is the whole host's CPU, an upper bound on the primary tenant's.
    """
    import pandas as pd

    df = read_table(path, limit=limit, header=None, usecols=[0, 1, 2])
    df.columns = ["server", "t", "util"]
    df["util"] = pd.to_numeric(df["util"], errors="coerce") / 100.0
    df["t"] = pd.to_numeric(df["t"], errors="coerce")
    df["server"] = "alibaba-" + df["server"].astype(str)
    return _series_from_frame(df, f"alibaba-machines:{Path(path).name}")


def load_utilization_csv(path: str | Path, limit: int | None = None) -> list[UtilSeries]:
    """The generic long format (docs/traces.md): `timestamp,server,cpu_util[,tenant]`.

    `timestamp` in seconds (any origin), `server` any id, `cpu_util` a fraction of the
    server's CPU in [0, 1] (or a `cpu_util_percent` column in [0, 100] instead), `tenant` an
    optional primary-tenant name that groups servers (environment/machine function). One row
    per server per sample, any order, any sampling interval.
    """
    import pandas as pd

    df = read_table(path, limit=limit)
    if "cpu_util" not in df.columns and "cpu_util_percent" in df.columns:
        df["cpu_util"] = df["cpu_util_percent"] / 100.0
    require_columns(df, path, ["timestamp", "server", "cpu_util"])
    util = pd.to_numeric(df["cpu_util"], errors="coerce")
    if util.max() > 1.5:
        raise TraceError(f"{path}: cpu_util must be a fraction in [0, 1] (max is {util.max():g}); "
                         "name the column cpu_util_percent for percentages")
    frame = pd.DataFrame({"server": df["server"].astype(str), "t": pd.to_numeric(df["timestamp"], errors="coerce"),
                          "util": util})
    tenant_col = None
    if "tenant" in df.columns:
        frame["tenant"] = df["tenant"].astype("string")
        tenant_col = "tenant"
    return _series_from_frame(frame, f"utilization-csv:{Path(path).name}", tenant_col)


UTILIZATION_FORMATS: dict[str, Callable[..., list[UtilSeries]]] = {  # names: sim/formats.py
    "bitbrains": load_bitbrains,
    "alibaba-machines": load_alibaba_machines,
    "utilization-csv": load_utilization_csv,
}


def load_utilization(fmt: str, path: str | Path, limit: int | None = None) -> list[UtilSeries]:
    """Load a utilization trace by format name (see UTILIZATION_FORMATS)."""
    try:
        loader = UTILIZATION_FORMATS[fmt]
    except KeyError:
        raise TraceError(f"unknown utilization format {fmt!r} (known: {', '.join(UTILIZATION_FORMATS)})") from None
    return loader(path, limit)


def resample(series: UtilSeries, step_s: float) -> np.ndarray:
    """The series on a regular grid from its first sample, `step_s` apart (linear interpolation).

    Bitbrains samples every ~300 s and Alibaba every ~60 s; the simulator's grid is the
    OSDI'16 telemetry interval (2 minutes, §3.2), so 5-minute data is interpolated and 1-minute
    data is sampled. Gaps (82 Bitbrains VMs have one over an hour) are bridged linearly.
    """
    if series.times_s.size < 2:
        raise TraceError(f"{series.source}: series {series.name} has fewer than 2 samples")
    grid = series.times_s[0] + np.arange(0.0, series.span_s + 1e-9, step_s)
    return np.interp(grid, series.times_s, series.util).astype(np.float32)


def whole_days(series: UtilSeries, step_s: float) -> np.ndarray | None:
    """`resample` cut to whole days (daily patterns need them); None below one day of data."""
    if series.times_s.size < 2:
        return None
    u = resample(series, step_s)
    day = int(round(86400.0 / step_s))
    days = u.shape[0] // day
    return u[: days * day] if days >= 1 else None

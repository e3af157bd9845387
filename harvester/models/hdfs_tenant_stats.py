"""Per-tenant history for the 3x3 grid (Algorithm 2 lines 1-2, OSDI'16 §3.2, §3.3) — pure.

Algorithm 2 is "given ... primary reimaging stats, primary peak CPU util stats". This module
turns Harvester's history into those two numbers per primary tenant, plus the storage each
tenant offers, and says for every number whether it was measured or is the default:

- peak CPU: the `quantile` (0.99) of the tenant's average-server primary CPU series
  (`TenantSeries`, 2-minute slots, §3.2). The series may come from the store's per-tenant
  series or be built from node samples (`models.tenant_series.build_tenant_series`): this
  module only needs the matrix. A tenant without a valid slot gets `default_peak_cpu`.
- reimages per server per month: reimage events of the tenant in the window divided by the
  server-months its DataNodes were observed (§3.3, Figure 5's unit). A tenant observed for
  fewer than `min_observed_days` server-days gets `default_reimages_per_server_month`.
- available bytes: the sum of its DataNodes' remaining bytes (what the grid equalises).

The defaults are pessimistic (deploy/harvester.yaml): an unknown tenant is assumed to reimage
like the paper's 80th-percentile tenant and to peak fully, so its DataNodes land in the risky
corner of the grid rather than being trusted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from harvester.models.reimage_detection import ReimageEvent
from harvester.models.tenant_series import TenantSeries
from hdfs_placement import TenantStats

DAY_S = 86400.0
MONTH_DAYS = 30.0  # hdfs_placement.reimage.MONTH_S: a month is 30 days everywhere in HDFS-H

MEASURED = "history"
DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class TenantPeak:
    peak: float
    samples: int


def tenant_peaks(series: TenantSeries, quantile: float) -> dict[str, TenantPeak]:
    """Peak (the `quantile` of valid slots, clipped to 0..1) per tenant with any valid slot."""
    if not 0.0 < quantile <= 1.0:
        raise ValueError(f"quantile must be in (0, 1], got {quantile}")
    out: dict[str, TenantPeak] = {}
    m = np.asarray(series.matrix, dtype=np.float64)
    counts = np.sum(~np.isnan(m), axis=1) if m.size else np.zeros(len(series.tenants), dtype=np.int64)
    for i, tenant in enumerate(series.tenants):
        n = int(counts[i])
        if n:
            out[tenant] = TenantPeak(float(np.clip(np.nanquantile(m[i], quantile), 0.0, 1.0)), n)
    return out


def merge_peaks(parts: Iterable[Mapping[str, Sequence[float]]], quantile: float) -> dict[str, TenantPeak]:
    """Peaks from per-tenant value lists gathered chunk by chunk (e.g. one day of series at a time)."""
    values: dict[str, list[float]] = {}
    for part in parts:
        for tenant, v in part.items():
            values.setdefault(tenant, []).extend(v)
    return {t: TenantPeak(float(np.clip(np.quantile(v, quantile), 0.0, 1.0)), len(v)) for t, v in values.items() if v}


@dataclass(frozen=True, slots=True)
class TenantHistory:
    """What history says about one tenant (inputs of `tenant_stats`)."""

    tenant: str
    environment: str
    datanodes: int
    available_bytes: int
    reimage_events: int
    observed_server_days: float
    peak: TenantPeak | None


@dataclass(frozen=True, slots=True)
class TenantStatsRow:
    """The statistics the grid was fitted with, and where each came from (persisted)."""

    tenant: str
    environment: str
    reimages_per_server_month: float
    peak_cpu: float
    available_bytes: int
    datanodes: int
    reimage_events: int
    observed_server_days: float
    cpu_samples: int
    reimage_source: str   # MEASURED or DEFAULT
    cpu_source: str       # MEASURED or DEFAULT

    def to_stats(self) -> TenantStats:
        return TenantStats(self.tenant, self.environment, self.reimages_per_server_month, self.peak_cpu,
                           self.available_bytes)


def tenant_stats(
    histories: Iterable[TenantHistory],
    *,
    min_observed_days: float,
    default_reimages_per_server_month: float,
    default_peak_cpu: float,
) -> list[TenantStatsRow]:
    """One row per tenant, sorted by tenant; defaults where history is missing (module docstring)."""
    rows = []
    for h in sorted(histories, key=lambda h: h.tenant):
        measured_rate = h.observed_server_days >= max(min_observed_days, 1e-9)
        rate = h.reimage_events / (h.observed_server_days / MONTH_DAYS) if measured_rate else default_reimages_per_server_month
        rows.append(TenantStatsRow(
            tenant=h.tenant, environment=h.environment, reimages_per_server_month=float(rate),
            peak_cpu=float(h.peak.peak) if h.peak else float(default_peak_cpu), available_bytes=int(h.available_bytes),
            datanodes=h.datanodes, reimage_events=h.reimage_events, observed_server_days=float(h.observed_server_days),
            cpu_samples=h.peak.samples if h.peak else 0,
            reimage_source=MEASURED if measured_rate else DEFAULT, cpu_source=MEASURED if h.peak else DEFAULT,
        ))
    return rows


def count_reimages(events: Iterable[ReimageEvent], tenant_of: Mapping[str, str], *, since: float,
                   until: float) -> dict[str, int]:
    """Events in [since, until) per tenant: the event's own tenant, else its DataNode's
    (`tenant_of`: DataNode id ip:port -> tenant; host-wide log lines are spread over a host's
    DataNodes first, `reimage_detection.per_datanode`)."""
    counts: dict[str, int] = {}
    for e in events:
        if not since <= e.time < until:
            continue
        tenant = e.tenant or tenant_of.get(e.datanode_id)
        if tenant:
            counts[tenant] = counts.get(tenant, 0) + 1
    return counts


def observed_server_days(first_seen: Mapping[str, float], tenant_of: Mapping[str, str], *, now: float,
                         window_s: float, log_covers_window: bool) -> dict[str, float]:
    """Server-days each tenant's DataNodes were watched within the window.

    Both maps are keyed by DataNode id (ip:port): `tenant_of` lists the current DataNodes,
    `first_seen` when Harvester first saw each live. A "server" is a DataNode, as in the
    reimage counts (several DataNodes of one host count once each). With an operator log that
    covers the window (`log_covers_window`), every current DataNode counts the whole window;
    otherwise only since it was first seen.
    """
    out: dict[str, float] = {}
    for dn_id, tenant in tenant_of.items():
        t0 = first_seen.get(dn_id, now)
        span = window_s if log_covers_window else min(window_s, max(0.0, now - t0))
        out[tenant] = out.get(tenant, 0.0) + span / DAY_S
    return out


"""Primary CPU per tenant for HDFS-H, read from Harvester's own history (the store).

Two readers, each returning plain values for the pure models (models/hdfs_tenant_stats.py):

- `tenant_cpu_series(...) -> TenantSeries` for the grid's peak CPU (Algorithm 2 line 2);
- `tenant_cpu_now(...) -> {tenant: utilization}` for the busy flags.

Both prefer the per-tenant 2-minute slots the telemetry loop folds every poll into
(`tenant_slots`, models/tenant_slots.py: the "average server" of OSDI'16 §3.2, tenants named by
the same `harvesting.tenants` rules). When the window holds no slot at all (the slot fold is
not running, or the store predates it) they fall back to raw node samples, binned the same way
(`build_tenant_series`, read one day at a time so a month of samples is never held at once).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.strategy import NodeIdentity, configured_physical_cores, resolve_tenant
from harvester.domain import NodeSample
from harvester.history.store import HistoryStore
from harvester.models.hdfs_tenant_stats import TenantPeak, merge_peaks, tenant_peaks
from harvester.models.tenant_series import build_tenant_series, primary_cpu_cores
from harvester.models.tenant_slots import series_from_rows, slot_start

DAY_S = 86400.0


def _node_maps(h: HarvestingSettings, samples: list[NodeSample]) -> tuple[dict[str, str], dict[str, float]]:
    """node id -> tenant and node id -> physical cores for the nodes of these samples."""
    tenants: dict[str, str] = {}
    cores: dict[str, float] = {}
    for s in samples:
        if s.node_id in tenants:
            continue
        owner = resolve_tenant(h, NodeIdentity(s.node_id, s.hostname))
        c = s.physical_cores or configured_physical_cores(h, s.node_id, s.hostname)
        if owner is not None and c:
            tenants[s.node_id] = owner[0]
            cores[s.node_id] = float(c)
    return tenants, cores


def tenant_peaks_from_history(store: HistoryStore, h: HarvestingSettings, *, since: float, until: float,
                              step_s: float, quantile: float) -> tuple[dict[str, TenantPeak], str]:
    """(peak per tenant, which source was used: "tenant_slots", "node_samples" or "none")."""
    start = slot_start(since, step_s)
    if until > start:
        series, _, read = store.read_tenant_slots(
            lambda rows: series_from_rows(rows, start=start, end=until, step_s=step_s), since=start, until=until)
        if read:
            return tenant_peaks(series, quantile), "tenant_slots"
    parts: list[dict[str, list[float]]] = []
    t = start
    while t < until:
        end = min(t + DAY_S, until)
        samples = store.node_samples(since=t, until=end)
        if samples:
            tenants, cores = _node_maps(h, samples)
            if tenants:
                series = build_tenant_series(samples, tenants, cores, start=t, end=end, step_s=step_s)
                parts.append({name: row[~np.isnan(row)].tolist() for name, row in zip(series.tenants, series.matrix)})
        t = end
    peaks = merge_peaks(parts, quantile)
    return peaks, "node_samples" if peaks else "none"


def tenant_cpu_now(store: HistoryStore, h: HarvestingSettings, *, now: float, stale_after_s: float,
                   step_s: float, configured_vcores: Mapping[str, int] | None = None) -> dict[str, float]:
    """Current primary CPU utilization per tenant: its newest slot (or node samples) not older
    than `stale_after_s`; tenants without such evidence are absent (= not busy)."""
    slots = store.tenant_slots(since=slot_start(now - stale_after_s, step_s))
    if slots:
        newest: dict[str, float] = {}
        for s in slots:  # ordered by start: the last one per tenant wins
            if s.polls > 0:
                newest[s.tenant] = s.utilization
        return newest
    samples = store.node_samples(since=now - stale_after_s)
    tenants, cores = _node_maps(h, samples)
    latest: dict[str, NodeSample] = {}
    for s in samples:  # ordered by time: the last one per node wins
        if s.node_id in tenants and s.state == "RUNNING":
            latest[s.node_id] = s
    per_tenant: dict[str, list[float]] = {}
    for node_id, s in latest.items():
        primary = primary_cpu_cores(s, cores[node_id], (configured_vcores or {}).get(node_id))
        if primary is not None:
            per_tenant.setdefault(tenants[node_id], []).append(min(1.0, primary / cores[node_id]))
    return {t: float(np.mean(v)) for t, v in per_tenant.items()}

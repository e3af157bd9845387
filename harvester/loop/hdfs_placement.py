"""HDFS-H's two ticks: poll the NameNode and publish the table; refit the grid from history.

`HdfsPlacementLoop.poll(now)` (every `hdfs.poll_interval_s`):
1. reads NameNodeInfo (DataNodes: xferaddr, rack, capacity, remaining, numBlocks);
2. maps each DataNode to its primary tenant by its transfer address ip:port or its hostname
   (`harvesting.tenants`, the same rules as YARN nodes; `decisions.strategy.resolve_tenant`),
   keyed by the DataNode id ip:port everywhere after: several DataNodes of one host (other
   xfer ports) are told apart, as the NameNode and the plug-in tell them apart;
3. runs the reimage heuristic (models/reimage_detection.py) and persists what it saw;
4. recomputes busy flags from each tenant's current primary CPU (loop/hdfs_inputs.py) with
   hysteresis (decisions/hdfs_table.busy_flags) — also after every telemetry poll when
   `on_telemetry` is registered as a RecordTelemetry observer (after the tenant-slot fold);
5. publishes a new table version on the state board (board/hdfs.py) when something material
   changed (decisions/hdfs_table.next_table), persisting the version and its reasons; after
   every tick the loop's status (NameNode, grid, last summaries) is published there too.
A poll before any grid exists (first start, empty store) fits one first.

`HdfsPlacementLoop.refit(now)` (every `hdfs.refit_interval_s`): the grid of Algorithm 2
lines 4-5 from the last `window_days` of history — reimages per server per month (detected
events + the operator log), peak CPU (2-minute tenant series), storage per tenant (remaining
bytes) — with the documented default row for tenants without enough history; persisted as a
new grid version (tenant -> cell, stats used) and published at once.

Only DataNodes whose adminState is "In Service" are listed (the NameNode never targets
decommissioning or maintenance nodes; their replicas are then "unknown" to Verify, which
does not judge them). Both ticks share one lock: they run on two loop threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from harvester.board.hdfs import PlacementBoard
from harvester.config_harvesting import HarvestingSettings
from harvester.config_hdfs import HdfsSettings
from harvester.decisions.hdfs_table import PublishedVersion, busy_flags, datanodes_of, next_table
from harvester.decisions.strategy import NodeIdentity, resolve_tenant
from harvester.history.store import HistoryStore
from harvester.loop.hdfs_inputs import tenant_cpu_now, tenant_peaks_from_history
from harvester.loop.runner import TickResult
from harvester.models.hdfs_grid_model import GridModel, fit_grid_model
from harvester.models.hdfs_tenant_stats import TenantHistory, count_reimages, observed_server_days, tenant_stats
from harvester.models.reimage_detection import DataNodeObservation, DetectionParams, ReimageEvent, detect_reimages, merge_reimages, per_datanode
from harvester.observability.metrics import Metrics
from harvester.telemetry.namenode_model import LiveDataNode, NameNodeInfo
from harvester.telemetry.reimage_log import load_reimage_log
from hdfs_placement import Grid, PlacementTable

IN_SERVICE = "In Service"


class NameNodeSource(Protocol):
    """What the loop needs from the NameNode (NameNodeJmxClient; a fake in tests)."""

    def namenode_info(self) -> NameNodeInfo: ...


class HdfsPlacementLoop:
    """Owns the HDFS-H state between ticks; see the module docstring."""

    def __init__(
        self,
        *,
        hdfs: HdfsSettings,
        harvesting: HarvestingSettings,
        namenode: NameNodeSource,
        store: HistoryStore,
        board: PlacementBoard,
        metrics: Metrics,
        read_log: Callable[[Path], list[ReimageEvent]] = load_reimage_log,
    ) -> None:
        self._s, self._h = hdfs, harvesting
        self._nn, self._store, self._board, self._metrics = namenode, store, board, metrics
        self._read_log = read_log
        self._lock = threading.Lock()
        self._info: NameNodeInfo | None = None
        self._busy: dict[str, bool] = {}
        self._observations: dict[str, DataNodeObservation] = store.hdfs_datanodes()
        self._model: GridModel | None = store.hdfs_grid()
        self._grid: Grid | None = self._model.grid() if self._model else None
        last = store.hdfs_table_versions(limit=1)
        self._next_version = last[0].version + 1 if last else 1
        self._published: PlacementTable | None = None
        self._last: dict[str, Any] = {}
        board.publish_status(self._status())

    # --- helpers ------------------------------------------------------------------------

    def _owners(self, live: tuple[LiveDataNode, ...]) -> dict[str, tuple[str, str]]:
        """DataNode id (xferaddr ip:port) -> (tenant, environment) for DataNodes a tenant rule (or
        own_tenant) claims."""
        out = {}
        for dn in live:
            owner = resolve_tenant(self._h, NodeIdentity(dn.xfer_addr, dn.hostname))
            if owner is not None:
                out[dn.xfer_addr] = (owner[0], owner[1] or owner[0])
        return out

    def _in_service(self) -> tuple[LiveDataNode, ...]:
        assert self._info is not None
        return tuple(dn for dn in self._info.live if dn.admin_state == IN_SERVICE)

    # --- poll ---------------------------------------------------------------------------

    def poll(self, now: float) -> TickResult:
        info = self._nn.namenode_info()
        with self._lock:
            summary = self._observe(info, now)
            if self._model is None:
                summary["refit"] = self._refit(now)
            summary.update(self._publish(now))
            self._last["poll"] = summary
            self._board.publish_status(self._status())
            return TickResult(summary)

    def on_telemetry(self, now: float) -> dict[str, Any]:
        """Busy flags again after a telemetry poll (RecordTelemetry observer; no NameNode call):
        a primary that spikes is reflected within one telemetry interval, not one hdfs poll."""
        with self._lock:
            if self._info is None or self._model is None:
                return {}
            self._busy = self._busy_now(now)
            result = self._publish(now)
            return {"hdfs_table_version": result["table_version"]} if result["published"] else {}

    def _busy_now(self, now: float) -> dict[str, bool]:
        cpu = tenant_cpu_now(self._store, self._h, now=now, stale_after_s=self._s.cpu_stale_after_s,
                             step_s=self._s.sample_step_s)
        return busy_flags(cpu, self._busy, threshold=self._s.busy_cpu_threshold, clear_below=self._s.busy_clear_below)

    def _observe(self, info: NameNodeInfo, now: float) -> dict[str, Any]:
        self._info = info
        owners = self._owners(info.live)
        d = self._s.detection
        detection = detect_reimages(self._observations, info, now,
                                    DetectionParams(d.min_blocks, d.reset_fraction, d.cluster_drop_fraction))
        events = [replace(e, tenant=owners.get(e.datanode_id, ("", ""))[0]) for e in detection.events] if d.enabled else []
        self._store.save_hdfs_datanodes([detection.observations[dn.name] for dn in info.live])
        self._observations = detection.observations
        if events:
            self._store.append_hdfs_reimages(events)
            self._metrics.record_hdfs_reimages(len(events))
        self._busy = self._busy_now(now)
        busy = sorted(t for t, b in self._busy.items() if b)
        return {"datanodes": len(info.live), "dead": len(info.dead), "reimages_detected": len(events),
                "busy_tenants": len(busy), "busy_first": busy[:10]}

    def _publish(self, now: float) -> dict[str, Any]:
        assert self._info is not None and self._model is not None and self._grid is not None
        live = self._in_service()
        nodes = datanodes_of(live, self._owners(live), self._busy)
        decision = next_table(
            self._published, nodes, self._grid, self._model.version, version=self._next_version,
            now_ms=int(now * 1000), busy_cpu_threshold=self._s.busy_cpu_threshold,
            free_space_change=self._s.free_space_change, min_interval_s=self._s.min_version_interval_s,
        )
        table = decision.table
        if table is None:
            if decision.deferred:
                self._metrics.record_hdfs_table(0, 0, 0, 0, 0, "deferred")
            return {"table_version": self._published.version if self._published else None,
                    "published": False, "reasons": list(decision.reasons)}
        # Persist first: a store failure fails the tick before anyone saw the version, so the
        # next tick publishes the same number again instead of skipping or repeating one.
        self._store.append_hdfs_table_version(PublishedVersion.of(table, decision.reasons))
        self._board.publish(table)
        self._published = table
        self._next_version = table.version + 1
        self._metrics.record_hdfs_table(table.version, table.grid_version, len(table.datanodes),
                                        sum(e.busy for e in table.datanodes),
                                        sum(e.row < 0 for e in table.datanodes), decision.kind)
        return {"table_version": table.version, "published": True, "reasons": list(decision.reasons)}

    # --- refit --------------------------------------------------------------------------

    def refit(self, now: float) -> TickResult:
        info = self._nn.namenode_info() if self._info is None else None
        with self._lock:
            summary: dict[str, Any] = {}
            if info is not None:
                summary.update(self._observe(info, now))
            summary["refit"] = self._refit(now)
            summary.update(self._publish(now))
            self._last["refit"] = summary
            self._board.publish_status(self._status())
            return TickResult(summary)

    def _refit(self, now: float) -> dict[str, Any]:
        assert self._info is not None
        window_s = self._s.window_days * 86400.0
        since = now - window_s
        live = self._in_service()
        owners = self._owners(live)
        tenant_of = {dn_id: owner[0] for dn_id, owner in owners.items()}
        env_of = {tenant: env for tenant, env in owners.values()}
        events = self._store.hdfs_reimages(since=since, until=now)
        log_path = self._s.reimage_log
        if log_path is not None:
            events = merge_reimages([*events, *per_datanode(self._read_log(log_path), live, tenant_of)])
        counts = count_reimages(events, tenant_of, since=since, until=now)
        first_seen: dict[str, float] = {}
        for o in self._observations.values():  # keyed by LiveNodes name: one id may have had two names
            first_seen[o.datanode_id] = min(o.first_seen, first_seen.get(o.datanode_id, o.first_seen))
        observed = observed_server_days(first_seen, tenant_of, now=now, window_s=window_s,
                                        log_covers_window=log_path is not None)
        peaks, cpu_source = tenant_peaks_from_history(self._store, self._h, since=since, until=now,
                                                      step_s=self._s.sample_step_s, quantile=self._s.peak_quantile)
        nodes: dict[str, int] = {}
        space: dict[str, int] = {}
        for dn in live:
            tenant = tenant_of.get(dn.xfer_addr)
            if tenant is not None:
                nodes[tenant] = nodes.get(tenant, 0) + 1
                space[tenant] = space.get(tenant, 0) + max(0, dn.remaining_bytes)
        histories = [TenantHistory(t, env_of[t], n, space[t], counts.get(t, 0), observed.get(t, 0.0), peaks.get(t))
                     for t, n in nodes.items()]
        rows = tenant_stats(histories, min_observed_days=self._s.min_observed_days,
                            default_reimages_per_server_month=self._s.default_reimages_per_server_month,
                            default_peak_cpu=self._s.default_peak_cpu)
        version = self._model.version + 1 if self._model else 1
        model = fit_grid_model(rows, version=version, fitted_at=now, window_s=window_s)
        self._store.save_hdfs_grid(model)
        self._model, self._grid = model, model.grid()
        return {**model.summary(), "reimage_events": sum(counts.values()), "cpu_source": cpu_source,
                "reimage_log": str(log_path) if log_path else None}

    def _status(self) -> dict[str, Any]:
        """For /status (published on the board): the grid, the published version and the last ticks' summaries."""
        return {
            "namenode": self._info.url if self._info else None,
            "grid": self._model.summary() if self._model else None,
            "table_version": self._published.version if self._published else None,
            "last": dict(self._last),
        }

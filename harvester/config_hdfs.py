"""The `hdfs:` settings section (HDFS-H: the 3x3 grid placement table), part of config.py.

Kept in its own module like `config_harvesting.py`; `harvester.config` puts it on
`Settings.hdfs`. Every key is documented in deploy/harvester.yaml. DataNodes are mapped to
primary tenants by the SAME rules as YARN nodes (`harvesting.tenants`, by hostname), so this
section has no tenant rules of its own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AnyHttpUrl, Field, field_validator, model_validator

from harvester.config_base import MAX_PERIOD_S, MAX_TIMEOUT_S, FilePath, Section


class ReimageDetectionSettings(Section):
    """The JMX heuristic of `harvester.models.reimage_detection` (docs/hdfs.md says its limits)."""

    enabled: bool = Field(True, description="Detect reimages from the NameNode's per-DataNode block counts.")
    min_blocks: int = Field(100, ge=1, le=10**9, description="A DataNode must have held at least this many blocks before a reset counts.")
    reset_fraction: float = Field(0.05, gt=0, lt=1, description="Blocks now at most this fraction of before = a reset.")
    cluster_drop_fraction: float = Field(
        0.5, gt=0, lt=1, description="Skip the check when the cluster's TotalBlocks fell below this fraction (mass delete)."
    )


class HdfsSettings(Section):
    enabled: bool = Field(False, description="Run HDFS-H: poll the NameNode, refit the grid, serve the placement table.")
    namenode_urls: list[AnyHttpUrl] = Field(
        default_factory=list, description="NameNode HTTP bases (e.g. http://nn:9870); several = HA, the active one is used."
    )
    auth: Literal["simple", "kerberos"] = Field("simple", description="simple (none), or kerberos: SPNEGO to the NameNode's HTTP (kerberos: section; the 'kerberos' extra).")
    tls_verify: bool = Field(True, description="Verify the NameNode's TLS certificate (https URLs).")
    max_response_mb: float = Field(64.0, ge=1, le=2048, description="Largest JMX answer read (MB); larger ones fail the poll.")
    ca_bundle: FilePath | None = Field(None, description="CA bundle for the NameNode's certificate (implies tls_verify).")
    connect_timeout_s: float = Field(3.0, gt=0, le=MAX_TIMEOUT_S, description="Connect timeout of a JMX request.")
    read_timeout_s: float = Field(10.0, gt=0, le=MAX_TIMEOUT_S, description="Read timeout of a JMX request (LiveNodes grows with the cluster).")
    poll_interval_s: float = Field(30.0, ge=1, le=3600, description="JMX poll, busy flags and table refresh period (s).")
    refit_interval_s: float = Field(86400.0, ge=60, le=MAX_PERIOD_S, description="Grid refit period (s).")
    window_days: float = Field(30.0, gt=0, le=365, description="History window for peak CPU and reimage frequency (days).")
    peak_quantile: float = Field(0.99, gt=0, le=1, description="Quantile of a tenant's 2-minute CPU used as its peak.")
    sample_step_s: float = Field(120.0, ge=10, le=3600, description="Slot width of the tenant CPU series the peaks are taken from (s).")
    min_observed_days: float = Field(
        7.0, ge=0, le=365, description="Server-days of observation a tenant needs before its measured reimage rate is used."
    )
    default_reimages_per_server_month: float = Field(
        1.0, ge=0, le=1000, description="Reimage rate of a tenant without enough history (the paper's 80th-percentile tenant)."
    )
    default_peak_cpu: float = Field(1.0, ge=0, le=1, description="Peak CPU of a tenant without CPU history (pessimistic).")
    reimage_log: FilePath | None = Field(None, description="Operator reimage log (CSV: timestamp,hostname[,tenant]); null = none.")
    detection: ReimageDetectionSettings = Field(
        default_factory=ReimageDetectionSettings, description="Reimage detection from NameNode JMX history."
    )
    busy_cpu_threshold: float = Field(0.9, ge=0, le=1, description="Primary CPU above this marks its DataNodes busy.")
    busy_clear_below: float = Field(0.85, ge=0, le=1, description="A busy DataNode is clear again when its primary falls below this.")
    cpu_stale_after_s: float = Field(300.0, gt=0, le=86400, description="Primary CPU samples older than this do not count for busy flags.")
    free_space_change: float = Field(
        0.05, gt=0, le=1, description="A DataNode's free space moving by this fraction of its capacity makes a new version."
    )
    min_version_interval_s: float = Field(
        30.0, ge=0, le=86400, description="Busy/free-space-only changes publish at most this often (refits and membership: at once)."
    )
    default_block_size: int = Field(134217728, ge=1, le=1 << 40, description="Block size (bytes) ChooseTargets assumes when a request gives 0.")
    long_poll_max_s: float = Field(60.0, gt=0, le=300, description="Largest `wait` an HTTP long-poll may ask for (s).")
    max_watch_streams: int = Field(4, ge=1, le=64, description="Concurrent WatchPlacementTable streams (each holds a gRPC thread).")

    @field_validator("ca_bundle", "reimage_log")
    @classmethod
    def _readable(cls, v: Path | None) -> Path | None:
        if v is not None and not os.access(v, os.R_OK):
            raise ValueError(f"cannot read {v}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> HdfsSettings:
        if self.enabled and not self.namenode_urls:
            raise ValueError("namenode_urls: missing value (required when enabled is true)")
        if self.window_days * 86400 / self.sample_step_s > 200_000:
            raise ValueError("window_days / sample_step_s give more than 200,000 samples per tenant: widen sample_step_s")
        if self.busy_clear_below > self.busy_cpu_threshold:
            raise ValueError(
                f"busy_clear_below ({self.busy_clear_below}) is above busy_cpu_threshold ({self.busy_cpu_threshold})"
            )
        return self

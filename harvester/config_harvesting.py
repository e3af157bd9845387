"""The `harvesting:` settings section (YARN-H: classes, Algorithm 1, guard), part of config.py.

Kept in its own module so the schema of one issue reads in one sitting; `harvester.config`
puts it on `Settings.harvesting`. Every key is documented in deploy/harvester.yaml. Per-node
overrides are resolved into one concrete strategy by `harvester.decisions.strategy` before any
decision sees them (DESIGN.md principle 10).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from harvester.config_base import MAX_PERIOD_S, Section


#: Samples of one tenant's series in the model window (30 days at 120 s = 21,600).
MAX_SERIES_SAMPLES = 200_000


def _check_regex(v: str | None) -> str | None:
    if v is not None:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {v!r}: {exc}") from None
    return v


class TenantRule(Section):
    """Nodes → one primary tenant (OSDI'16 §3.1: a tenant is an environment + machine function)."""

    tenant: str = Field(min_length=1, description="Tenant id (the machine function).")
    environment: str = Field("", description="Environment the tenant belongs to (informational).")
    nodes: list[str] = Field(default_factory=list, description="Node ids (host:port) or hostnames of the tenant.")
    hostname_pattern: str | None = Field(None, description="Python regex searched in the hostname.")

    _re = field_validator("hostname_pattern")(_check_regex)

    @model_validator(mode="after")
    def _needs_a_selector(self) -> TenantRule:
        if not self.nodes and self.hostname_pattern is None:
            raise ValueError(f"tenant {self.tenant!r}: give nodes or hostname_pattern")
        return self


class NodeOverride(Section):
    """Resources of the nodes it matches; later matches override earlier ones, field by field."""

    nodes: list[str] = Field(default_factory=list, description="Node ids (host:port) or hostnames.")
    hostname_pattern: str | None = Field(None, description="Python regex searched in the hostname.")
    physical_cores: float | None = Field(None, gt=0, le=4096, description="Physical cores of the host.")
    vcores: int | None = Field(None, ge=1, le=100_000, description="The NodeManager's configured vcores.")
    memory_mb: int | None = Field(None, ge=1, le=100_000_000, description="The NodeManager's configured memory (MB).")
    host_memory_mb: int | None = Field(None, ge=1, le=100_000_000, description="The host's physical memory (MB).")

    _re = field_validator("hostname_pattern")(_check_regex)


class NodeResourcesSettings(Section):
    physical_cores: float | None = Field(None, gt=0, le=4096, description="Default physical cores per host; null = what telemetry reports.")
    vcores: int | None = Field(None, ge=1, le=100_000, description="Default NM vcores; null = the node's total first seen by Harvester.")
    memory_mb: int | None = Field(None, ge=1, le=100_000_000, description="Default NM memory (MB); null = the node's total first seen.")
    host_memory_mb: int | None = Field(None, ge=1, le=100_000_000, description="Host RAM (MB); null = memory is not harvested, only CPU.")
    overrides: list[NodeOverride] = Field(default_factory=list, description="Per-node / per-pattern overrides, in order.")


class PatternSettings(Section):
    periodic_min_share: float = Field(0.20, gt=0, le=1, description="Daily-band share of spectral energy that makes a tenant periodic.")
    harmonics: int = Field(3, ge=1, le=12, description="Daily harmonics in the periodic band.")
    bin_tolerance: int = Field(1, ge=0, le=5, description="FFT bins on each side of a harmonic.")
    weekly: bool = Field(False, description="Also count the weekly harmonic (unreliable on a 30-day window).")
    constant_max_std: float = Field(0.02, ge=0, le=1, description="Std of utilization at or below which a tenant is constant.")
    constant_max_cv: float = Field(0.10, ge=0, le=100, description="Coefficient of variation at or below which a tenant is constant.")
    min_samples: int = Field(30, ge=2, le=1_000_000, description="Fewer valid samples: unpredictable (fallback).")
    min_days_periodic: float = Field(3.0, gt=0, le=365, description="Days of samples needed to test periodicity.")
    max_missing_fraction: float = Field(0.5, ge=0, lt=1, description="Most of the window that may be missing for the periodicity test.")
    peak_quantile: float = Field(0.99, gt=0, le=1, description="Quantile used as a tenant's peak utilization.")


class ClusteringSettings(Section):
    max_k: int = Field(8, ge=1, le=64, description="Largest number of k-means classes per pattern.")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of k-means and the silhouette sample (scikit-learn takes 32-bit seeds).")
    n_init: int = Field(4, ge=1, le=50, description="k-means restarts.")
    silhouette_sample: int = Field(2000, ge=10, le=1_000_000, description="Tenants sampled to score a k.")


class ReserveSettings(Section):
    method: Literal["reaction", "change", "fixed"] = Field(
        "reaction", description="reaction: the quantile of primary rises within the reaction horizon (raw samples); "
        "change: of |change| between 2-minute slots; fixed: fixed_fraction everywhere."
    )
    quantile: float = Field(0.95, gt=0, lt=1, description="Quantile of the primary's rise (or change) covered by the reserve.")
    horizon_s: float | None = Field(None, gt=0, le=3600, description="Reaction horizon H (s); null = telemetry.poll_interval_s + rm_lag_s + control_period_s.")
    rm_lag_s: float = Field(7.0, ge=0, le=600, description="How late the RM shows a load change (s; 2-7 s recorded, fixtures scenarios/cpu-burn).")
    min_windows: int = Field(1000, ge=1, le=100_000_000, description="Raw rise windows a class needs; fewer: the coarse rule from slot changes.")
    window_days: float = Field(7.0, gt=0, le=90, description="Days of rises the reaction reserve is fitted over (per-day summaries, folded in at each refit; models/rise_summary.py).")
    fixed_fraction: float = Field(0.10, ge=0, lt=1, description="The reserve of method fixed (fraction of a node's cores).")
    floor: float = Field(0.05, ge=0, le=1, description="Smallest reserve (fraction of a node's cores).")
    cap: float = Field(0.50, ge=0, le=1, description="Largest reserve (fraction of a node's cores).")
    cold_start: float = Field(0.20, ge=0, le=1, description="Reserve of a class without enough history.")
    min_changes: int = Field(720, ge=1, le=100_000_000, description="Observed changes needed to trust a fitted margin.")
    memory_fraction: float = Field(0.10, ge=0, lt=1, description="Memory reserve (fraction of host RAM) when memory is harvested.")

    @model_validator(mode="after")
    def _ordered(self) -> ReserveSettings:
        if self.floor > self.cap:
            raise ValueError(f"harvesting.reserve.floor ({self.floor}) is above cap ({self.cap})")
        return self


class GuardSettings(Section):
    stale_after_s: float | None = Field(None, gt=0, le=3600, description="Node data older than this is stale; null = telemetry.stale_after_s.")
    min_increase_vcores: int = Field(2, ge=1, le=100_000, description="Smallest capacity increase worth sending (vcores).")
    min_increase_memory_mb: int = Field(1024, ge=1, le=100_000_000, description="Smallest capacity increase worth sending (MB).")
    min_decrease_vcores: int = Field(1, ge=1, le=100_000, description="Smallest capacity decrease worth sending (vcores).")
    min_decrease_memory_mb: int = Field(512, ge=1, le=100_000_000, description="Smallest capacity decrease worth sending (MB).")
    min_interval_s: float = Field(60.0, ge=0, le=86400, description="Least time between two increases of one node.")
    kill_mechanism: Literal["rm_overcommit", "signals", "signals_with_backstop"] = Field(
        "rm_overcommit", description="Who kills when the primary spikes: the RM (overCommitTimeout) or container signals."
    )
    overcommit_timeout_ms: int = Field(0, ge=0, le=3_600_000, description="overCommitTimeout (ms) of a cut below allocation in rm_overcommit mode.")
    backstop_timeout_ms: int = Field(30000, ge=0, le=3_600_000, description="overCommitTimeout (ms) behind the signals in signals_with_backstop mode.")
    escalation_delay_s: float = Field(10.0, gt=0, le=3600, description="GRACEFUL_SHUTDOWN → FORCEFUL_SHUTDOWN after this long.")
    kill_ams: bool = Field(False, description="Allow ApplicationMasters as victims of signals.")
    freeze_on_stale: bool = Field(True, description="Node without utilization for longer than the staleness limit: lower its capacity to the allocation the RM reports (until then its capacity is kept, no write).")
    kill_when: Literal["reserve_exhausted", "reserve_used"] = Field(
        "reserve_exhausted", description="reserve_exhausted: kill only when the primary needs cores the batch holds, "
        "exactly enough; reserve_used: kill as soon as the primary eats into the reserve, to restore it whole."
    )
    am_floor: bool = Field(True, description="Never push a node below the allocation of the ApplicationMasters on it (the RM kills AMs last).")


class WeightRow(Section):
    constant: float = Field(ge=0, le=1e6, description="Weight of constant classes.")
    periodic: float = Field(ge=0, le=1e6, description="Weight of periodic classes.")
    unpredictable: float = Field(ge=0, le=1e6, description="Weight of unpredictable classes.")


class WeightsSettings(Section):
    long: WeightRow = Field(default_factory=lambda: WeightRow(constant=3, periodic=2, unpredictable=1), description="Long jobs.")
    medium: WeightRow = Field(default_factory=lambda: WeightRow(constant=2, periodic=3, unpredictable=1), description="Medium jobs.")
    short: WeightRow = Field(default_factory=lambda: WeightRow(constant=1, periodic=2, unpredictable=3), description="Short jobs.")


class JobLengthSettings(Section):
    mode: Literal["quantiles", "capacity"] = Field("quantiles", description="How the short/long thresholds are set.")
    short_quantile: float = Field(1 / 3, gt=0, lt=1, description="Quantile of run lengths below which a job is short.")
    long_quantile: float = Field(2 / 3, gt=0, lt=1, description="Quantile of run lengths from which a job is long.")
    min_runs: int = Field(10, ge=1, le=1_000_000, description="Runs needed before thresholds are fitted.")
    default_short_s: float = Field(300.0, gt=0, le=MAX_PERIOD_S, description="Cold-start short threshold (s).")
    default_long_s: float = Field(3600.0, gt=0, le=MAX_PERIOD_S, description="Cold-start long threshold (s).")
    history_days: float = Field(30.0, gt=0, le=3650, description="Days of job runs the thresholds look at.")

    @model_validator(mode="after")
    def _ordered(self) -> JobLengthSettings:
        if self.short_quantile >= self.long_quantile:
            raise ValueError("harvesting.job_length.short_quantile must be below long_quantile")
        if self.default_short_s > self.default_long_s:
            raise ValueError("harvesting.job_length.default_short_s must not exceed default_long_s")
        return self


class NodeOrderingSettings(Section):
    """The RM plug-in's node orders (decisions/node_ordering.py, docs/shim.md)."""

    queues: dict[str, Literal["short", "medium", "long"]] = Field(
        default_factory=dict, description="Queue path → job-length class, for GetNodeOrdering by queue."
    )
    stale_after_s: float = Field(60.0, gt=0, le=3600, description="A guard decision older than this gives empty orders (no advice).")
    long_poll_max_s: float = Field(30.0, gt=0, le=300, description="Longest wait of GET /v1/yarn/node-ordering?wait=.")


class HarvestingSettings(Section):
    actuate: bool | None = Field(
        None, description="Apply the guard's actions to the RM; false = compute and serve only; null = true for the "
        "embedded emulator, false for a real RM (cluster.source rm)."
    )
    tenants: list[TenantRule] = Field(default_factory=list, description="Node → tenant rules; first match wins.")
    unmatched_nodes: Literal["own_tenant", "ignore"] = Field("own_tenant", description="Nodes no rule matches.")
    node_resources: NodeResourcesSettings = Field(default_factory=NodeResourcesSettings, description="Node sizes.")
    control_period_s: float = Field(5.0, ge=0.1, le=3600, description="Guard period (s).")
    refit_interval_s: float = Field(86400.0, ge=60, le=MAX_PERIOD_S, description="Class model refit period (s).")
    refit_min_interval_s: float = Field(60.0, ge=0, le=86400, description="Least time between two refits asked for over HTTP (POST /v1/harvesting/refit answers 429 sooner).")
    window_days: float = Field(30.0, gt=0, le=90, description="History window of the class model (days).")
    sample_step_s: float = Field(120.0, ge=10, le=3600, description="Slot width of tenant series (s).")
    patterns: PatternSettings = Field(default_factory=PatternSettings, description="FFT pattern thresholds.")
    clustering: ClusteringSettings = Field(default_factory=ClusteringSettings, description="k-means.")
    reserve: ReserveSettings = Field(default_factory=ReserveSettings, description="Reserve per class.")
    guard: GuardSettings = Field(default_factory=GuardSettings, description="Capacity updates and kills.")
    weights: WeightsSettings = Field(default_factory=WeightsSettings, description="Algorithm 1 ranking weights.")
    job_length: JobLengthSettings = Field(default_factory=JobLengthSettings, description="Job type thresholds.")
    node_ordering: NodeOrderingSettings = Field(default_factory=NodeOrderingSettings, description="RM plug-in node orders.")

    @model_validator(mode="after")
    def _bounded_series(self) -> HarvestingSettings:
        samples = self.window_days * 86400 / self.sample_step_s
        if samples > MAX_SERIES_SAMPLES:
            raise ValueError(f"harvesting.window_days / sample_step_s give {samples:,.0f} samples per tenant, more than "
                             f"{MAX_SERIES_SAMPLES:,} (memory grows with it): widen sample_step_s or shorten window_days")
        return self

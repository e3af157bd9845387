"""The `morpheus:` settings section (paper 002: SLOs, skylines, LowCost reservations, DRA).

Kept in its own module like `config_hdfs.py`; `harvester.config` puts it on
`Settings.morpheus`. Every key is documented in deploy/harvester.yaml and docs/morpheus.md.
`enabled: null` (the default) means on for the embedded emulator and off for a real RM
(`cluster.source: rm`): a reservation takes capacity from everyone else in the plan queue, so
an operator turns it on knowingly. The pure models' own defaults (SloParams, SkylineParams,
PackingParams) are the defaults here; `slo_params()` etc. build them.
"""

from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from harvester.config_base import MAX_PERIOD_S, FilePath, Section as _Section  # no .inf/nan, unknown keys refused
from harvester.models.morpheus_params import PackingParams, SkylineParams, SloParams  # import-light: no numpy


class NameRule(_Section):
    """One step of the recurring-name rule: `re.sub(pattern, replace, name)`."""

    pattern: str = Field(description="Python regex searched in the application name.")
    replace: str = Field("", description="What each match becomes (re.sub replacement; '' removes it).")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a regex: {exc}") from None
        return v


#: Long numbers (epoch seconds / milliseconds) and dates (2026-11-24, 20261124, with an optional
#: time 07:10, T0710, _071000) are what changes between runs of one recurring job.
DEFAULT_NAME_RULES = (
    NameRule(pattern=r"[-_.]?(?<!\d)\d{10,13}(?!\d)", replace=""),
    NameRule(pattern=r"[-_.]?(?<!\d)\d{4}-?\d{2}-?\d{2}(?:[T_.-]?\d{2}:?\d{2}(?::?\d{2})?)?(?!\d)", replace=""),
)


class HistorySettings(_Section):
    poll_interval_s: float = Field(20.0, gt=0, le=60, description="How often the jobs loop polls the RM's apps when Morpheus is on (the skyline is sampled then; at most one step apart).")
    window_days: float = Field(30.0, gt=0, le=3650, description="Runs and provenance older than this are not used by the fits (and are pruned after store.retention_days).")
    name_rules: list[NameRule] = Field(default_factory=lambda: list(DEFAULT_NAME_RULES), description="Rules that turn an application name into its recurring job's name, applied in order.")
    min_coverage: float = Field(0.8, gt=0, le=1, description="A run's skyline is fitted only when the polls cover at least this fraction of its execution.")


class ProvenanceSettings(_Section):
    audit_log: FilePath | None = Field(None, description="NameNode audit log file to tail (hdfs-audit.log; needs hadoop.caller.context.enabled); null = none.")
    audit_log_tz: str = Field("UTC", description="Time zone of the audit log's timestamps (the NameNode's log4j local time), e.g. Europe/Berlin.")
    jsonl: FilePath | None = Field(None, description="Provenance JSONL file to tail (docs/morpheus.md 'Provenance JSONL'); null = none.")
    poll_interval_s: float = Field(60.0, gt=0, le=86400, description="How often the files are read from their persisted offsets.")
    max_lines_per_poll: int = Field(200_000, ge=1000, le=10_000_000, description="At most this many lines are ingested per file and poll (the rest next poll).")
    private_prefixes: list[str] = Field(default_factory=list, description="Path prefixes that are job plumbing, not dataflow (besides _temporary, staging and ids).")

    @field_validator("audit_log_tz")
    @classmethod
    def _zone(cls, v: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {v!r}") from None
        return v


class SloSettings(_Section):
    refit_interval_s: float = Field(3600.0, gt=0, le=MAX_PERIOD_S, description="How often SLOs and skylines are refitted from history (§3: a slow time scale).")
    require_sign_off: bool = Field(False, description="true: only accepted or overridden SLOs get reservations; false: every actionable proposal does, until rejected (§3).")
    min_periods: int = Field(SloParams.min_periods, ge=2, le=10_000, description="Periods with an output read needed for an actionable deadline.")
    max_gap_cv: float = Field(SloParams.max_gap_cv, gt=0, le=100, description="Submissions are periodic when MAD/median of their gaps is at most this.")
    snap_sigmas: float = Field(SloParams.snap_sigmas, ge=0, le=100, description="A fitted period within this many standard errors of a divisor of the LCM is that divisor (LCM-aligned), else of a whole second that second (§4).")
    max_cv: float = Field(SloParams.max_cv, gt=0, le=100, description="Actionable only when CV(T_outRead) = MAD/median is at most this (§4).")
    min_slack_ratio: float = Field(SloParams.min_slack_ratio, ge=0, le=1000, description="Actionable only when median (T_outRead − T_end)/(T_end − T_start) is at least this (§4).")
    start_percentile: float = Field(SloParams.start_percentile, ge=0, le=100, description="a_j = this percentile of T_inAvail (§4: 95).")
    deadline_percentile: float = Field(SloParams.deadline_percentile, ge=0, le=100, description="d_j = this percentile of T_outRead (§4: 50).")
    late_fraction: float = Field(SloParams.late_fraction, ge=0, le=100, description="A start later than the median by more than this × P is reported late.")
    problematic_cv: float = Field(SloParams.problematic_cv, gt=0, le=100, description="Jobs whose CV of T_start − T_inAvail or T_outRead − T_end exceeds this get LowCost's alignment penalty (§7).")
    grid_origin_s: float = Field(SloParams.grid_origin_s, ge=-1e10, le=1e10, description="Epoch seconds of a period boundary (0 = UTC midnight, as the RM aligns recurring reservations).")


class SkylineSettings(_Section):
    alpha: float = Field(SkylineParams.alpha, ge=0, le=1, description="Weight of over- against under-allocation (§5; §9.1's best balance is 0.01).")
    beta_fraction: float = Field(SkylineParams.beta_fraction, ge=0, le=100, description="β = this × V, V the optimum without the regularization term (§5: 0.1).")
    min_runs: int = Field(SkylineParams.min_runs, ge=1, le=10_000, description="Fewest runs with a usable skyline to fit one.")
    max_runs: int = Field(30, ge=1, le=10_000, description="The most recent this many runs are fitted.")
    time_limit_s: float = Field(SkylineParams.time_limit_s, gt=0, le=3600, description="HiGHS time budget per resource and fit.")


class PlanSettings(_Section):
    container_memory_mb: int = Field(1024, ge=1, le=16 * 1024 * 1024, description="The container a skyline is counted in (stages are whole containers of this size).")
    container_vcores: int = Field(1, ge=1, le=100_000, description="Vcores of that container.")
    capacity_fraction: float = Field(1.0, gt=0, le=1, description="Share of the plan queue's resources LowCost may plan (the rest stays for DRA and ad-hoc work).")
    gang: int = Field(1, ge=1, le=100_000, description="Minimum parallelism of a stage; 1 lets LowCost stretch stages over time (§5).")
    end_points: int = Field(PackingParams.end_points, ge=1, le=10_000, description="End points LowCost tries per job (§6).")
    alignment_weight: float = Field(PackingParams.alignment_weight, ge=0, le=1e9, description="§7's alignment penalty for problematic jobs, in cost units at the window's edge.")


class ReservationSettings(_Section):
    mode: Literal["one_off", "recurring"] = Field("one_off", description="one_off: one reservation per period, renewed ahead (3.3.6 gives a recurring one capacity in its first period only); recurring: one recurrence-expression reservation per job (RMs without that defect).")
    control_period_s: float = Field(5.0, gt=0, le=3600, description="Reservation loop period: reconcile with the RM's list, renew, DRA, nudges.")
    renew_lead_s: float = Field(600.0, gt=0, le=MAX_PERIOD_S, description="A period's one-off reservation is submitted this long before its window opens.")
    min_lead_s: float = Field(5.0, ge=0, le=86400, description="A window opening sooner than this is not submitted any more (its arrival must still be ahead when the RM plans it).")
    name_prefix: str = Field("harvester-morpheus", min_length=1, description="reservation-name prefix that marks Harvester's reservations (adopted after a restart, cleaned up when no longer planned; others are never touched).")
    confirm_grace_s: float = Field(60.0, gt=0, le=86400, description="A submitted reservation the RM does not list after this is LOST.")
    delete_ended_after_s: float = Field(300.0, ge=0, le=MAX_PERIOD_S, description="An ended one-off reservation is deleted from the RM's list this long after its window.")
    correct_drift: bool = Field(True, description="A reservation the RM lists with another definition than ours is updated back to ours (false: only reported).")
    refused_retry_max_s: float = Field(60.0, gt=0, le=86400, description="A submit the RM refused for lack of capacity (gang larger than the plan's capacity now, no room in the window) is retried after one control period, doubling up to this many seconds, while its window can still be submitted.")
    action_stale_after_s: float = Field(30.0, gt=0, le=3600, description="A reservation action whose data is older than this when it is about to be sent is dropped (decided again next tick).")


class NudgeSettings(_Section):
    enabled: bool = Field(True, description="Re-post one node's unchanged resource after each activation, stage boundary, window end and update, so the reservation queue's effective capacity is recomputed (3.3.6 leaves it stale).")
    settle_s: float = Field(1.5, ge=0, le=30, description="Wait this long after a boundary (the plan follower steps every second) before asking for the nudge.")


class DraSettings(_Section):
    enabled: bool = Field(True, description="Dynamic reprovisioning (§7) of running jobs whose demand exceeds their skyline (one_off mode only).")
    rho: float = Field(2.0, ge=1, le=100, description="Grant at most rho × the largest skyline allocation of the recent window (§7: 2).")
    recent_window_s: float = Field(120.0, gt=0, le=86400, description="The recent window of §7 (2 minutes).")
    grant_s: float = Field(60.0, gt=0, le=86400, description="A grant lasts this long, then DRA looks again (§7: T = 1 minute).")
    max_extension_s: float = Field(1800.0, ge=0, le=86400, description="A running job's one-off reservation may be stretched this far past its planned end, a grant span at a time, when the plan has room (§7, Fig. 8).")


class FallbackSettings(_Section):
    move_home: bool = Field(True, description="Move an app of a reserved job whose reservation ended with it running (3.3.6 puts it in the plan's default queue) to its job's own queue, where its static share is (decisions/static_fallback.py).")
    home_queues: dict[str, str] = Field(default_factory=dict, description="A recurring job's own queue (full path); unset: the queue of its last run outside the plan queue, from its history.")
    static_containers: dict[str, int] = Field(default_factory=dict, description="A recurring job's static share in plan containers (what it holds without Morpheus); DRA may grow its reservation up to it (never worse than static).")
    settle_s: float = Field(5.0, ge=0, le=600, description="Wait this long after a reservation's end before moving its apps (the RM moves them to the plan's default queue within its 1-s plan step).")

    @field_validator("home_queues")
    @classmethod
    def _full_paths(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [q for q in v.values() if not q.startswith("root.") or q.endswith(".")]
        if bad:
            raise ValueError(f"own queues must be full paths (root.<leaf>), got {bad}")
        return v

    @field_validator("static_containers")
    @classmethod
    def _positive(cls, v: dict[str, int]) -> dict[str, int]:
        bad = {k: n for k, n in v.items() if n < 0}
        if bad:
            raise ValueError(f"static shares must be >= 0 containers, got {bad}")
        return v


class MorpheusSettings(_Section):
    enabled: bool | None = Field(None, description="Run Morpheus: null = on for the embedded emulator, off for a real RM.")
    actuate: bool = Field(True, description="Submit, update and delete reservations and nudge nodes; false = plan and publish only (a dry run).")
    queue: str = Field("root.default", description="The reservable (plan) queue, full path.")
    step_s: float = Field(60.0, gt=0, le=86400, description="Skyline and plan step (s); the plan covers lcm_s in these steps.")
    lcm_s: int = Field(86_400, gt=0, le=int(MAX_PERIOD_S), description="The plan's length (§6: the LCM of the periods, one day); periods must divide it.")
    history: HistorySettings = Field(default_factory=HistorySettings, description="Job runs and their skylines from the RM.")
    provenance: ProvenanceSettings = Field(default_factory=ProvenanceSettings, description="Provenance inputs of the SLO inference.")
    slo: SloSettings = Field(default_factory=SloSettings, description="SLO inference (§4) and sign-off.")
    skyline: SkylineSettings = Field(default_factory=SkylineSettings, description="Skyline LP (§5).")
    plan: PlanSettings = Field(default_factory=PlanSettings, description="LowCost packing (§6).")
    reservations: ReservationSettings = Field(default_factory=ReservationSettings, description="Reservations in the RM.")
    nudge: NudgeSettings = Field(default_factory=NudgeSettings, description="Queue-capacity nudges.")
    dra: DraSettings = Field(default_factory=DraSettings, description="Dynamic reprovisioning (§7).")
    fallback: FallbackSettings = Field(default_factory=FallbackSettings, description="Never worse than static: jobs and runs without a reservation keep their own queue and share.")

    @field_validator("queue")
    @classmethod
    def _full_path(cls, v: str) -> str:
        if not v.startswith("root.") or v.endswith("."):
            raise ValueError(f"must be the full queue path, e.g. root.default (3.3.6 rejects short names), got {v!r}")
        return v

    @model_validator(mode="after")
    def _steps(self) -> MorpheusSettings:
        steps = self.lcm_s / self.step_s
        if abs(steps - round(steps)) > 1e-9:
            raise ValueError(f"lcm_s ({self.lcm_s}) must be a whole number of step_s ({self.step_s:g})")
        if self.history.poll_interval_s > self.step_s:
            raise ValueError(f"history.poll_interval_s ({self.history.poll_interval_s:g}) must not exceed step_s ({self.step_s:g})")
        for name in ("audit_log", "jsonl"):
            p = getattr(self.provenance, name)
            if p is not None and p.exists() and not os.access(p, os.R_OK):
                raise ValueError(f"provenance.{name}: cannot read {p}")
        return self

    def slo_params(self) -> SloParams:
        s = self.slo
        return SloParams(lcm_s=self.lcm_s, snap_sigmas=s.snap_sigmas, min_periods=s.min_periods,
                         max_gap_cv=s.max_gap_cv, max_cv=s.max_cv, min_slack_ratio=s.min_slack_ratio,
                         start_percentile=s.start_percentile, deadline_percentile=s.deadline_percentile,
                         late_fraction=s.late_fraction, problematic_cv=s.problematic_cv, grid_origin_s=s.grid_origin_s)

    def skyline_params(self) -> SkylineParams:
        s = self.skyline
        return SkylineParams(alpha=s.alpha, beta_fraction=s.beta_fraction, min_runs=s.min_runs,
                             time_limit_s=s.time_limit_s)

    def packing_params(self) -> PackingParams:
        return PackingParams(end_points=self.plan.end_points, alignment_weight=self.plan.alignment_weight)

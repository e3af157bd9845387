"""The `jockey:` settings section (paper 001: deadline jobs resized through their reservation).

Kept in its own module like `config_morpheus.py`; `harvester.config` puts it on
`Settings.jockey`. Every key is documented in deploy/harvester.yaml and docs/jockey.md. The
control decision's defaults are decisions/deadline_control.DeadlineParams' (the values the
evaluation used, docs/evaluation/jockey.md); `params()` and `utility()` build the pure values.
A job's deadline and utility set here can be replaced at run time through the admin API
(`POST /v1/jockey/deadline`); the file's value is the default after a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator, model_validator

from harvester.config_base import MAX_PERIOD_S, FilePath, Section as _Section  # no .inf/nan, unknown keys refused
from harvester.config_morpheus import MorpheusSettings
from harvester.decisions.deadline_params import DeadlineParams  # import-light: no numpy

if TYPE_CHECKING:
    from harvester.decisions.deadline_utility import DeadlineUtility

_D = DeadlineParams()


class UtilitySettings(_Section):
    """A deadline job's utility (decisions/deadline_utility.py), in seconds from its submission."""

    deadline_s: float = Field(gt=0, le=MAX_PERIOD_S, description="The deadline, seconds after the job's app was submitted (its startedTime).")
    hard_deadline_s: float | None = Field(None, gt=0, le=MAX_PERIOD_S, description="Where the soft penalty turns into the hard one; null = the deadline is hard.")
    value: float = Field(1.0, ge=-1e9, le=1e9, description="Utility of finishing by the deadline.")
    soft_penalty_per_s: float = Field(0.0, ge=0, le=1e9, description="Utility lost per second late, until the hard deadline.")
    hard_penalty: float = Field(1.0, ge=0, le=1e9, description="Utility is −hard_penalty after the hard deadline.")

    @model_validator(mode="after")
    def _valid(self) -> UtilitySettings:
        self.utility()  # DeadlineUtility validates the shape (never rising with time)
        return self

    def utility(self) -> DeadlineUtility:
        from harvester.decisions.deadline_utility import DeadlineUtility  # numpy: only when a job is built

        return DeadlineUtility(self.deadline_s, self.hard_deadline_s, self.value, self.soft_penalty_per_s,
                               self.hard_penalty)


class JockeyJob(UtilitySettings):
    """One deadline job: its history, its utility and where its reservation is."""

    runs: FilePath = Field(description="Prior-runs JSON of the job (docs/jockey.md 'Prior-runs JSON'); its model and C(p, a) are built from it.")
    table: FilePath | None = Field(None, description="C(p, a) cache (.npz): loaded when present and built from the same runs, else computed and written there; null = computed at start, kept in memory.")
    predictor: Literal["ctable", "amdahl"] = Field("ctable", description="ctable: C(p, a) from simulated runs (§4.1); amdahl: S + P/a (§4.1's alternative).")
    reservation_name: str | None = Field(None, description="reservation-name of the job's reservation when Morpheus did not make it; null = the open reservation Morpheus named for this job.")
    stage_priorities: dict[str, list[int]] | None = Field(None, description="Container priorities of each stage (the AM's asks); null = MapReduce's (map 20/19/5, reduce 10) for stages named map/reduce, or every worker for a one-stage job.")
    min_allocation: int = Field(1, ge=1, le=1_000_000, description="Fewest containers Jockey reserves while the job runs.")
    max_allocation: int | None = Field(None, ge=1, le=1_000_000, description="Most containers Jockey reserves; null = the job's widest DAG level.")


    @field_validator("table")
    @classmethod
    def _npz(cls, v: Path | None) -> Path | None:
        if v is not None and v.suffix != ".npz":
            raise ValueError(f"must end with .npz (numpy's compressed archive), got {v}")
        return v

    @field_validator("runs")
    @classmethod
    def _readable(cls, v: Path) -> Path:
        if not v.is_file():
            raise ValueError(f"no prior-runs file {v}")
        return v


class JockeySettings(_Section):
    enabled: bool | None = Field(None, description="Run Jockey's control loop for the jobs below: null = on for the embedded emulator (with its demo deadline job when no job is given), off for a real RM.")
    actuate: bool = Field(True, description="Update the jobs' reservations; false = decide and publish only (a dry run).")
    queue: str = Field("root.default", description="The reservable (plan) queue holding the jobs' reservations, full path.")
    control_period_s: float = Field(30.0, gt=0, le=3600, description="Control period: progress, decision, reservation update (§4.3).")
    update_lead_s: float = Field(2.0, ge=0, le=60, description="A resize takes effect this long after the decision, rounded up to a whole second (the plan follower's step), so the update reaches the RM before its stage starts.")
    min_update_interval_s: float = Field(0.0, ge=0, le=86400, description="At most one reservation update per job this often (a cool-down on top of the decision's hysteresis); 0 = every period.")
    action_stale_after_s: float = Field(30.0, gt=0, le=3600, description="An update whose data is older than this when it is about to be sent is dropped (decided again next period).")
    quantile: float = Field(_D.quantile, gt=0, le=1, description="Quantile of C(p, a) used as the remaining time.")
    slack: float = Field(_D.slack, ge=1, le=100, description="Multiplies the predicted remaining time (model error).")
    early_slack: float = Field(_D.early_slack, ge=0, le=100, description="Extra slack at progress 0, fading to 0 at the end (the paper's early over-allocation).")
    dead_zone: float = Field(_D.dead_zone, ge=0, lt=1, description="No lowering while the current allocation finishes within this fraction of the deadline before it.")
    lower_fraction: float = Field(_D.lower_fraction, gt=0, le=1, description="Share of the gap to the target released per period (hysteresis).")
    knee_tolerance: float = Field(_D.knee_tolerance, ge=0, le=100, description="Cap at the smallest allocation whose remaining time is within this fraction of the shortest.")
    cap_to_demand: bool = Field(_D.cap_to_demand, description="Never reserve more containers than the job can use soon (running + ready + next-wave tasks).")
    levels: int = Field(40, ge=2, le=200, description="Allocation levels of C(p, a) (geometric from 1 to max_allocation).")
    runs_per_level: int = Field(100, ge=10, le=100_000, description="Simulated runs per level for C(p, a).")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of the C(p, a) simulations.")
    jobs: dict[str, JockeyJob] = Field(default_factory=dict, description="Deadline jobs by recurring name (the app name after morpheus.history.name_rules).")

    @field_validator("queue")
    @classmethod
    def _full_path(cls, v: str) -> str:
        return MorpheusSettings._full_path(v)  # one rule for the plan queue's name

    def params(self, job: JockeyJob) -> DeadlineParams:
        return DeadlineParams(quantile=self.quantile, slack=self.slack, early_slack=self.early_slack,
                              dead_zone=self.dead_zone, lower_fraction=self.lower_fraction,
                              knee_tolerance=self.knee_tolerance, cap_to_demand=self.cap_to_demand,
                              min_allocation=job.min_allocation, max_allocation=job.max_allocation)

"""The knobs of Morpheus's pure parts — §4 SLO inference, §5 skyline LP, §6 LowCost — in one
import-light module: the settings (config_morpheus.py) take their defaults from here without
loading numpy, scipy or HiGHS, so `harvester rm ...` and `config check` start fast. The models
re-export them (models/slo_inference.py, models/skyline.py, decisions/reservation_packing.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SloParams:
    """Thresholds of §4 (paper values where it gives them: percentiles 95 / 50; LCM one day)."""

    lcm_s: int = 86_400
    snap_sigmas: float = 3.0  # a fitted period within this many standard errors of a divisor of the LCM (else of a whole second) is it
    min_periods: int = 5  # §9.1: four samples (weekly jobs in a month) are too few
    max_gap_cv: float = 0.25  # MAD/median of the gaps between submissions
    max_cv: float = 0.1  # CV(T_outRead) = MAD/median
    min_slack_ratio: float = 0.25  # median (T_outRead − T_end)/(T_end − T_start)
    start_percentile: float = 95.0  # a_j from T_inAvail
    deadline_percentile: float = 50.0  # d_j from T_outRead
    late_fraction: float = 0.05  # a start later than median + this × P is a late start
    problematic_cv: float = 0.5
    grid_origin_s: float = 0.0  # epoch seconds of a period boundary (local midnight: minus the UTC offset)

    def __post_init__(self) -> None:
        if self.lcm_s <= 0 or self.min_periods < 2 or self.snap_sigmas < 0:
            raise ValueError("lcm_s must be > 0, min_periods >= 2 and snap_sigmas >= 0")
        for name in ("start_percentile", "deadline_percentile"):
            if not 0 <= getattr(self, name) <= 100:
                raise ValueError(f"{name} must be in [0, 100]")


@dataclass(frozen=True)
class SkylineParams:
    """Knobs of the §5 fit; defaults documented per field.

    alpha: weight of over- vs under-allocation; §9.1 finds α = 1% the best balance (the Resource
        Estimator's default `solver.lp.alpha` is 0.1).
    beta_fraction: β = beta_fraction · V from a first solve without the β·ε term (§5: 0.1·V).
    beta: a fixed β instead (skips the first solve; the Estimator's `solver.lp.beta` = 0.1 is
        fixed, and it weighs ε against A_o and A_u in container units).
    min_runs: fewest runs to fit (the Estimator's `solver.lp.minJobRuns` default is 2).
    time_limit_s: HiGHS time budget for all solves of one resource.
    memory_quantum_mb / vcores_quantum: rounding quanta (results are multiples, rounded up).
    """

    alpha: float = 0.01
    beta_fraction: float = 0.1
    beta: float | None = None
    min_runs: int = 2
    time_limit_s: float = 30.0
    memory_quantum_mb: int = 1
    vcores_quantum: int = 1

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.beta_fraction < 0 or (self.beta is not None and self.beta < 0):
            raise ValueError("beta and beta_fraction must be >= 0")
        if self.min_runs < 1 or self.time_limit_s <= 0:
            raise ValueError("min_runs must be >= 1 and time_limit_s > 0")
        if self.memory_quantum_mb < 1 or self.vcores_quantum < 1:
            raise ValueError("quanta must be >= 1")


@dataclass(frozen=True)
class PackingParams:
    """LowCost knobs. end_points: ends tried per request (§6 "for different end points");
    alignment_weight: §7's penalty for problematic jobs, in cost units at the window's edge."""

    end_points: int = 8
    alignment_weight: float = 0.1

    def __post_init__(self) -> None:
        if self.end_points < 1 or self.alignment_weight < 0:
            raise ValueError("end_points must be >= 1 and alignment_weight >= 0")

"""Jockey's control decision: a deadline job's guaranteed allocation, each period (EuroSys'12 §4) — pure.

Each control period the loop (loop/jockey.py) hands over what the job manager reports — tasks
completed per stage — with the elapsed time, the current allocation, a completion predictor
(the precomputed C(p, a) table or the Amdahl alternative, models/completion_time.py), the job's
utility (decisions/deadline_utility.py) and these parameters. The decision:

1. predicted finish per allocation level a:
       F(a) = elapsed + slack_eff · R_q(a),   R_q(a) = quantile q of C(p, a)   (or S_t + P_t/a)
       slack_eff = slack · (1 + early_slack · (1 − p))
   `slack` covers model error; `early_slack` is the paper's pessimistic early over-allocation
   ("pessimistically over-allocates resources at the start to compensate for potential future
   failures", §1): most of a job's failures and outliers are still ahead of it at p = 0, and the
   allocation can only be lowered safely later, not raised retroactively;
2. target = the smallest a among those maximizing U(F(a)) ("maximize the job's economic utility
   while minimizing its impact on the rest of the cluster", abstract); when no level meets the
   deadline (every U below its on-time value) that is the earliest finish: BEST EFFORT, never
   "give up". Then, never beyond the KNEE (our addition): the smallest a whose R(a) is within
   `knee_tolerance` of the shortest R. Where C(p, a) is flat in a — a straggler or a chain of
   one-task stages ahead — a few percent of predicted time, within the model's noise, would
   otherwise "buy" the whole width of the job;
3. against oscillation (§4.3 of the published paper uses slack, hysteresis and a dead zone; the
   staged text stops in §4.1, so the exact rules below are ours):
   - RAISE at once when target > current: falling behind costs the deadline (BEST_EFFORT when
     even the target misses it);
   - HOLD when the current allocation still finishes within the dead zone before the deadline
     (F(current) >= deadline − dead_zone · deadline): small prediction noise changes nothing;
   - LOWER otherwise (and always when above a target that misses the deadline: more buys less
     than `knee_tolerance`), by `lower_fraction`
     of the gap per period (hysteresis: a run of lucky periods releases containers gradually),
     never below the target.
   F(current) uses the largest table level <= current (C is non-increasing in a: an upper bound);
4. DEMAND CAP (our addition; `cap_to_demand`): never hold more containers than the job can use
   soon — its running and ready tasks plus the tasks of stages whose inputs are in their last
   wave (`demand`, models/progress.py). A container beyond that would sit reserved and idle
   until the next period at least. The paper's rules are this with `cap_to_demand=False`;
   docs/evaluation/jockey.md measures both.
The decision carries its formula and inputs as its reason (DESIGN.md principle 4); it is data
for the actuator (the job's YARN reservation: decisions/deadline_reservation.py), never an action performed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np

from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.decisions.deadline_params import DeadlineParams  # noqa: F401  (re-exported: the policy knobs)
from harvester.models.completion_time import CompletionPredictor


class Rule(str, Enum):
    RAISE = "raise"
    HOLD = "hold"
    LOWER = "lower"
    BEST_EFFORT = "best_effort"  # raise to a target that still misses the deadline




@dataclass(frozen=True, slots=True)
class DeadlineContext:
    """One period's inputs. `done[s]`: tasks of stage s completed; times in seconds."""

    now: float
    started_at: float
    done: np.ndarray
    allocation: int
    predictor: CompletionPredictor
    utility: DeadlineUtility
    params: DeadlineParams
    progress: float
    job_id: str = ""
    demand: int | None = None


@dataclass(frozen=True, slots=True)
class DeadlineDecision:
    job_id: str
    now: float
    allocation: int
    previous: int
    target: int
    rule: Rule
    progress: float
    elapsed_s: float
    predicted_finish_s: float
    predicted_finish_current_s: float
    reason: str

    @property
    def changed(self) -> bool:
        return self.allocation != self.previous


def decide(ctx: DeadlineContext) -> DeadlineDecision:
    """The allocation for the next period (module docstring: the rules and why)."""
    prm, util = ctx.params, ctx.utility
    levels = np.asarray(ctx.predictor.allocations)
    lo_cap, hi_cap = prm.min_allocation, prm.max_allocation if prm.max_allocation is not None else int(levels[-1])
    usable = (levels >= lo_cap) & (levels <= hi_cap)
    if not usable.any():  # caps between two levels: choose among all, the result is clamped below
        usable = np.ones(levels.size, dtype=bool)
    elapsed = ctx.now - ctx.started_at
    p = min(max(ctx.progress, 0.0), 1.0)
    slack = prm.slack * (1.0 + prm.early_slack * (1.0 - p))
    rem = ctx.predictor.remaining(ctx.done, prm.quantile)
    finish = elapsed + slack * rem
    u = util(finish)
    u_use = np.where(usable, u, -np.inf)
    best = float(u_use.max())
    # the knee: past it, more containers shorten the remaining time by less than `knee_tolerance`
    r_min = float(rem[usable].min())
    knee_idx = int(np.flatnonzero(usable & (rem <= r_min * (1.0 + prm.knee_tolerance) + 1e-9))[0])
    if best >= util.value - 1e-12:
        t_idx = int(np.flatnonzero(usable & (u >= best - 1e-12))[0])
    else:  # nothing meets the deadline: the earliest finish among the best utilities
        cand = usable & (u >= best - 1e-12)
        t_idx = int(np.flatnonzero(cand & (finish <= float(finish[cand].min()) + 1e-9))[0])
    clamped = t_idx > knee_idx
    t_idx = min(t_idx, knee_idx)
    feasible = bool(u[t_idx] >= util.value - 1e-12)
    target = int(min(max(int(levels[t_idx]), lo_cap), hi_cap))
    cur = int(ctx.allocation)
    f_cur = float(finish[_level_at_most(levels, cur)])
    deadline = util.deadline_s
    zone = prm.dead_zone * deadline
    head = (f"p={p:.3f} elapsed={elapsed:.0f}s; F(a)=elapsed+{slack:.3f}·R(a), "
            f"R={ctx.predictor.explain(ctx.done, prm.quantile)}; {util.describe()}")
    knee = (f"; capped at the knee (R within {prm.knee_tolerance:g} of the shortest, {r_min:.0f}s)"
            if clamped else "")
    aim = (f"smallest a with max utility = {target} (F={finish[t_idx]:.0f}s){knee}" if feasible else
           f"best effort, the deadline {deadline:.0f}s is not met at q={prm.quantile:g}: target {target} "
           f"(F={finish[t_idx]:.0f}s){knee}")
    if cur > hi_cap:
        new, rule, why = hi_cap, Rule.LOWER, f"{cur} above max_allocation {hi_cap}"
    elif target > cur:
        new, rule = target, (Rule.RAISE if feasible else Rule.BEST_EFFORT)
        why = f"F({cur})={f_cur:.0f}s; {aim}"
    elif target < cur and (not feasible or f_cur < deadline - zone):
        # more containers than the target buy nothing (best effort) or finish before the dead zone
        step = math.ceil(prm.lower_fraction * (cur - target))
        new, rule = max(target, cur - step, lo_cap), Rule.LOWER
        why = (f"F({cur})={f_cur:.0f}s" + (f" < deadline−dead zone {deadline - zone:.0f}s" if feasible else "")
               + f"; {aim}; lower by ⌈{prm.lower_fraction:g}·({cur}−{target})⌉={step}")
    else:
        new, rule = max(cur, lo_cap), Rule.HOLD
        why = (f"F({cur})={f_cur:.0f}s within dead zone [{deadline - zone:.0f}s, {deadline:.0f}s]; {aim}"
               if target < cur else f"{aim} = current")
    if prm.cap_to_demand and ctx.demand is not None and new > max(ctx.demand, lo_cap):
        why += f"; capped to demand {ctx.demand} (running + ready + next-wave tasks)"
        new = max(ctx.demand, lo_cap)
        if new < cur:
            rule = Rule.LOWER  # the cap releases containers, whatever the deadline asked for
    f_new = float(finish[_level_at_most(levels, new)])
    return DeadlineDecision(ctx.job_id, ctx.now, int(new), cur, target, rule, p, elapsed, f_new, f_cur,
                            f"{rule.value} {cur}→{new}: {why}. {head}")


def _level_at_most(levels: np.ndarray, a: int) -> int:
    """Index of the largest level <= a (the smallest level if none): C there bounds C(p, a) above."""
    below = np.flatnonzero(levels <= a)
    return int(below[-1]) if below.size else 0

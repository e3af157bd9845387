"""One deadline job run on the simulated cluster under a policy (the Jockey evaluation's inner loop).

The "cluster" is the event simulator (models/job_sim.py) running the TRUE job with fresh draws
and any injected `Disturbance`. A controlled policy is the real decision code
(decisions/deadline_control.py) called every `period_s` with what a job manager would report at
that instant (tasks completed per stage, `DagRun.done_by`); its allocation applies from then on
(more containers at once; fewer as running tasks end — nothing is killed). A static policy holds
one allocation throughout.

Reserved resource-time is Σ allocation × time from the job's start to its end (success, or
the failure of a task out of attempts): what the job's reservation holds, used or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from harvester.decisions.deadline_control import DeadlineContext, DeadlineDecision, DeadlineParams, decide
from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.models.completion_time import CompletionPredictor
from harvester.models.job_sim import CompiledJob, DagRun, Disturbance, Draws
from harvester.models.job_model import JobModel
from harvester.models.progress import ProgressIndicator, demand, drains_within


@dataclass(frozen=True)
class Controlled:
    """Jockey's loop with a predictor (the C table, or Amdahl)."""

    name: str
    predictor: CompletionPredictor
    params: DeadlineParams
    indicator: ProgressIndicator
    model: JobModel | None = None  # the FITTED job model: when its running tasks end (demand look-ahead)


@dataclass(frozen=True)
class Static:
    name: str
    allocation: int


@dataclass
class Outcome:
    policy: str
    deadline_s: float
    finish_s: float
    reserved_cs: float
    changes: int = 0
    timeline: list[tuple[float, int]] = field(default_factory=list)
    busy_cs: float = 0.0  # container-seconds attempts actually held (≤ reserved_cs): 1 − busy/reserved sat idle
    decisions: list[DeadlineDecision] = field(default_factory=list)

    @property
    def met(self) -> bool:
        return self.finish_s <= self.deadline_s

    @property
    def lateness(self) -> float:
        """finish / deadline − 1 (> 0: late)."""
        return self.finish_s / self.deadline_s - 1.0


def run_once(job: CompiledJob, draws: Draws, policy: Controlled | Static, utility: DeadlineUtility, *,
             period_s: float, disturbance: Disturbance | None = None, keep_decisions: bool = False,
             horizon_factor: float = 50.0) -> Outcome:
    """Run the true job once under `policy` (module docstring)."""
    if isinstance(policy, Static):
        run = DagRun(job, draws, policy.allocation, disturbance=disturbance)
        run.run_to_end()
        end = min(run.finish_s, run.failed_at)
        finish = run.finish_s if run.failed_at == math.inf else math.inf
        return Outcome(policy.name, utility.deadline_s, finish, policy.allocation * end, 0,
                       [(0.0, policy.allocation)], busy_cs=busy(run, end))
    if period_s <= 0:
        raise ValueError("period_s must be > 0")
    zero = np.zeros(job.n_stages, dtype=np.int64)
    # at the start the job manager knows its ready tasks: the root stages (and what follows them)
    roots = np.array([0 if st.parents else st.tasks for st in job.model.stages], dtype=np.int64)
    first = _decide(policy, utility, 0.0, zero, policy.params.min_allocation,
                    demand(job.model, zero, zero, roots, np.zeros(job.n_stages, dtype=bool))
                    if policy.model is not None else None)
    run = DagRun(job, draws, first.allocation, disturbance=disturbance)
    timeline = [(0.0, first.allocation)]
    decisions = [first] if keep_decisions else []
    changes, t = 0, 0.0
    horizon = horizon_factor * utility.deadline_s
    while t < horizon:
        t += period_s
        run.advance(t)
        if run.ended_by(t):
            break
        done = run.done_by(t)
        soon = drains_within(policy.model, run.running_ages(t), period_s) if policy.model is not None else None
        dec = _decide(policy, utility, t, done, run.allocation,
                      demand(job.model, done, run.running_at(t), run.pending_at(t), soon))
        if keep_decisions:
            decisions.append(dec)
        if dec.allocation != run.allocation:
            run.set_allocation(dec.allocation)
            timeline.append((t, dec.allocation))
            changes += 1
    end = min(run.finish_s, run.failed_at, max(t, horizon))
    finish = run.finish_s if run.failed_at == math.inf else math.inf
    return Outcome(policy.name, utility.deadline_s, finish, reserved(timeline, end), changes, timeline, decisions=decisions,
                   busy_cs=busy(run, end))


def busy(run: DagRun, end: float) -> float:
    """Container-seconds the run's attempts held up to `end`."""
    _, _, start, stop, _ = run.arrays()
    return float(np.clip(np.minimum(stop, end) - start, 0.0, None).sum())


def _decide(policy: Controlled, utility: DeadlineUtility, now: float, done: np.ndarray, current: int,
            demand: int | None = None) -> DeadlineDecision:
    return decide(DeadlineContext(now, 0.0, done, current, policy.predictor, utility, policy.params,
                                  policy.indicator.of(done), job_id=policy.name, demand=demand))


def reserved(timeline: list[tuple[float, int]], end: float) -> float:
    """∫ allocation dt from the first step to `end` for a step function [(t, a), ...]."""
    total = 0.0
    for (t0, a), (t1, _) in zip(timeline, timeline[1:] + [(end, 0)]):
        total += a * max(0.0, min(t1, end) - t0)
    return total

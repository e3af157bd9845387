"""The job progress indicator of Jockey (EuroSys'12 §4.2) — pure.

Jockey's control loop needs one number p ∈ [0, 1] for "how far along is the job", computed
cheaply from what a job manager reports: tasks completed per stage. The published paper (§4.2;
the staged text in ../shared/papers stops inside §4.1) compares several indicators — fraction of
tasks completed ("vertexfrac"), fraction of the critical path done ("cp"), the total work done
("totalwork"), and total work including the time tasks waited in queue ("totalworkWithQ") — and
selects totalworkWithQ. We use the same one:

    p = Σ_s w_s · f_s / Σ_s w_s,    f_s = completed tasks of s / tasks of s
    w_s = n_s · (E[init_s] + E[runtime_s]) · (1 + ½ · E[failed attempts per task]_s) + n_s · q_s

where n_s is the stage's task count, E[·] come from the job model's per-stage distributions,
a failed attempt holds its container half its duration on average (models/job_sim.py draws its
failure point uniformly), and q_s is the mean time a task of s waited between being ready and
starting in the prior runs.

Why this one rather than the others (our reasoning; docs/jockey.md):
- vertexfrac counts a 1-second task like a 10-minute one; jobs whose long stages have few
  tasks (aggregations) look nearly done long before they are;
- cp ignores width: a 1000-task stage and a 1-task stage of the same length advance it equally;
- totalwork weighs stages by their work but not by the time they spend waiting for tokens,
  so stages that are wide compared to the allocation (which dominate the wall time) are under-
  weighted; adding queueing time fixes that, as the paper found.
The same indicator must be used when C(p, a) is precomputed and when the job is observed;
`ProgressIndicator` is stored next to the C table for that reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harvester.models.job_model import JobModel


@dataclass(frozen=True, slots=True, eq=False)
class ProgressIndicator:
    """totalworkWithQ: per-stage weights `w_s` and task counts `n_s`."""

    weights: np.ndarray
    tasks: np.ndarray

    def __post_init__(self) -> None:
        w, n = np.asarray(self.weights, dtype=np.float64), np.asarray(self.tasks, dtype=np.int64)
        if w.shape != n.shape or w.ndim != 1 or w.size == 0 or np.any(w < 0) or not w.sum() > 0 or np.any(n < 1):
            raise ValueError("progress weights must be one non-negative value per stage, with a positive sum")
        object.__setattr__(self, "weights", w / w.sum())
        object.__setattr__(self, "tasks", n)

    def of(self, done: np.ndarray) -> float:
        """p for `done[s]` completed tasks per stage (clipped to the stage's task count)."""
        d = np.asarray(done, dtype=np.float64)
        if d.shape != self.tasks.shape:
            raise ValueError(f"expected {self.tasks.size} per-stage counts, got {d.shape}")
        return float(min(1.0, np.dot(self.weights, np.clip(d, 0, self.tasks) / self.tasks)))

    def step_per_task(self) -> np.ndarray:
        """Progress gained when one task of each stage completes (w_s / n_s)."""
        return self.weights / self.tasks


def total_work_with_queue(model: JobModel) -> ProgressIndicator:
    """The totalworkWithQ weights of `model` (module docstring formula)."""
    w = []
    for s in model.stages:
        failed_attempts = min(s.expected_attempts - 1.0, 10.0)  # p1 -> 1 would be unbounded
        w.append(s.tasks * ((s.init.mean + s.runtime.mean) * (1.0 + 0.5 * failed_attempts) + s.queue_s))
    weights = np.array(w)
    if not weights.sum() > 0:  # every stage instantaneous: fall back to counting tasks
        weights = np.array([float(s.tasks) for s in model.stages])
    return ProgressIndicator(weights, np.array([s.tasks for s in model.stages]))


def demand(model: JobModel, done: np.ndarray, running: np.ndarray, pending: np.ndarray,
           drains_soon: np.ndarray | None = None) -> int:
    """Containers the job can use within about one step of its DAG, from per-stage counts.

    running + ready tasks, plus every task of a stage that has not started but whose parents
    have all their tasks done or running (its inputs are in their last wave: it becomes ready
    when they end). The deadline control's demand cap uses it (decisions/deadline_control.py):
    capping at running + ready alone leaves a wide stage behind a narrow one with too few
    containers until the next control period.

    `drains_soon[s]` (optional, from `drains_within` when the job manager reports how long its
    running tasks have run): a parent still running counts as in its last wave only if its
    running tasks are expected to end within the next control period. Without it, one long
    task ahead of a 400-task stage holds 400 containers idle for its whole run (docs/evaluation/
    jockey.md, "mechanism").
    """
    n = np.array([s.tasks for s in model.stages])
    d, r, q = (np.asarray(x, dtype=np.int64) for x in (done, running, pending))
    draining = (q == 0) & (d + r >= n)
    if drains_soon is not None:
        draining &= (r == 0) | np.asarray(drains_soon, dtype=bool)
    upcoming = 0
    for i, st in enumerate(model.stages):
        if st.parents and d[i] + r[i] + q[i] == 0 and all(draining[p] for p in st.parents):
            upcoming += st.tasks
    return int(r.sum() + q.sum() + upcoming)


def drains_within(model: JobModel, ages: list[np.ndarray], horizon_s: float) -> np.ndarray:
    """Per stage: are its running tasks expected to end within `horizon_s`? `ages[s]` are how long
    each running attempt of s has held its container. A task of age e is expected to end at the
    median of its holding time H = init + runtime given H > e (the stage's fitted quantiles, init
    at its mean); the stage drains when the last of them does. A stage with none running: True."""
    out = np.ones(len(model.stages), dtype=bool)
    for s, (st, age) in enumerate(zip(model.stages, ages)):
        if len(age) == 0:
            continue
        hold = st.runtime.values + st.init.mean
        levels = np.linspace(0.0, 1.0, hold.size)
        f = np.interp(np.asarray(age, dtype=np.float64), hold, levels, left=0.0, right=1.0)
        median_end = np.interp(f + (1.0 - f) / 2.0, levels, hold)  # beyond the fitted max: ends now
        out[s] = bool(np.max(np.maximum(median_end - age, 0.0)) <= horizon_s)
    return out

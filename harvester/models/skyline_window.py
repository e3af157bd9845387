"""A skyline that fits its SLO window (Morpheus §5, §6) — the LP on the runs that fit it.

§6 places a job's skyline inside its window [a_j, d_j], and §5's stretching (gang 1: "any
requirement s_k can be stretched over time") only makes it longer. The §5 LP over all training
runs is as long as the LONGEST of them, so a job that once ran slower than its window gets a
skyline LowCost must reject whatever the plan holds. That alone is no reason to refuse the job:
`fit_in_window` fits the LP again on the runs that DID fit the window (no longer than its whole
steps), which is the resource model of a run that can meet the deadline, and says how many
runs were left out (`longer`). It needs at least half of the runs to fit (the median run fits
the window: a reservation there serves the typical run) and at least `min_runs`
(SkylineParams.min_runs). A run as long as the ones left out outlasts its reservation and falls
back to its static share (decisions/static_fallback.py).

Not compressed: squeezing the skyline's area into fewer steps at a higher level assumes the job
can use more containers earlier, but §5 takes s_k as the job's maximum parallelism at step k,
and a run's tail (the last stages of its DAG, a few containers for minutes) cannot go faster
with more. When fewer than `min_runs` runs fit, there is no skyline for this window: the job
keeps its static provisioning, with why: a reservation in a window shorter than the job's
typical run makes the run wait for the window and then cannot hold it, where its static share
would have started it at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from harvester.models.morpheus_params import SkylineParams
from harvester.models.skyline import RunSkyline, SkylineModel, fit_skyline


def needed_steps(memory_mb: Sequence[int], vcores: Sequence[int]) -> int:
    """Steps a skyline reserves: its non-empty steps (§6: an allocation has no holes, and
    stages_from_skyline drops steps needing nothing)."""
    return sum(1 for m, v in zip(memory_mb, vcores) if m > 0 or v > 0)


def run_steps(run: RunSkyline) -> int:
    """Steps a run lasted: up to its last step using anything."""
    used = [k for k, (m, v) in enumerate(zip(run.memory_mb, run.vcores)) if m > 0 or v > 0]
    return used[-1] + 1 if used else 0


@dataclass(frozen=True)
class WindowSkyline:
    """The skyline fitted for a window of `room` steps (None: none fits, `why`), on how many
    of the runs (`used` of `runs`; `longer` were longer than the window) and `how`."""

    model: SkylineModel | None
    runs: int
    used: int
    how: str
    why: str = ""

    @property
    def longer(self) -> int:
        return self.runs - self.used


def fit_in_window(runs: Sequence[RunSkyline], room: int | None, params: SkylineParams = SkylineParams()) -> WindowSkyline:
    """§5's LP on `runs`; when its skyline needs more than `room` whole steps (None: no window
    known), again on the runs no longer than `room` (module docstring). SkylineFitError from
    the LP propagates."""
    full = fit_skyline(runs, params)
    n = len(runs)
    if room is None or needed_steps(full.memory_mb.tolist(), full.vcores.tolist()) <= room:
        return WindowSkyline(full, n, n, f"§5 LP over {n} runs (α = {params.alpha:g})")
    short = [r for r in runs if run_steps(r) <= room]
    need = max(params.min_runs, (n + 1) // 2)
    if len(short) < need:
        return WindowSkyline(None, n, len(short), "", (
            f"the window holds {room} whole steps and only {len(short)} of the {n} runs were that short (need "
            f"{need}: the median run must fit): no skyline fits it, so the job keeps its static provisioning"))
    model = fit_skyline(short, params)
    return WindowSkyline(model, n, len(short), (
        f"§5 LP over the {len(short)} of {n} runs no longer than the window's {room} steps (α = {params.alpha:g}); "
        f"{n - len(short)} longer run(s) left out: a run like them falls back to its static share when its "
        "reservation ends"))

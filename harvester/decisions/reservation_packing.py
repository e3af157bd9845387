"""LowCost, the online periodic reservation packer of Morpheus §6 (paper 002), and the greedy
earliest-fit baseline — pure: a request and a plan in, a decision (with its reason) and a new
plan out. Nothing is submitted here.

§6 "The basic algorithm": "LowCost handles the stages one by one in reverse chronological
order. For each stage k, LowCost first sets a time interval I_j,k = [τl, τr] during which the
stage can be allocated. τr is set right before the allocation of stage k + 1. The length of
I_j,k is set proportional to the ratio between the demand of the stage and the total demand of
the remaining stages ... the eligible time steps for allocating the next gang of a given stage
are [τcur − 1, τr], where τcur is the leftmost timestep which includes some non-zero value for
the current allocation to the stage. LowCost repeats the above procedure for different end
points, and chooses the allocation with the minimum cost."

How it is computed here:
- Interval: each remaining stage is first guaranteed its own length D (as YARN's
  StageExecutionIntervalByDemand does); the rest of [a, τr] is shared in proportion to demand.
- Gangs go where the cost after adding them is lowest (ties: the later step), never above
  capacity nor above the stage's parallelism, and the allocation grows leftwards from τr one
  step at a time (a step is eligible once its right neighbour holds a gang). Instead of placing
  gang by gang, two sorts per stage: (1) the reach — step t becomes reachable at level
  E_t = max of the one-gang costs from t to τr, the j-th gang on t at level max(c_t(j), E_t+1),
  and the G lowest levels (G = the stage's gangs) decide the leftmost step reached; (2) the
  fill — one gang on every reached step, the other G − |reach| on the cheapest gangs of those
  steps. This is water-filling inside the range the paper's greedy grows to; it can differ from
  a gang-by-gang run in which gang comes first when a cheap step is reached late, never in
  contiguity, capacity or demand.
- End points: `end_points` ends spread evenly from the latest (the deadline) to the earliest
  feasible one. The chosen allocation minimises (peak cost over its steps + alignment penalty,
  then total cost, then the earlier end, which leaves DRA more time, §7).
- Alignment penalty (§7, for problematic jobs): `alignment_weight` × |mid-point of the
  allocation − (a + d)/2| / ((d − a)/2), in units of cost (fraction of capacity).
- Multiple instances: costs and free space come folded over the instances (Plan.folded), and
  the one allocation is repeated at the same offset in every period.
- Incremental: admitted placements are never touched; `replan` moves the jobs it is asked to.

Greedy baseline (like YARN's GreedyReservationAgent favouring early allocation, with the
skyline as R_ORDER_NO_GAP stages whose gang is the whole stage): the skyline as fitted, at the
earliest offset in the window where every step fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from harvester.decisions.reservation_plan import MEM, VC, Placement, Plan, PlanError, ReservationRequest
from harvester.models.morpheus_params import PackingParams  # noqa: F401  (re-exported: the §6 knobs)




@dataclass(frozen=True)
class PlacementDecision:
    job_id: str
    accepted: bool
    placement: Placement | None
    reason: str


Agent = Callable[[Plan, ReservationRequest], PlacementDecision]


@dataclass(frozen=True)
class _Folded:
    frac: np.ndarray  # (2, P) max load / capacity over instances
    free: np.ndarray  # (2, P) min free resources over instances
    inv: np.ndarray  # (2, P) max 1 / capacity over instances


def _fold(plan: Plan, req: ReservationRequest) -> _Folded:
    req.validate(plan.lcm_steps)
    return _Folded(*plan.folded(req.period_steps))


@dataclass(frozen=True)
class _Window:
    """The folded plan over a request's window, position w = offset earliest + w."""

    frac: np.ndarray  # (2, W) load fraction
    free: np.ndarray  # (2, W) free resources
    step: np.ndarray  # (2, W) cost of one container
    q: np.ndarray  # (2,) one container


def _window(f: _Folded, req: ReservationRequest) -> _Window:
    idx = np.arange(req.earliest, req.deadline + 1) % req.period_steps
    q = np.array([req.container.memory_mb, req.container.vcores], dtype=np.int64)
    return _Window(f.frac[:, idx], f.free[:, idx], q[:, None] * f.inv[:, idx], q)


def _stage(win: _Window, lo: np.ndarray, hi: np.ndarray, per_step: int, gangs: int, gang: int) -> np.ndarray | None:
    """One stage for E end points at once over the window positions [lo, hi]: gangs per step,
    shape (E, Lmax) with column r the position hi − r (right to left); rows that do not fit are
    all −1. See the module doc for the reach and the fill."""
    # Each used step holds a gang and the used steps are contiguous from hi: at most G of them.
    length = np.minimum(hi - lo + 1, gangs)
    lmax = int(length.max())
    r = np.arange(lmax)
    pos = hi[:, None] - r[None, :]
    valid = r[None, :] < length[:, None]
    pos[~valid] = 0
    free = win.free[:, pos] // (gang * win.q)[:, None, None]
    cap = np.minimum(np.minimum(free[MEM], free[VC]), per_step)
    cap[~valid] = 0
    jmax = int(min(per_step, gangs, max(1, cap.max())))
    j = np.arange(1, jmax + 1, dtype=float) * gang
    frac, step = win.frac[:, pos], win.step[:, pos]
    cost = np.maximum(frac[MEM][:, :, None] + step[MEM][:, :, None] * j, frac[VC][:, :, None] + step[VC][:, :, None] * j)
    cost[np.arange(1, jmax + 1) > cap[:, :, None]] = np.inf
    reach = np.maximum.accumulate(cost[:, :, 0], axis=1)  # E_t: the level that reaches step t
    unlock = np.empty_like(reach)
    unlock[:, 0] = -np.inf
    unlock[:, 1:] = reach[:, :-1]  # E_t+1: step t becomes eligible once its right neighbour is used
    flat = np.maximum(cost, unlock[:, :, None]).reshape(len(hi), lmax * jmax)
    if gangs > flat.shape[1]:
        return None
    # Pass 1, the reach: the G-th lowest level λ; a step is reached when its entry level E_t is
    # below λ, or equal to it and early enough among the ties (row-major order: later step first).
    lam = np.partition(flat, gangs - 1, axis=1)[:, gangs - 1]
    ties_left = gangs - (flat < lam[:, None]).sum(axis=1)
    tie_rank = np.cumsum(flat == lam[:, None], axis=1)[:, ::jmax]  # ties up to each step's first gang
    reached = (reach < lam[:, None]) | ((reach == lam[:, None]) & (tie_rank <= ties_left[:, None]))
    reach_end = reached.sum(axis=1) - 1  # reached steps are a prefix of the columns
    # Pass 2, the fill: one gang on every reached step (no holes), the rest on the cheapest
    # gangs of the reached steps (ties: the later step).
    width = int(reach_end.max()) + 1
    inside = r[None, :width] <= reach_end[:, None]
    counts = np.zeros((len(hi), lmax), dtype=np.int64)
    counts[:, :width] = inside
    extra = gangs - inside.sum(axis=1)
    if jmax > 1 and extra.max() > 0:
        rest = cost[:, :width, 1:].copy()
        rest[~inside] = np.inf
        more = np.argsort(rest.reshape(len(hi), -1), axis=1, kind="stable")[:, : int(extra.max())]
        take = np.arange(more.shape[1])[None, :] < extra[:, None]
        rows = np.broadcast_to(np.arange(len(hi))[:, None], more.shape)
        np.add.at(counts, (rows[take], (more // (jmax - 1))[take]), 1)
    counts *= gang
    counts[~np.isfinite(lam)] = -1
    return counts


def _lowcost_ends(win: _Window, req: ReservationRequest, ends: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Stages in reverse order for every end point: (containers per window position (E, W), fits (E,))."""
    a = req.earliest
    alloc = np.zeros((len(ends), req.deadline - a + 1), dtype=np.int64)
    alive = np.ones(len(ends), dtype=bool)
    tau_r = np.array(ends, dtype=np.int64) - a  # window positions from here on
    stages = req.stages
    demand = np.cumsum([s.containers * s.steps for s in stages])
    steps = np.cumsum([s.steps for s in stages])
    for k in range(len(stages) - 1, -1, -1):
        remainder = tau_r + 1 - steps[k]
        alive &= remainder >= 0
        if not alive.any():
            break
        share = stages[k].containers * stages[k].steps / demand[k]
        lo = tau_r - (stages[k].steps + np.floor(np.maximum(remainder, 0) * share).astype(np.int64)) + 1
        rows = np.nonzero(alive)[0]
        got = _stage(win, lo[rows], tau_r[rows], stages[k].containers // stages[k].gang, stages[k].gangs,
                     stages[k].gang)
        if got is None:
            alive[:] = False
            break
        ok = got[:, 0] >= 0
        alive[rows[~ok]] = False
        rows, got = rows[ok], got[ok]
        i, r = np.nonzero(got > 0)  # column r is position tau_r − r; used columns are a prefix
        alloc[rows[i], tau_r[rows[i]] - r] = got[i, r]
        tau_r[rows] -= (got > 0).sum(axis=1)  # the next stage ends right before this one
    return alloc, alive


def _score(win: _Window, req: ReservationRequest, alloc: np.ndarray,
           weight: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(peak cost over the allocated steps + alignment penalty, total cost there, peak) per end point."""
    after = np.maximum(win.frac[MEM] + alloc * win.step[MEM], win.frac[VC] + alloc * win.step[VC])
    used = alloc > 0
    peak = np.where(used, after, -np.inf).max(axis=1)
    total = np.where(used, after, 0.0).sum(axis=1)
    penalty = np.zeros(len(alloc))
    if req.problematic and weight > 0:
        pos = np.arange(alloc.shape[1])
        first = np.where(used, pos, alloc.shape[1]).min(axis=1)
        last = np.where(used, pos, -1).max(axis=1)
        half = max((req.deadline - req.earliest) / 2.0, 0.5)
        penalty = weight * np.abs((first + last) / 2.0 - (req.deadline - req.earliest) / 2.0) / half
    return peak + penalty, total, peak


def _ends(req: ReservationRequest, n: int) -> list[int]:
    first = req.earliest + req.min_steps - 1
    if first > req.deadline:
        return []
    return sorted({int(round(e)) for e in np.linspace(req.deadline, first, num=min(n, req.deadline - first + 1))},
                  reverse=True)


def lowcost(plan: Plan, req: ReservationRequest, params: PackingParams = PackingParams()) -> PlacementDecision:
    """LowCost's decision for `req` on `plan` (module doc); the plan is not changed."""
    f = _fold(plan, req)
    ends = _ends(req, params.end_points)
    if not ends:
        return PlacementDecision(req.job_id, False, None, f"rejected: window [{req.earliest}, {req.deadline}] is "
                                                          f"shorter than the {req.min_steps} steps of the stages")
    win = _window(f, req)
    alloc, alive = _lowcost_ends(win, req, ends)
    if not alive.any():
        return PlacementDecision(req.job_id, False, None, f"rejected: no room: none of {len(ends)} end points in "
                                                          f"[{ends[-1]}, {ends[0]}] fits every stage under capacity")
    score, total, peak = _score(win, req, alloc, params.alignment_weight)
    # Lowest peak (+ penalty), then lowest total cost, then the earliest end (ends are descending).
    best = min(np.nonzero(alive)[0], key=lambda e: (score[e], total[e], -e))
    used = np.nonzero(alloc[best])[0]
    start, steps = req.earliest + int(used[0]), alloc[best, used[0]: used[-1] + 1]
    penalty = score[best] - peak[best]
    reason = (f"LowCost: steps {start}..{start + steps.size - 1} of every {req.period_steps}-step period "
              f"(window {req.earliest}..{req.deadline}), best of {int(alive.sum())} feasible end points out of "
              f"{len(ends)}; peak cost over its steps {peak[best]:.3f}"
              + (f" + alignment penalty {penalty:.3f}" if req.problematic else "")
              + f"; {int(steps.sum())} container-steps over {steps.size} steps "
                f"({steps.size / req.min_steps:.2f}x the skyline's length)")
    placement = Placement(req.job_id, req.container, req.period_steps, start % req.period_steps,
                          tuple(int(x) for x in steps), reason)
    return PlacementDecision(req.job_id, True, placement, reason)


def greedy(plan: Plan, req: ReservationRequest) -> PlacementDecision:
    """Earliest-fit baseline (module doc): the skyline as fitted at the earliest offset that fits."""
    f = _fold(plan, req)
    shape = np.repeat([s.containers for s in req.stages], [s.steps for s in req.stages]).astype(np.int64)
    starts = np.arange(req.earliest, req.deadline - shape.size + 2)
    if starts.size == 0:
        return PlacementDecision(req.job_id, False, None,
                                 f"rejected: window [{req.earliest}, {req.deadline}] is shorter than the skyline")
    idx = (starts[:, None] + np.arange(shape.size)[None, :]) % req.period_steps
    need_mem = shape * req.container.memory_mb
    need_vc = shape * req.container.vcores
    ok = ((f.free[MEM][idx] >= need_mem) & (f.free[VC][idx] >= need_vc)).all(axis=1)
    if not ok.any():
        return PlacementDecision(req.job_id, False, None,
                                 f"rejected: the skyline fits at no start in [{starts[0]}, {starts[-1]}]")
    start = int(starts[np.argmax(ok)])
    reason = (f"greedy earliest fit: steps {start}..{start + shape.size - 1} of every {req.period_steps}-step "
              f"period (window {req.earliest}..{req.deadline})")
    placement = Placement(req.job_id, req.container, req.period_steps, start % req.period_steps,
                          tuple(int(a) for a in shape), reason)
    return PlacementDecision(req.job_id, True, placement, reason)


def place(plan: Plan, req: ReservationRequest, agent: Agent = lowcost) -> tuple[PlacementDecision, Plan]:
    """One online step: the agent's decision, and the plan with it admitted (if accepted)."""
    if req.job_id in plan.placements:
        return PlacementDecision(req.job_id, False, None, f"rejected: {req.job_id} is already placed"), plan
    decision = agent(plan, req)
    return decision, (plan.add(decision.placement) if decision.accepted else plan)


def place_all(plan: Plan, requests: Iterable[ReservationRequest],
              agent: Agent = lowcost) -> tuple[list[PlacementDecision], Plan]:
    """Requests in arrival order (online); admitted ones stay where they are."""
    decisions = []
    for req in requests:
        decision, plan = place(plan, req, agent)
        decisions.append(decision)
    return decisions, plan


def replan(plan: Plan, requests: Sequence[ReservationRequest],
           agent: Agent = lowcost) -> tuple[list[PlacementDecision], Plan]:
    """Move the given jobs (only when asked): remove all of them, then place them in order. A job
    that no longer fits is rejected; the others' placements are kept as they were."""
    for req in requests:
        if req.job_id in plan.placements:
            plan = plan.remove(req.job_id)
    return place_all(plan, requests, agent)


def stats(plan: Plan) -> dict[str, float]:
    """Peak, mean and variance of the planned cost c(t) over the LCM."""
    c = plan.cost()
    return {"peak": float(c.max()), "mean": float(c.mean()), "variance": float(c.var())}


__all__ = ["PackingParams", "PlacementDecision", "PlanError", "greedy", "lowcost", "place", "place_all",
           "replan", "stats"]

"""The offline optimum of §6's packing problem for small instances (OR-Tools CP-SAT), to measure
LowCost's competitive ratio — pure (a solver call, no I/O).

§6: "we measure the performance of LowCost using the standard measure of competitive ratio ...
the ratio of cost (for our problem, the maximal height of the allocation) incurred by the
online algorithm compared to the offline optimal solution." The offline problem here has every
freedom LowCost has and more (so a LowCost plan is one of its solutions and the ratio is >= 1):
all requests known in advance; each stage k of job j is one contiguous block of steps inside
the job's window, stages back to back in order; on each step of its block a stage holds between
1 and containers/gang gangs, and all of its gangs somewhere in the block (no interval shares);
all instances of a job at the same offset. Objective: minimise max_t c(t), with
c(t) = max(load_mem/cap_mem, load_vcores/cap_vcores) written exactly in integers
(load_r(t) · S <= Z · cap_r(t), S = `scale`), so the optimum is within 1/S of the true one; the
reported peaks are recomputed from the solution's loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from ortools.sat.python import cp_model

from harvester.decisions.reservation_plan import MEM, VC, Placement, Plan, ReservationRequest


@dataclass(frozen=True)
class Optimum:
    status: str  # "OPTIMAL" or "FEASIBLE" (time limit hit); "INFEASIBLE" / "UNKNOWN": no solution
    peak: float | None  # max c(t) of the solution found, from its loads
    bound: float  # proven lower bound on the optimal peak
    placements: tuple[Placement, ...]


def optimum(plan: Plan, requests: Sequence[ReservationRequest], *, time_limit_s: float = 30.0, scale: int = 10_000,
            hint: Sequence[Placement] = (), workers: int = 1) -> Optimum:
    """Minimal peak cost for placing every request on `plan` (module doc); `hint` (e.g. LowCost's
    placements) seeds the search."""
    m = cp_model.CpModel()
    t_steps = plan.lcm_steps
    z = m.NewIntVar(0, scale, "z")
    load = [[[] for _ in range(t_steps)] for _ in range(2)]  # linear terms per resource and step
    blocks: dict[str, list[list]] = {}
    hints = {p.job_id: p for p in hint}
    for req in requests:
        req.validate(t_steps)
        width = req.deadline - req.earliest + 1
        q = (req.container.memory_mb, req.container.vcores)
        inst = np.arange(t_steps // req.period_steps) * req.period_steps
        stage_vars = []
        prev_end = None
        for k, st in enumerate(req.stages):
            per = st.containers // st.gang
            x = [m.NewIntVar(0, per, f"x{req.job_id}_{k}_{w}") for w in range(width)]
            on = [m.NewBoolVar(f"b{req.job_id}_{k}_{w}") for w in range(width)]
            begin = [m.NewBoolVar(f"s{req.job_id}_{k}_{w}") for w in range(width)]
            m.AddExactlyOne(begin)
            for w in range(width):
                m.Add(x[w] <= per * on[w])
                m.Add(x[w] >= on[w])
                m.AddImplication(begin[w], on[w])
                # Active only where the block begins or continues: one block, no holes.
                m.Add(on[w] <= begin[w] + (on[w - 1] if w else 0))
            m.Add(sum(x) == st.gangs)
            first = sum(w * begin[w] for w in range(width))
            length = sum(on)
            if prev_end is not None:
                m.Add(first == prev_end + 1)  # stages back to back, in order
            prev_end = first + length - 1
            for w in range(width):
                for t in (inst + (req.earliest + w) % req.period_steps) % t_steps:
                    load[MEM][int(t)].append(st.gang * q[MEM] * x[w])
                    load[VC][int(t)].append(st.gang * q[VC] * x[w])
            stage_vars.append((x, st.gang))
        blocks[req.job_id] = stage_vars
        if req.job_id in hints:
            _hint(m, req, stage_vars, hints[req.job_id])
    for r in (MEM, VC):
        for t in range(t_steps):
            cap = int(plan.capacity[r, t])
            expr = sum(load[r][t]) + int(plan.load[r, t])
            m.Add(expr <= cap)
            m.Add(expr * scale <= z * max(cap, 1))
    m.Minimize(z)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = workers
    status = solver.Solve(m)
    name = solver.StatusName(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Optimum(name, None, 0.0, ())
    placements = []
    new = plan
    for req in requests:
        alloc = np.concatenate([np.array([solver.Value(v) for v in x]) * g for x, g in blocks[req.job_id]]
                               ).reshape(len(req.stages), -1).sum(axis=0)
        used = np.nonzero(alloc)[0]
        p = Placement(req.job_id, req.container, req.period_steps, (req.earliest + int(used[0])) % req.period_steps,
                      tuple(int(a) for a in alloc[used[0]: used[-1] + 1]), "CP-SAT offline optimum")
        placements.append(p)
        new = new.add(p)
    return Optimum(name, float(new.cost().max()), solver.BestObjectiveBound() / scale, tuple(placements))


def _hint(m: cp_model.CpModel, req: ReservationRequest, stage_vars: list, placement: Placement) -> None:
    """Hint the steps of `placement` to the stages in order (each step of a LowCost placement
    belongs to one stage, and a stage's steps sum to its demand)."""
    offset = (placement.start - req.earliest) % req.period_steps
    steps = list(enumerate(placement.alloc, start=offset))
    i = 0
    for (x, gang), st in zip(stage_vars, req.stages):
        values = [0] * len(x)
        need = st.containers * st.steps
        while need > 0 and i < len(steps):
            w, a = steps[i]
            values[w], need, i = a, need - a, i + 1
        for var, v in zip(x, values):
            m.AddHint(var, v // gang)

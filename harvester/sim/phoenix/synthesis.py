"""Task constraints synthesized as in Phoenix §III-B from the constraint types of its Table II.

Paper 003 §III-B embeds Google's constraint characteristics (Sharma et al. [2]) into the Yahoo
and Cloudera traces; Table II lists the constraint types with the slowdown each causes.
`TABLE_II` keeps the paper's order and slowdowns and says how each type becomes a constraint
here. What the staged copy of the paper does not give, and we chose (docs/evaluation/phoenix.md):
- the per-type frequency column of Table II is unreadable in ../shared/papers (it prints
  "% 168656"): every type gets the same weight unless `weights` says otherwise;
- the share of constrained jobs: §II-A says tasks with constraints are "more than 50% of all
  the tasks" [2, 26] -> `constrained_fraction` 0.5 of the jobs (a job's tasks share its
  constraints, as synthesized jobs in [2]);
- a constrained job has 1, 2 or 3 distinct types with probabilities 0.7 / 0.25 / 0.05;
- the value: uniform over the attribute's distinct values (for `>=` / `<=` the value that
  every worker satisfies is left out), so rare values are asked for more than their share of
  the fleet — the imbalance behind Table II's ~2x slowdowns;
- hard / soft follows §III-A's examples: CPU clock speed and network bandwidth are soft,
  ISA, cores, disks, kernel and platform are hard; "Number of Nodes" is a placement
  constraint, modelled as spreading the job's tasks over distinct racks (soft).
Draws whose constraints (hard and soft: the "-C" baselines never relax) no worker satisfies are redrawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from harvester.models.constraints import Constraint, Op, Strength
from harvester.sim.phoenix.cluster import ATTRIBUTE_MIX, Workers


@dataclass(frozen=True, slots=True)
class ConstraintType:
    name: str              # as in Table II
    slowdown: float        # Table II "Relative Slowdown" (reported by the paper; not an input)
    attribute: str | None  # None: the placement constraint (spread over racks)
    op: Op
    strength: Strength


TABLE_II: tuple[ConstraintType, ...] = (
    ConstraintType("Architecture (ISA)", 2.03, "isa", Op.EQ, Strength.HARD),
    ConstraintType("Number of Nodes", 1.96, None, Op.EQ, Strength.SOFT),
    ConstraintType("Ethernet Speed", 1.91, "nic_gbps", Op.GE, Strength.SOFT),
    ConstraintType("Number of Cores", 1.90, "cores", Op.GE, Strength.HARD),
    ConstraintType("Maximum Disks", 1.90, "disks", Op.LE, Strength.HARD),
    ConstraintType("Kernel Version", 1.77, "kernel", Op.GE, Strength.HARD),
    ConstraintType("Platform Family", 1.77, "platform", Op.EQ, Strength.HARD),
    ConstraintType("CPU Clock Speed", 1.76, "clock_ghz", Op.GE, Strength.SOFT),
    ConstraintType("Minimum Disks", 0.91, "disks", Op.GE, Strength.HARD),
)
COUNT_PROBABILITIES = (0.70, 0.25, 0.05)  # 1, 2, 3 constraint types per constrained job


@dataclass(frozen=True, slots=True)
class JobConstraints:
    constraints: tuple[Constraint, ...] = ()
    spread: bool = False           # "Number of Nodes": tasks on distinct racks where possible
    types: tuple[str, ...] = ()    # Table II names drawn for the job

    @property
    def constrained(self) -> bool:
        return bool(self.types)


def _value(t: ConstraintType, rng: np.random.Generator) -> str:
    values = list(ATTRIBUTE_MIX[t.attribute][0])  # type: ignore[index]
    if t.op is Op.GE:
        values = values[1:]   # ">= smallest" is every worker
    elif t.op is Op.LE:
        values = values[:-1]  # "<= largest" is every worker
    return str(values[int(rng.integers(len(values)))])


def synthesize(n_jobs: int, workers: Workers, seed: int, *, constrained_fraction: float = 0.5,
               weights: Mapping[str, float] | None = None) -> list[JobConstraints]:
    """One `JobConstraints` per job (module docstring for the model)."""
    if not 0.0 <= constrained_fraction <= 1.0:
        raise ValueError("constrained_fraction must be within [0, 1]")
    names = [t.name for t in TABLE_II]
    unknown = set(weights or {}) - set(names)
    if unknown:
        raise ValueError(f"unknown Table II constraint types {sorted(unknown)} (known: {names})")
    w = np.array([(weights or {}).get(n, 1.0) for n in names], dtype=float)
    if np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be >= 0 and not all 0")
    p = w / w.sum()
    rng = np.random.default_rng(seed)
    out: list[JobConstraints] = []
    for _ in range(n_jobs):
        if rng.random() >= constrained_fraction:
            out.append(JobConstraints())
            continue
        k = min(int(rng.choice(len(COUNT_PROBABILITIES), p=COUNT_PROBABILITIES)) + 1, int(np.count_nonzero(p)))
        while True:
            picked = [TABLE_II[i] for i in rng.choice(len(TABLE_II), size=k, replace=False, p=p)]
            cs = tuple(Constraint(t.attribute, t.op, (_value(t, rng),), t.strength) for t in picked if t.attribute)
            if workers.table.mask_all(cs).any():  # the "-C" baselines treat soft constraints as hard
                break
        out.append(JobConstraints(cs, any(t.attribute is None for t in picked), tuple(t.name for t in picked)))
    return out


def frequencies(jobs: Sequence[JobConstraints]) -> dict[str, float]:
    """Share of jobs carrying each Table II type (for the report)."""
    n = max(1, len(jobs))
    return {t.name: sum(t.name in j.types for j in jobs) / n for t in TABLE_II}

"""Task constraints synthesized as in Phoenix §III-B from the constraint types of its Table II.

Paper 003 §III-B embeds Google's constraint characteristics (Sharma et al. [2]) into the Yahoo
and Cloudera traces; Table II lists the constraint types with the slowdown each causes. The
frequencies (Table II's frequency column is unreadable in ../shared/papers) come from the
Phoenix-derived simulator (docs/evaluation/phoenix-fidelity.md, S1):
- only short jobs carry constraints (long jobs none), one Table II type per constrained job;
- the type is drawn with the exact probabilities of the source's x/y chain (`share` below);
  21.19% of the short jobs stay unconstrained (the source's `random` branch plus the branch
  that falls through every condition, which there sends no probes: we read it as unconstrained);
  Platform Family never occurs;
- every type is one fixed constraint whose value is met by the source's share of the workers
  (cluster.ATTRIBUTE_MIX);
- hard / soft follows §III-A's examples: CPU clock speed and network bandwidth are soft, the
  others hard.
Draws whose constraints no worker satisfies (tiny test clusters) are redrawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from harvester.models.constraints import Constraint, Op, Strength
from harvester.sim.phoenix.cluster import Workers


@dataclass(frozen=True, slots=True)
class ConstraintType:
    name: str              # as in Table II
    slowdown: float        # Table II "Relative Slowdown" (reported by the paper; not an input)
    constraint: Constraint
    share: float           # probability that a short job carries this type (the source's x/y chain)


def _c(attribute: str, op: Op, value: str, strength: Strength = Strength.HARD) -> Constraint:
    return Constraint(attribute, op, (value,), strength)


TABLE_II: tuple[ConstraintType, ...] = (
    ConstraintType("Architecture (ISA)", 2.03, _c("isa", Op.EQ, "x86_64"), 0.2871),
    ConstraintType("Number of Nodes", 1.96, _c("cpus", Op.GE, "2"), 0.1485),
    ConstraintType("Ethernet Speed", 1.91, _c("nic_gbps", Op.GE, "10", Strength.SOFT), 0.0588),
    ConstraintType("Number of Cores", 1.90, _c("cores", Op.GE, "32"), 0.0590),
    ConstraintType("Maximum Disks", 1.90, _c("disks", Op.LE, "2"), 0.0590),
    ConstraintType("Kernel Version", 1.77, _c("kernel", Op.GE, "5.10"), 0.0395),
    ConstraintType("Platform Family", 1.77, _c("platform", Op.EQ, "A"), 0.0),
    ConstraintType("CPU Clock Speed", 1.76, _c("clock_ghz", Op.GE, "3.4", Strength.SOFT), 0.0472),
    ConstraintType("Minimum Disks", 0.91, _c("disks", Op.GE, "6"), 0.0890),
)
#: share of short jobs with a constraint in the source (the rest: 21.19%)
CONSTRAINED_FRACTION = sum(t.share for t in TABLE_II)


@dataclass(frozen=True, slots=True)
class JobConstraints:
    constraints: tuple[Constraint, ...] = ()
    types: tuple[str, ...] = ()    # Table II names drawn for the job

    @property
    def constrained(self) -> bool:
        return bool(self.types)


def synthesize(n_jobs: int, workers: Workers, seed: int, *, long: Sequence[bool] | None = None,
               constrained_fraction: float = CONSTRAINED_FRACTION,
               weights: Mapping[str, float] | None = None) -> list[JobConstraints]:
    """One `JobConstraints` per job (module docstring); `long[i]` jobs get none.

    `constrained_fraction` is the share of short jobs with a constraint, `weights` the relative
    frequency of the types among them (default: the source's shares)."""
    if not 0.0 <= constrained_fraction <= 1.0:
        raise ValueError("constrained_fraction must be within [0, 1]")
    names = [t.name for t in TABLE_II]
    unknown = set(weights or {}) - set(names)
    if unknown:
        raise ValueError(f"unknown Table II constraint types {sorted(unknown)} (known: {names})")
    w = np.array([(weights or {}).get(t.name, t.share) for t in TABLE_II], dtype=float)
    if np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be >= 0 and not all 0")
    if long is not None and len(long) != n_jobs:
        raise ValueError("one long flag per job")
    p = w / w.sum()
    rng = np.random.default_rng(seed)
    out: list[JobConstraints] = []
    for i in range(n_jobs):
        if rng.random() >= constrained_fraction or (long is not None and long[i]):
            out.append(JobConstraints())
            continue
        while True:
            t = TABLE_II[int(rng.choice(len(TABLE_II), p=p))]
            if workers.table.mask(t.constraint).any():  # the "-C" baselines treat soft constraints as hard
                break
        out.append(JobConstraints((t.constraint,), (t.name,)))
    return out


def frequencies(jobs: Sequence[JobConstraints]) -> dict[str, float]:
    """Share of jobs carrying each Table II type (for the report)."""
    n = max(1, len(jobs))
    return {t.name: sum(t.name in j.types for j in jobs) / n for t in TABLE_II}

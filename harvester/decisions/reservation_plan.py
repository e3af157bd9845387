"""The reservation plan LowCost packs into (Morpheus §6, paper 002) — pure values.

§6: "we force the constraint that all instances associated with the same periodic job would
have the same reservation across runs (namely, the same offset with respect to the period of
the job) ... we use the Least Common Multiple (LCM) of the time periods as the length of the
internal storage unit ... in practice, we set the LCM to be one day." A `Plan` is that storage
unit: `lcm_steps` steps of `step_s` seconds (default 1,440 × 1 minute), per step the capacity
and the load of memory (MB) and vcores, and the admitted `Placement`s. A plan is immutable:
placing returns a new plan, and admitted placements are never changed by placing another one.

Cost (§6 "Cost function"): c(t) = max(load_mem(t)/capacity_mem(t), load_vcores(t)/capacity_vcores(t)).
A job with period P (dividing the LCM) sees, at each offset o of its period, the worst of its
instances (§6 "Multiple instances": "the cost seen by j at the 5-th minute would be the maximum
over the costs at 12:05, 1:05, etc."): `Plan.folded(P)` returns per offset the maximum load
fraction and the minimum free resources over the instances (exact when capacity is constant
over the day; with a varying capacity it is conservative).

A request's skyline is a sequence of `Stage`s in containers of one size (§6 "Setting": stage k
has demand s_k and "may also have a minimum parallelism constraint (or gang size) g_k"): a stage
of n containers for D steps is n·D container-steps with maximum parallelism n (§5 "Estimating
parallelism": the fitted skyline is the maximum parallelism) and minimum parallelism `gang`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, Sequence

import numpy as np

from harvester.domain import Resources

MEM, VC = 0, 1  # rows of the load / capacity arrays


class PlanError(ValueError):
    """A request or placement does not fit the plan's rules (bad period, window, or capacity)."""


@dataclass(frozen=True, slots=True)
class Stage:
    """`containers` in use for `steps` steps (max parallelism), spread in gangs of `gang`."""

    containers: int
    steps: int = 1
    gang: int = 1

    def __post_init__(self) -> None:
        if self.containers < 1 or self.steps < 1 or self.gang < 1 or self.containers % self.gang:
            raise PlanError(f"bad stage {self}: containers >= 1, steps >= 1, gang divides containers")

    @property
    def gangs(self) -> int:
        return self.containers * self.steps // self.gang


@dataclass(frozen=True, slots=True)
class ReservationRequest:
    """One periodic job to place: every `period_steps` (dividing the LCM), its stages must run
    inside [earliest, deadline] (steps after the period start, inclusive; the window may cross
    into the next period but is shorter than one). `problematic` jobs get §7's alignment penalty."""

    job_id: str
    container: Resources
    stages: tuple[Stage, ...]
    period_steps: int
    earliest: int
    deadline: int
    problematic: bool = False

    @property
    def min_steps(self) -> int:
        return sum(s.steps for s in self.stages)

    def validate(self, lcm_steps: int) -> None:
        if not self.stages:
            raise PlanError(f"{self.job_id}: no stages")
        if self.container.memory_mb <= 0 or self.container.vcores <= 0:
            raise PlanError(f"{self.job_id}: container must have memory and vcores > 0")
        if self.period_steps < 1 or lcm_steps % self.period_steps:
            raise PlanError(f"{self.job_id}: period {self.period_steps} does not divide the LCM {lcm_steps}")
        if not 0 <= self.earliest < self.period_steps or not self.earliest <= self.deadline < self.earliest + self.period_steps:
            raise PlanError(f"{self.job_id}: window [{self.earliest}, {self.deadline}] must start in the period "
                            f"and be shorter than it ({self.period_steps})")


@dataclass(frozen=True, slots=True)
class Placement:
    """`alloc[s]` containers at offset `start + s` (mod the period) of every period; `reason`
    says why here."""

    job_id: str
    container: Resources
    period_steps: int
    start: int
    alloc: tuple[int, ...]
    reason: str = ""

    @property
    def end(self) -> int:
        return self.start + len(self.alloc) - 1

    def steps(self, lcm_steps: int) -> np.ndarray:
        """Plan steps of every instance, shape (instances, len(alloc))."""
        inst = np.arange(lcm_steps // self.period_steps)[:, None] * self.period_steps
        return (inst + self.start + np.arange(len(self.alloc))[None, :]) % lcm_steps


@dataclass(frozen=True, eq=False)
class Plan:
    lcm_steps: int
    step_s: float
    capacity: np.ndarray  # (2, lcm_steps) int64: memory MB, vcores
    load: np.ndarray  # (2, lcm_steps) int64
    placements: Mapping[str, Placement] = field(default_factory=lambda: MappingProxyType({}))

    def cost(self) -> np.ndarray:
        """c(t) of §6 per step."""
        return (self.load / np.maximum(self.capacity, 1)).max(axis=0)

    def folded(self, period: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per offset of a `period`: (max load fraction (2,P), min free (2,P) int, max 1/capacity (2,P))."""
        shape = (2, self.lcm_steps // period, period)
        cap = np.maximum(self.capacity, 1).reshape(shape)
        frac = (self.load.reshape(shape) / cap).max(axis=1)
        free = (self.capacity - self.load).reshape(shape).min(axis=1)
        return frac, free, (1.0 / cap).max(axis=1)

    def add(self, placement: Placement) -> Plan:
        """This plan plus `placement` (PlanError if the id is taken or any step overflows)."""
        if placement.job_id in self.placements:
            raise PlanError(f"{placement.job_id} is already placed; remove it first")
        load = self.load.copy()
        _apply(load, placement, self.lcm_steps, +1)
        over = np.nonzero((load > self.capacity).any(axis=0))[0]
        if over.size:
            raise PlanError(f"{placement.job_id} overflows the capacity at step {int(over[0])}")
        return Plan(self.lcm_steps, self.step_s, self.capacity, _frozen(load),
                    MappingProxyType({**self.placements, placement.job_id: placement}))

    def remove(self, job_id: str) -> Plan:
        placement = self.placements.get(job_id)
        if placement is None:
            raise PlanError(f"{job_id} is not in the plan")
        load = self.load.copy()
        _apply(load, placement, self.lcm_steps, -1)
        rest = {k: v for k, v in self.placements.items() if k != job_id}
        return Plan(self.lcm_steps, self.step_s, self.capacity, _frozen(load), MappingProxyType(rest))


def _apply(load: np.ndarray, p: Placement, lcm: int, sign: int) -> None:
    steps = p.steps(lcm)
    alloc = np.broadcast_to(np.asarray(p.alloc, dtype=np.int64), steps.shape)
    np.add.at(load[MEM], steps, sign * alloc * p.container.memory_mb)
    np.add.at(load[VC], steps, sign * alloc * p.container.vcores)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def empty_plan(capacity: Resources | np.ndarray, lcm_steps: int = 1440, step_s: float = 60.0) -> Plan:
    """A plan with nothing placed; `capacity` constant or per step (2, lcm_steps)."""
    if isinstance(capacity, Resources):
        cap = np.array([[capacity.memory_mb], [capacity.vcores]], dtype=np.int64).repeat(lcm_steps, axis=1)
    else:
        cap = np.array(capacity, dtype=np.int64)
    if cap.shape != (2, lcm_steps) or (cap < 0).any():
        raise PlanError(f"capacity must be (2, {lcm_steps}) and >= 0")
    return Plan(lcm_steps, step_s, _frozen(cap), _frozen(np.zeros((2, lcm_steps), dtype=np.int64)))


def stages_from_skyline(memory_mb: Sequence[int], vcores: Sequence[int], container: Resources,
                        gang: int = 1) -> tuple[Stage, ...]:
    """§5's skyline (resources per step) as stages of `container`s: per step the containers that
    cover both resources, consecutive equal steps merged; steps needing nothing are dropped (an
    allocation has no holes, §6)."""
    need = [max(math.ceil(m / container.memory_mb), math.ceil(v / container.vcores), 0)
            for m, v in zip(memory_mb, vcores)]
    need = [gang * math.ceil(n / gang) for n in need if n > 0]
    stages: list[Stage] = []
    for n in need:
        if stages and stages[-1].containers == n:
            stages[-1] = Stage(n, stages[-1].steps + 1, gang)
        else:
            stages.append(Stage(n, 1, gang))
    return tuple(stages)

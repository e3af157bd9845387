"""Small clusters for constraint-aware placement tests: nodes as (attributes, total, free)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from harvester.decisions.constrained_placement import PlacementContext, PlacementStrategy, RecentClass, TaskAsk
from harvester.decisions.placement_view import ClusterView, view_of
from harvester.domain import Resources
from harvester.models.constraints import Constraint, PlacementConstraint, Strength, parse_constraint


@dataclass
class Node:
    attrs: dict
    total: tuple[int, int] = (8192, 8)
    free: tuple[int, int] | None = None  # None = idle (free = total)
    running: bool = True


def view(nodes: Sequence[Node], time: float = 0.0) -> ClusterView:
    ids = [n.attrs.get("node_id", f"n{i}") for i, n in enumerate(nodes)]
    attrs = [{"rack": "/r0", **n.attrs, "node_id": ids[i]} for i, n in enumerate(nodes)]
    free = [n.free or n.total for n in nodes]
    return view_of(time, ids, attrs, np.array([n.total[0] for n in nodes]), np.array([n.total[1] for n in nodes]),
                   np.array([f[0] for f in free]), np.array([f[1] for f in free]), np.array([n.running for n in nodes]))


def task(task_id: str, *constraints: str, soft: Sequence[str] = (), mb: int = 1024, vc: int = 1,
         duration: float = 10.0, placement: Sequence[PlacementConstraint] = ()) -> TaskAsk:
    cs: list[Constraint] = [parse_constraint(c) for c in constraints] + [parse_constraint(c, Strength.SOFT) for c in soft]
    return TaskAsk(task_id, Resources(mb, vc), tuple(cs), tuple(placement), duration)


@dataclass
class Ctx:
    nodes: Sequence[Node]
    tasks: Sequence[TaskAsk]
    strategy: PlacementStrategy = field(default_factory=PlacementStrategy)
    recent: Sequence[RecentClass] = ()
    job_id: str = "job-1"

    def build(self) -> PlacementContext:
        v = view(self.nodes)
        return PlacementContext(0.0, self.job_id, v, tuple(self.tasks), self.strategy, tuple(self.recent))

"""Inputs of a run taken as given instead of built from the scenario's generators and traces.

`harvester whatif` (harvester/whatif/) replays what the sidecar's history store recorded: the
nodes with the sizes telemetry saw, every node's primary load, the finished jobs. It hands them
to `Simulation(scenario, given=GivenInputs(...))`; the scenario still says everything else
(policy, controller, substrate, duration, step). The simulator's own mechanisms are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harvester.domain import Resources
from harvester.sim.tenants.layout import PrimaryLoad
from harvester.sim.workload import JobSpec


@dataclass(frozen=True, eq=False)
class GivenInputs:
    """Nodes (id, NodeManager size, physical cores, rack), their primary load, the jobs.

    `load.servers` must equal the number of nodes, in the same order; `sources` says where each
    input came from (merged into the run's `sources`)."""

    node_ids: tuple[str, ...]
    totals: tuple[Resources, ...]
    physical_cores: np.ndarray
    racks: tuple[str, ...]
    load: PrimaryLoad
    jobs: list[JobSpec]
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.node_ids)
        if not (len(self.totals) == len(self.racks) == self.physical_cores.shape[0] == self.load.servers == n):
            raise ValueError(f"given inputs disagree on the node count ({n} ids, {len(self.totals)} sizes, "
                             f"{self.physical_cores.shape[0]} core counts, {len(self.racks)} racks, "
                             f"{self.load.servers} load rows)")

    def shape_runs(self) -> list[tuple[int, int]]:
        """Consecutive index ranges [lo, hi) of nodes of one shape (ClusterModel.add_nodes takes one shape)."""
        runs: list[tuple[int, int]] = []
        lo = 0
        for i in range(1, len(self.node_ids) + 1):
            if i == len(self.node_ids) or (self.totals[i], float(self.physical_cores[i])) != (
                    self.totals[lo], float(self.physical_cores[lo])):
                runs.append((lo, i))
                lo = i
        return runs

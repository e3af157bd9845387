"""What a simulation measures while it runs (the issue's "Measurements").

- per job: submit, first container, finish, execution time (finish − submit), tasks,
  attempts, kills, wasted CPU-seconds;
- task kills by cause: `primary` (the primary tenant needed the cores and the substrate killed
  the youngest containers), `rm_overcommit` (capacity cut below allocation with a timeout, the
  RM killed the youngest), `controller` (a KillContainer action), `reimage` (the server's disk
  was reimaged and its containers lost);
- wasted CPU-seconds: the cores a killed attempt burned before it died (its work is lost);
- harvested CPU-seconds: cores burned by attempts that completed (useful harvested work);
- primary not served: core-seconds the primary wanted and did not get while it shared an
  oversubscribed server with batch tasks (sim/sharing.py), and the node-seconds this lasted;
- batch slowed: core-seconds the running batch tasks wanted and did not get (their slowdown);
- utilization over time: one row per primary step (cluster-wide primary and batch cores,
  capacity, allocation, running containers, pending tasks, cumulative kills).
"""

from __future__ import annotations

from dataclasses import dataclass, field

KILL_CAUSES = ("primary", "rm_overcommit", "controller", "reimage")


@dataclass(slots=True)
class JobRecord:
    job_id: str
    name: str
    source: str
    recurring: bool
    submit_s: float
    start_s: float | None
    finish_s: float | None
    tasks: int
    attempts: int
    kills: int
    wasted_cpu_s: float

    @property
    def exec_s(self) -> float | None:
        return None if self.finish_s is None else self.finish_s - self.submit_s


UTIL_COLUMNS = ("time_s", "primary_cores", "batch_cores", "capacity_vcores", "allocated_vcores",
                "running_containers", "pending_tasks", "kills_total", "nodes_up")


@dataclass
class SimStats:
    """Counters and tables of one run; `summary()` turns them into the report's numbers."""

    kills: dict[str, int] = field(default_factory=lambda: {c: 0 for c in KILL_CAUSES})
    wasted_cpu_s: float = 0.0
    useful_cpu_s: float = 0.0
    attempts: int = 0
    tasks_completed: int = 0
    unserved_core_s: float = 0.0
    slowed_core_s: float = 0.0   # batch cores wanted but not granted (sharing an oversubscribed server)
    overflow_node_s: float = 0.0
    scheduling_passes: int = 0
    reimages: int = 0
    controller_ticks: int = 0
    controller_actions: int = 0
    controller_errors: int = 0
    jobs: list[JobRecord] = field(default_factory=list)
    utilization: list[tuple[float, ...]] = field(default_factory=list)

    def kill(self, cause: str, wasted_cpu_s: float) -> None:
        self.kills[cause] += 1
        self.wasted_cpu_s += wasted_cpu_s

    @property
    def kills_total(self) -> int:
        return sum(self.kills.values())

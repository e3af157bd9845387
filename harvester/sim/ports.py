"""The simulator's implementations of the live ports (DESIGN.md: "the simulator swaps the two
I/O ends and the clock, and reuses everything in between unchanged").

- `SimTelemetrySource` reads the cluster model into a `ClusterSnapshot` exactly as the RM
  REST telemetry would report it: `total` = the capacity the scheduler uses now (a node
  resource update changes it), `used` = allocated, node CPU in physical cores capped at the
  host, containers' CPU in vcores (ClusterModel's NM units); with the substrate's `usage`, what
  the primary and the containers GOT on an oversubscribed server (scenarios/cpu-contention: the
  NM measures what a process got, not what it wanted). Down (reimaged) servers are LOST.
- `SimActuator` applies `SetNodeCapacity` and `KillContainer` to the model through the
  substrate (so killed tasks re-run), returning failures as `ActionError`s on the next
  `poll_errors()` (the Actuator contract), never raising for one bad action.
- `SimJobRuns` is the `JobRunSource` of the jobs loop: the run's finished jobs, as the RM's
  finished applications would be read live (telemetry/rm_jobs.py).
"""

from __future__ import annotations

import bisect
from typing import Callable, Sequence

import numpy as np

from harvester.actuators.deadline import ActionBudget
from harvester.clock import Clock
from harvester.domain import Action, ActionError, ClusterSnapshot, ContainerInfo, KillContainer, NodeSample, Resources, SetNodeCapacity
from harvester.models.job_history import JobRun, RunningApp
from harvester.sim.cluster import ClusterModel
from harvester.sim.metrics.collector import SimStats
from harvester.sim.substrate import Substrate


class SimTelemetrySource:
    """`TelemetrySource` over the in-process cluster model; vectorized, ~10k nodes per poll."""

    def __init__(self, model: ClusterModel, *, include_containers: bool = True, name: str = "sim",
                 usage: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        self.model = model
        self.include_containers = include_containers
        self.name = name
        self._usage = usage

    def poll(self, now: float) -> ClusterSnapshot:
        m = self.model
        cores = m.physical_cores
        if self._usage is not None:  # what each side GOT on a shared server (the substrate's CPU sharing)
            primary, batch = self._usage()
        else:
            primary, batch = m.primary_cpu, m.container_cpu
        node_cpu = np.minimum(cores, primary + batch).tolist()
        cont_vc = (batch * m.total_vcores / cores).tolist()
        node_mem = (m.primary_mem + m.alloc_mem).tolist()
        states = np.where(m.running, "RUNNING", "LOST").tolist()
        nodes = tuple(
            NodeSample(nid, now, st, rack, host, Resources(cm, cv), Resources(am, av), nc, ncpu, cvc, nmem, float(am), pc)
            for nid, st, rack, host, cm, cv, am, av, nc, ncpu, cvc, nmem, pc in zip(
                m.node_ids, states, m.racks, m.hostnames, m.cap_mem.tolist(), m.cap_vcores.tolist(),
                m.alloc_mem.tolist(), m.alloc_vcores.tolist(), m.container_counts().tolist(), node_cpu, cont_vc,
                node_mem, cores.tolist())
        )
        containers: tuple[ContainerInfo, ...] = ()
        if self.include_containers:
            ids = m.node_ids
            containers = tuple(ContainerInfo(c.container_id, c.app_id, ids[c.node], Resources(c.memory_mb, c.vcores),
                                             c.started_at, c.is_am, c.priority) for c in m.running_containers())
        return ClusterSnapshot(now, self.name, nodes, containers, containers_complete=self.include_containers)


class SimActuator:
    """`Actuator` that changes the simulated cluster (see the module docstring)."""

    def __init__(self, substrate: Substrate, clock: Clock, stats: SimStats | None = None, *,
                 stale_after_s: float = 30.0) -> None:
        self.substrate = substrate
        self.clock = clock
        self.stats = stats if stats is not None else substrate.stats
        self.stale_after_s = stale_after_s
        self._errors: list[ActionError] = []

    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]:
        now = self.clock.now()
        model = self.substrate.model
        sent: list[Action] = []
        capacity_changed = False
        # the same deadline as live (principle 16); simulated time stands still during a batch
        budget = ActionBudget(self.clock, stale_after_s=self.stale_after_s, budget_s=self.stale_after_s)
        for a in actions:
            verdict = budget.check(a) if a.data_at is not None else None  # sim policies may leave it unset
            if verdict is not None and verdict.drop is not None:
                self._errors.append(ActionError(a, now, verdict.drop, {"request_id": request_id}, "dropped"))
                continue
            try:
                if isinstance(a, SetNodeCapacity):
                    node = model.index(a.node_id)
                    if not model.running[node]:
                        raise ValueError(f"node {a.node_id} is not RUNNING")
                    model.set_capacity(node, a.resources, now, a.overcommit_timeout_ms)
                    capacity_changed = True
                elif isinstance(a, KillContainer):
                    self.substrate.kill_container(a.container_id, now, a.graceful)
                else:
                    raise ValueError(f"the simulator cannot apply {type(a).__name__}")
            except (KeyError, ValueError) as exc:
                msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
                self._errors.append(ActionError(a, now, str(msg), {"request_id": request_id}))
                self.stats.controller_errors += 1
                continue
            sent.append(a)
        if capacity_changed:
            self.substrate.on_capacity_changed(now)
        self.stats.controller_actions += len(sent)
        return sent

    def poll_errors(self) -> list[ActionError]:
        errors, self._errors = self._errors, []
        return errors


class SimJobRuns:
    """`JobRunSource` over the run's finished jobs (`SimStats.jobs`, appended in finish order).

    A run lasts from submission to finish (the paper's job execution time, Algorithm 1 line 3);
    `poll(since)` returns the runs that finished at or after `since`.
    """

    def __init__(self, stats: SimStats, origin: float) -> None:
        self.stats = stats
        self.origin = origin

    def running(self) -> list[RunningApp]:
        return []  # the simulator's reports use finished runs only

    def poll(self, since: float) -> list[JobRun]:
        jobs = self.stats.jobs
        first = bisect.bisect_left(jobs, since - self.origin, key=lambda r: r.finish_s)
        return [JobRun(r.name, r.job_id, self.origin + r.submit_s, self.origin + r.finish_s)
                for r in jobs[first:] if r.finish_s is not None]

"""A tiny hand-driven rig of the simulator's pieces (model, engine, substrate); imported by the tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from harvester.clock import SimClock
from harvester.domain import Resources
from harvester.sim.cluster import ClusterModel
from harvester.sim.engine import Engine
from harvester.sim.metrics.collector import SimStats
from harvester.sim.policies import PlacementPolicy, SimContext, TenantInfo, build_policy
from harvester.sim.substrate import Ev, Substrate
from harvester.sim.workload import JobSpec, StageSpec


@dataclass
class Rig:
    model: ClusterModel
    engine: Engine
    clock: SimClock
    substrate: Substrate
    stats: SimStats

    def primary(self, t: float, cores: Sequence[float]) -> None:
        self.engine.push(t, Ev.PRIMARY_STEP, np.asarray(cores, dtype=np.float64))

    def submit(self, job: JobSpec) -> None:
        self.engine.push(job.submit_s, Ev.ARRIVAL, job)

    def run(self, until: float) -> None:
        self.engine.run(until)

    def record(self, job_id: str) -> Any:
        return next(j for j in self.stats.jobs if j.job_id == job_id)


def make_context(nodes: int, cores: int, memory_mb: int = 8192) -> SimContext:
    return SimContext(tuple(f"n{i}:8041" for i in range(nodes)), np.zeros(nodes, dtype=np.int32),
                      (TenantInfo(0, "env0/mf0", "env0", "mf0", nodes),), np.full(nodes, float(cores)),
                      np.full(nodes, cores, dtype=np.int64), np.full(nodes, memory_mb, dtype=np.int64), 120.0, 0.0, 7)


def make_rig(*, nodes: int = 1, cores: int = 4, policy: str | PlacementPolicy = "primary-aware",
             params: dict[str, Any] | None = None, delay: float = 5.0, interval: float = 1.0) -> Rig:
    model = ClusterModel()
    ctx = make_context(nodes, cores)
    model.add_nodes(ctx.node_ids, Resources(8192, cores), float(cores))
    clock = SimClock(0.0)
    engine = Engine(clock)
    stats = SimStats()
    pol = build_policy(policy, params or {}, ctx) if isinstance(policy, str) else policy
    sub = Substrate(model, engine, pol, stats, rng=np.random.default_rng(0), tenant_of=ctx.tenant_of, step_s=120.0,
                    cores_per_vcore=1.0, reaction_delay_s=delay, schedule_interval_s=interval, cluster_ts=1)
    engine.on(Ev.PRIMARY_STEP, lambda t, v: sub.primary_step(t, v))
    engine.on(Ev.ARRIVAL, lambda t, j: sub.submit(j, t))
    return Rig(model, engine, clock, sub, stats)


def job(job_id: str, submit: float, durations: Sequence[float], *, vcores: int = 1, memory_mb: int = 1024) -> JobSpec:
    return JobSpec(job_id, submit, (StageSpec("s1", np.asarray(durations, dtype=np.float64), vcores, memory_mb),))

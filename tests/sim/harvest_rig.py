"""A hand-built YARN-H cluster for the harvesting tests: two tenants whose every 2-minute sample
the test writes (history before t=0 and the future), the real policy and Harvester's live loops
(`harvester.sim.live:loops`) through the simulator's ports, driven by the engine like
`Simulation` does. Imported by the tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from harvester.board.harvesting import HarvestingBoard
from harvester.clock import SimClock
from harvester.control import ControlPlane
from harvester.domain import Resources
from harvester.history.sqlite import SqliteHistoryStore
from harvester.sim.cluster import ClusterModel
from harvester.sim.controller import ControllerContext, LoopDriver
from harvester.sim.engine import Engine
from harvester.sim.harvest import algorithm1, guard_only
from harvester.sim.harvest.evaluate import deep_merge
from harvester.sim.live import loops
from harvester.sim.metrics.collector import SimStats
from harvester.sim.policies import PlacementPolicy, SimContext, TenantInfo
from harvester.sim.ports import SimActuator, SimJobRuns, SimTelemetrySource
from harvester.sim.substrate import Ev, Substrate
from harvester.sim.workload import JobSpec, StageSpec

STEP = 120.0
START = 1_375_315_200.0
CORES = 16
DAY = 720  # samples


@dataclass
class HarvestRig:
    model: ClusterModel
    engine: Engine
    clock: SimClock
    substrate: Substrate
    stats: SimStats
    policy: PlacementPolicy
    plane: ControlPlane         # the live loops, ticked by the engine
    store: SqliteHistoryStore
    util: np.ndarray            # [tenants × (history + future)] utilization the test wrote
    history: int
    tenant_of: np.ndarray

    @property
    def board(self) -> HarvestingBoard:
        return self.plane.harvesting

    def submit(self, job: JobSpec) -> None:
        self.engine.push(START + job.submit_s, Ev.ARRIVAL, job)

    def run(self, until_s: float) -> None:
        self.engine.run(START + until_s)

    def nodes_of(self, tenant: int) -> set[int]:
        return set(np.flatnonzero(self.tenant_of == tenant).tolist())


def context(nodes_per_tenant: int, tenants: int = 2) -> SimContext:
    n = nodes_per_tenant * tenants
    return SimContext(tuple(f"h{i:02d}:8041" for i in range(n)), np.repeat(np.arange(tenants), nodes_per_tenant).astype(np.int32),
                      tuple(TenantInfo(t, f"env{t}/mf{t}", f"env{t}", f"mf{t}", nodes_per_tenant) for t in range(tenants)),
                      np.full(n, float(CORES)), np.full(n, CORES, dtype=np.int64), np.full(n, 65536, dtype=np.int64),
                      STEP, START, 5)


PRE_ISSUE_16: dict[str, Any] = {"reserve": {"method": "change"}, "guard": {"kill_when": "reserve_used"}}


def make(util: np.ndarray, history: int, *, nodes_per_tenant: int = 4, policy: str = "algorithm1",
         policy_params: Mapping[str, Any] | None = None, loop_params: Mapping[str, Any] | None = None,
         period_s: float = 120.0, offset_s: float = 6.0, include_containers: bool = False) -> HarvestRig:
    """`util[t, j]`: tenant t's utilization at sample j; samples < `history` are before t=0.
    Every server of a tenant follows its tenant's series exactly (the average server is the server)."""
    ctx = context(nodes_per_tenant, util.shape[0])
    model = ClusterModel()
    model.add_nodes(ctx.node_ids, Resources(65536, CORES), float(CORES))
    clock = SimClock(START)
    engine = Engine(clock, START)
    stats = SimStats()
    factory = {"algorithm1": algorithm1, "guard_only": guard_only}[policy]
    # the rules these scenarios were written for: margins from slot changes, kill to restore the whole
    # reserve (issue 16's defaults are tested in tests/decisions/test_guard_kills.py and below with
    # explicit settings); a test's own settings win
    policy_params, loop_params = dict(policy_params or {}), dict(loop_params or {})
    holder = policy_params if policy == "algorithm1" else loop_params
    holder["harvesting"] = deep_merge(PRE_ISSUE_16, holder.get("harvesting") or {})
    pol = factory(policy_params, ctx)
    sub = Substrate(model, engine, pol, stats, rng=np.random.default_rng(0), tenant_of=ctx.tenant_of, step_s=STEP,
                    cores_per_vcore=1.0, reaction_delay_s=5.0, schedule_interval_s=1.0, cluster_ts=1, origin=START)
    hist = util.astype(np.float32)
    store = SqliteHistoryStore(":memory:")
    cctx = ControllerContext(ctx, clock, SimTelemetrySource(model, include_containers=include_containers),
                             SimActuator(sub, clock, stats), store, SimJobRuns(stats, START), hist[:, :history], period_s, pol)
    plane = loops(loop_params, cctx)
    driver = LoopDriver(plane.loops, START + offset_s, stats)

    def step(now: float, k: int) -> None:
        sub.tenant_history = hist[:, : history + k + 1]  # the past only, as Simulation hands it out
        sub.primary_step(now, util[ctx.tenant_of, history + k] * CORES)
        if history + k + 1 < util.shape[1]:
            engine.push(now + STEP, Ev.PRIMARY_STEP, k + 1)

    engine.on(Ev.PRIMARY_STEP, step)
    engine.on(Ev.CONTROL, lambda now, _: engine.push(driver.run_due(now), Ev.CONTROL))
    engine.on(Ev.ARRIVAL, lambda t, j: sub.submit(j, t))
    engine.push(START, Ev.PRIMARY_STEP, 0)
    engine.push(driver.next_due(), Ev.CONTROL)
    return HarvestRig(model, engine, clock, sub, stats, pol, plane, store, util, history, ctx.tenant_of)


def job(job_id: str, submit_s: float, tasks: int, duration_s: float, *, name: str = "", vcores: int = 1) -> JobSpec:
    return JobSpec(job_id, submit_s, (StageSpec("s1", np.full(tasks, float(duration_s)), vcores, 1024),), name=name or job_id)


def flat(level: float, samples: int) -> np.ndarray:
    return np.full(samples, level)


def noisy(level: float, samples: int, seed: int, spike_every: int = 90) -> np.ndarray:
    """An unpredictable series: a random walk around `level` with spikes to 100 %."""
    rng = np.random.default_rng(seed)
    x = np.clip(level + np.cumsum(rng.normal(0, 0.02, samples)) * 0.3, 0.0, 1.0)
    x[::spike_every] = 1.0
    return x

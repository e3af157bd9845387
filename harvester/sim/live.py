"""Harvester's live control plane on simulated ports: `controller.factory: harvester.sim.live:loops`.

The simulator does not re-sequence any loop (DESIGN.md principle 15): this factory builds the
composition root's `ControlPlane` (harvester/control.py) — the telemetry, refit, guard, jobs and
retention loops `harvester serve` runs — over the ports of the `ControllerContext`
(`SimTelemetrySource`, `SimActuator`, SQLite `:memory:`, `SimJobRuns`), and the engine ticks
those very objects (sim/controller.py `LoopDriver`). What the simulator supplies is what an
operator supplies live:

- **settings**: the `harvesting:` section of the live config (same schema, same defaults; from
  the Algorithm 1 policy's `params.harvesting` when the run uses it, else from this factory's
  `params.harvesting`) plus the facts of the simulated cluster written as settings: one
  `harvesting.tenants` rule per tenant listing its servers, and `node_resources` with each
  server's NodeManager size and host memory = NM memory (the simulated NM offers the whole
  server, so memory is harvested like CPU). The poll and guard periods are
  `controller.period_s`; `telemetry.stale_after_s` is `params.stale_after_s` (default 30 s);
  raw samples are kept `params.raw_days` (default 2, the live default) as primary vectors only
  (`store.node_sample_rows: false`: 2,000 node rows per poll would cost more than the loops);
  `harvesting.reserve.rm_lag_s` defaults to 0, because the simulated RM shows the current
  sample (a live RM shows it 2-7 s late). The sidecar actuates (`harvesting.actuate: true`).
- **history**: the store starts with the tenants' past (`ControllerContext.past`) as
  2-minute tenant slots, as a live store holds a month of them when the sidecar (re)starts,
  and the last `raw_days` as one primary vector per poll (`ControllerContext.past_primary`);
  the telemetry loop folds every poll into the following slots and vectors, as live.

A policy that reads the loops' results (the Algorithm 1 policy) gets the state board through
its `read_board(board)`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from prometheus_client import CollectorRegistry
from pydantic import ValidationError

from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.config import Settings, TelemetrySettings
from harvester.config_harvesting import HarvestingSettings
from harvester.control import ControlPlane
from harvester.history.store import HistoryStore
from harvester.models.tenant_slots import TenantSlot, slot_start
from harvester.observability.metrics import Metrics
from harvester.sim.controller import ControllerContext
from harvester.sim.policies import SimContext

#: Keys of the `harvesting:` section the simulator writes from the scenario itself.
FROM_SCENARIO = ("tenants", "node_resources", "actuate", "unmatched_nodes")
RAW_DAYS = 2.0
DAY_S = 86400.0


def harvesting_settings(params: Mapping[str, Any] | None, step_s: float) -> HarvestingSettings:
    """The `harvesting:` section of the live config (same schema, same defaults) for a run.

    `sample_step_s` defaults to the scenario's `step_s`; any other value is refused because the
    history is on the scenario's grid. The keys of `FROM_SCENARIO` are refused: the simulated
    cluster defines its tenants and node sizes.
    """
    data = dict(params or {})
    reserve = dict(data.get("reserve") or {})
    reserve.setdefault("rm_lag_s", 0.0)  # the simulated RM shows the current sample (module docstring)
    data["reserve"] = reserve
    own = sorted(k for k in FROM_SCENARIO if k in data)
    if own:
        raise ValueError(f"harvesting: {', '.join(own)}: set by the simulator from the scenario's cluster and tenants")
    data.setdefault("sample_step_s", step_s)
    try:
        h = HarvestingSettings.model_validate(data)
    except ValidationError as exc:
        raise ValueError("harvesting: " + "; ".join(
            f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())) from None
    if not math.isclose(h.sample_step_s, step_s):
        raise ValueError(f"harvesting.sample_step_s {h.sample_step_s:g} must equal the scenario's step_s {step_s:g}")
    return h


def cluster_settings(h: HarvestingSettings, sim: SimContext) -> HarvestingSettings:
    """`h` with the simulated cluster's tenants and node sizes (module docstring)."""
    members: dict[int, list[str]] = {}
    for nid, t in zip(sim.node_ids, sim.tenant_of.tolist()):
        members.setdefault(int(t), []).append(nid)
    tenants = [{"tenant": t.name, "environment": t.environment, "nodes": members.get(t.index, [])}
               for t in sim.tenants if members.get(t.index)]
    sizes: dict[tuple[float, int, int], list[str]] = {}
    for nid, c, v, m in zip(sim.node_ids, sim.physical_cores.tolist(), sim.total_vcores.tolist(),
                            sim.total_memory_mb.tolist()):
        sizes.setdefault((float(c), int(v), int(m)), []).append(nid)

    def size(key: tuple[float, int, int]) -> dict[str, Any]:
        return {"physical_cores": key[0], "vcores": key[1], "memory_mb": key[2], "host_memory_mb": key[2]}

    common = max(sizes, key=lambda k: len(sizes[k]))
    resources = {**size(common), "overrides": [{"nodes": ids, **size(k)} for k, ids in sizes.items() if k != common]}
    data = h.model_dump()
    data.update(tenants=tenants, node_resources=resources, actuate=True, unmatched_nodes="ignore")
    return HarvestingSettings.model_validate(data)


def sim_settings(h: HarvestingSettings, sim: SimContext, *, period_s: float, stale_after_s: float,
                 raw_days: float = RAW_DAYS) -> Settings:
    """The full live `Settings` of the simulated sidecar (module docstring)."""
    h = cluster_settings(h, sim).model_copy(update={"control_period_s": period_s})
    # the scenario's period is simulated time and may exceed what an operator may configure
    # live (a scenario without real control uses 1e9 s): built, not validated against those bounds
    telemetry = TelemetrySettings.model_construct(poll_interval_s=period_s, stale_after_s=stale_after_s,
                                                  failure_backoff_max_s=period_s)
    return Settings.model_validate({
        "store": {"backend": "memory", "raw_samples_retention_days": raw_days, "node_sample_rows": False},
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0"},  # never a live sidecar's ports
    }).model_copy(update={"harvesting": h, "telemetry": telemetry})


def backfill(store: HistoryStore, sim: SimContext, past: Any) -> int:
    """The tenants' past as tenant slots (one poll each, the tenant's server count as nodes)."""
    rows = []
    steps = past.shape[1]
    for t in sim.tenants:
        series = past[t.index].tolist()
        for k, u in enumerate(series):
            if not math.isnan(u):
                at = slot_start(sim.start_s - (steps - k) * sim.step_s, sim.step_s)
                rows.append(TenantSlot(t.name, at, float(u), 1, t.servers))
    return store.add_tenant_slots(rows)


def backfill_primary(store: HistoryStore, ctx: ControllerContext, seconds: float) -> int:
    """The last `seconds` of every server's primary, as the polls would have stored it."""
    if ctx.past_primary is None or seconds <= 0:
        return 0
    times, util = ctx.past_primary(ctx.period_s, seconds)
    name = {t.index: t.name for t in ctx.sim.tenants}
    tenant = ctx.sim.tenant_of.tolist()
    order = sorted(range(len(ctx.sim.node_ids)), key=lambda i: (name.get(int(tenant[i]), ""), ctx.sim.node_ids[i]))  # the registry's node order
    ids = tuple(ctx.sim.node_ids[i] for i in order)
    written = 0
    for lo in range(0, times.size, 4096):
        written += store.append_primary_vectors(times[lo:lo + 4096].tolist(), ids, util[lo:lo + 4096][:, order])
    return written


def loops(params: Mapping[str, Any], ctx: ControllerContext) -> ControlPlane:
    """Controller factory (`controller.factory: harvester.sim.live:loops`; module docstring).

    params: `harvesting` (only without the Algorithm 1 policy, which carries its own),
    `stale_after_s` (default 30), `raw_days` (raw samples kept and backfilled, default 2).
    """
    p = dict(params)
    policy_h = getattr(ctx.policy, "harvesting", None)
    if isinstance(policy_h, HarvestingSettings):
        if "harvesting" in p:
            raise ValueError("the loops share the history-based policy's settings: give harvesting settings to the policy")
        h = policy_h
    else:
        h = harvesting_settings(p.pop("harvesting", None), ctx.sim.step_s)
    stale = float(p.pop("stale_after_s", 30.0))
    raw_days = float(p.pop("raw_days", RAW_DAYS))
    if p:
        raise ValueError(f"unknown params {sorted(p)} (harvesting, stale_after_s, raw_days)")
    backfill(ctx.store, ctx.sim, ctx.past)
    backfill_primary(ctx.store, ctx, raw_days * DAY_S)
    board = Board()
    plane = ControlPlane(sim_settings(h, ctx.sim, period_s=ctx.period_s, stale_after_s=stale, raw_days=raw_days), board,
                         source=ctx.source, store=ctx.store, metrics=Metrics(CollectorRegistry()),
                         actuator=ctx.actuator, job_runs=ctx.job_runs)
    read_board = getattr(ctx.policy, "read_board", None)
    if callable(read_board):
        read_board(HarvestingBoard(board))
    return plane

"""Recorded history → the simulator's inputs (pure): nodes, primary load, jobs (issue 28).

- **Primary load**: one row per node on the 2-minute slot grid (recorded.py says where each slot
  comes from); gaps are filled with the node's nearest known slot (before, else after), a node
  with no slot at all with its tenant's mean. The replay holds each slot's value for the slot
  (no within-slot variation is invented). The drain after the replay repeats the last recorded
  day at the same times of day (the store cannot know the future).
- **Jobs**: one job per finished run, submitted at its recorded submission. The store keeps a
  run's skyline (containers over time), not its DAG: a job becomes ONE stage whose container k
  runs as long as the skyline held more than k containers (so the job's container-seconds are
  the recorded ones, and it needs as many containers at once as its peak); without a skyline,
  `peak_containers` tasks of `container_seconds / peak` each. The container size is the
  skyline's peak vcores and memory per container. A run's name is its recurring identity; a name
  with two or more runs in the store is recurring with the median gap between its runs as period.
  The apps still running at the end of the history are replayed too (whatif/running.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from harvester.sim.given import GivenInputs
from harvester.sim.tenants.layout import PrimaryLoad, Tenant
from harvester.sim.tenants.patterns import classify
from harvester.sim.workload import JobSpec, StageSpec
from harvester.models.job_history import JobRun
from harvester.whatif.recorded import DAY_S, Recorded
from harvester.whatif.running import running_job

DEFAULT_CONTAINER_MB = 1024


@dataclass(frozen=True)
class Coverage:
    """What the history covered and what it cannot know (the report's coverage section)."""

    replay_days: float
    history_days: float
    nodes: int
    tenants: int
    node_slots: int
    from_vectors: int             # node-slots from the nodes' own polls
    from_tenant_slots: int        # node-slots from their tenant's average server
    gap_slots: int                # node-slots filled from the nearest known slot
    nodes_without_data: int
    jobs: int
    jobs_with_skyline: int
    jobs_not_succeeded: int
    recurring_names: int
    slo_contracts: int
    datanodes: int
    reimages: int
    drain_s: float
    cannot_know: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)   # what was left out while reading
    jobs_running_at_end: int = 0  # apps alive at the last poll, replayed as holding their last allocation


def fill_gaps(util: np.ndarray, tenant_of: np.ndarray) -> tuple[np.ndarray, int, int]:
    """NaN slots ← the node's previous known slot, else its next; a node with none ← its tenant's
    mean per slot (0 where none is known). Returns (filled float32, gaps filled, empty nodes)."""
    out = util.astype(np.float32, copy=True)
    gaps = int(np.isnan(out).sum())
    if gaps == 0:
        return out, 0, 0
    n, m = out.shape
    idx = np.where(~np.isnan(out), np.arange(m)[None, :], -1)
    np.maximum.accumulate(idx, axis=1, out=idx)
    rows = np.arange(n)[:, None]
    prev = np.where(idx >= 0, out[rows, np.maximum(idx, 0)], np.nan)
    rev = np.where(~np.isnan(out[:, ::-1]), np.arange(m)[None, :], -1)
    np.maximum.accumulate(rev, axis=1, out=rev)
    nxt = np.where(rev >= 0, out[:, ::-1][rows, np.maximum(rev, 0)], np.nan)[:, ::-1]
    out = np.where(np.isnan(prev), nxt, prev).astype(np.float32)
    empty = np.isnan(out).all(axis=1)
    for i in np.flatnonzero(empty).tolist():
        peers = (tenant_of == tenant_of[i]) & ~empty
        out[i] = np.nanmean(out[peers], axis=0) if peers.any() else 0.0
    return np.nan_to_num(out, nan=0.0), gaps, int(empty.sum())


def with_drain(rows: np.ndarray, drain_slots: int, step_s: float) -> np.ndarray:
    """`rows` followed by `drain_slots` slots repeating the last recorded day (same time of day)."""
    if drain_slots <= 0:
        return rows
    day = int(round(DAY_S / step_s))
    m = rows.shape[1]
    src = m - day + (np.arange(drain_slots) % day) if m >= day else np.arange(drain_slots) % m
    return np.concatenate([rows, rows[:, src]], axis=1)


def periods(runs: Sequence[JobRun]) -> dict[str, float]:
    """Recurring identity → period: names with ≥ 2 runs, the median gap between submissions."""
    by: dict[str, list[float]] = {}
    for r in runs:
        by.setdefault(r.job_name, []).append(r.started_at)
    out = {}
    for name, times in by.items():
        if len(times) >= 2:
            gaps = np.diff(np.sort(np.asarray(times)))
            gaps = gaps[gaps > 0]
            if gaps.size:
                out[name] = float(np.median(gaps))
    return out


def job_of(run: JobRun, *, origin: float, period_s: float | None) -> JobSpec:
    """One recorded run as a one-stage job (module docstring)."""
    u = run.usage
    peak = max(1, run.peak_containers)
    if u is not None and u.vcores and max(u.vcores) > 0:
        vc = np.asarray(u.vcores, dtype=np.int64)
        mem = np.asarray(u.memory_mb, dtype=np.int64)
        per_vc = max(1, int(round(vc.max() / peak)))
        per_mem = max(1, int(round(mem.max() / peak))) if mem.size and mem.max() > 0 else DEFAULT_CONTAINER_MB
        held = np.ceil(vc / per_vc).astype(np.int64)          # containers held per step
        k = np.arange(1, int(held.max()) + 1)
        durations = (held[None, :] >= k[:, None]).sum(axis=1) * u.step_s
        stage = StageSpec("recorded", durations.astype(np.float64), per_vc, per_mem)
    else:
        work = run.work
        each = max(1.0, work / peak)
        stage = StageSpec("recorded", np.full(peak, each), 1, DEFAULT_CONTAINER_MB)
    return JobSpec(run.app_id, run.started_at - origin, (stage,), run.job_name, period_s, "recorded",
                   {"final_status": run.final_status, "origin": run.origin})


def tenant_list(rec: Recorded, rows: np.ndarray, tenant_of: np.ndarray, names: Sequence[str]) -> tuple[Tenant, ...]:
    out = []
    for t, name in enumerate(names):
        members = np.flatnonzero(tenant_of == t)
        avg = rows[members].mean(axis=0)
        env = rec.nodes[int(members[0])].environment
        out.append(Tenant(t, name, env, "", classify(avg, rec.step_s), int(members.size), "recorded"))
    return tuple(out)


def drain_for(jobs: Sequence[JobSpec], step_s: float) -> float:
    """Time after the replay for the last jobs to finish: twice the longest job's critical path,
    between one hour and one day, on the slot grid."""
    longest = max((j.critical_path_s() for j in jobs), default=0.0)
    return math.ceil(min(DAY_S, max(3600.0, 2.0 * longest)) / step_s) * step_s


CANNOT_KNOW = (
    "jobs that were never submitted or waited outside YARN because capacity was missing: only jobs that ran are replayed",
    "each job's DAG: a recorded run becomes one stage holding its recorded skyline (container-seconds and peak kept)",
    "how the primary varied inside a 2-minute slot: the replay holds each slot's mean",
    "the primary load after the recorded end: the drain repeats the last recorded day",
    "when the apps still running at the end would finish: they are replayed holding their last allocation past the "
    "replay's end (a service's capacity is held, no completed work is added)",
    "how jobs would have behaved differently (retries, speculation, user resubmissions) under another policy",
)


def build_inputs(rec: Recorded) -> tuple[GivenInputs, Coverage]:
    """The simulator's given inputs and the coverage of the history (module docstring)."""
    names = sorted({n.tenant for n in rec.nodes})
    t_index = {t: i for i, t in enumerate(names)}
    tenant_of = np.asarray([t_index[n.tenant] for n in rec.nodes], dtype=np.int32)
    rows, gaps, empty = fill_gaps(rec.util, tenant_of)
    per = periods(rec.jobs)
    jobs = [job_of(r, origin=rec.replay_start, period_s=per.get(r.job_name)) for r in rec.jobs]
    jobs.sort(key=lambda j: (j.submit_s, j.job_id))
    drain = drain_for(jobs, rec.step_s)
    drain_slots = int(round(drain / rec.step_s))
    beyond = rec.end - rec.replay_start + drain + rec.step_s  # still running when the replay ends
    jobs += [running_job(r, origin=rec.replay_start, until_s=beyond) for r in rec.running]
    jobs.sort(key=lambda j: (j.submit_s, j.job_id))
    full = with_drain(rows, drain_slots, rec.step_s)
    n = len(rec.nodes)
    load = PrimaryLoad(rec.step_s, rec.history_slots, rec.replay_slots + drain_slots, full,
                       np.full(n, full.shape[1], dtype=np.int64), np.arange(n, dtype=np.int64),
                       np.zeros(n, dtype=np.int64), tenant_of, tenant_list(rec, rows, tenant_of, names))
    sources = {
        "tenants": f"{len(names)} tenants, {n} nodes: primary load recorded in the history store",
        "workload": f"{len(jobs) - len(rec.running)} recorded finished job runs ({len(per)} recurring names), "
                    f"{len(rec.running)} apps still running at the end",
    }
    given = GivenInputs(tuple(x.node_id for x in rec.nodes), tuple(x.total for x in rec.nodes),
                        np.asarray([x.physical_cores for x in rec.nodes], dtype=np.float64),
                        tuple(x.rack for x in rec.nodes), load, jobs, sources)
    cov = Coverage(
        replay_days=(rec.end - rec.replay_start) / DAY_S, history_days=(rec.replay_start - rec.past_start) / DAY_S,
        nodes=n, tenants=len(names), node_slots=int(rec.util.size), from_vectors=int(rec.from_vectors.sum()),
        from_tenant_slots=int(rec.from_slots.sum()), gap_slots=gaps, nodes_without_data=empty, jobs=len(jobs) - len(rec.running),
        jobs_with_skyline=sum(1 for r in rec.jobs if r.usage is not None),
        jobs_not_succeeded=sum(1 for r in rec.jobs if not r.succeeded), recurring_names=len(per),
        slo_contracts=len(rec.slos), datanodes=len(rec.datanodes), reimages=len(rec.reimages), drain_s=drain,
        cannot_know=CANNOT_KNOW, notes=tuple(rec.notes),
        jobs_running_at_end=len(rec.running))
    return given, cov


def modal_shape(given: GivenInputs) -> tuple[int, float, int]:
    """(physical cores, vcores per core, memory MB) of the most common node shape."""
    shapes: dict[tuple[float, int, int], int] = {}
    for t, c in zip(given.totals, given.physical_cores.tolist()):
        key = (float(c), t.vcores, t.memory_mb)
        shapes[key] = shapes.get(key, 0) + 1
    cores, vcores, mem = max(shapes, key=lambda k: shapes[k])
    return max(1, int(round(cores))), vcores / max(1, int(round(cores))), mem


def scenario_data(given: GivenInputs, rec: Recorded, drain_s: float, harvesting: Mapping[str, Any], *,
                  period_s: float, seed: int = 1) -> dict[str, Any]:
    """The YARN-H scenario (policy Algorithm 1 + Harvester's live loops) of the replay; the
    policies are turned from it by sim/harvest/evaluate.policy_overrides, as in the evaluation."""
    cores, per_core, mem = modal_shape(given)
    return {
        "name": "whatif", "description": "replay of the history store (harvester whatif)", "seed": seed,
        "duration_s": rec.end - rec.replay_start, "drain_s": drain_s, "step_s": rec.step_s,
        "start_time": rec.replay_start,
        "cluster": {"servers": len(given.node_ids), "cores": cores, "vcores_per_core": per_core, "memory_mb": mem},
        "tenants": {"count": len(given.load.tenants), "history_s": rec.replay_start - rec.past_start},
        "workload": {"source": "synthetic", "synthetic": {"jobs": 0}},
        "policy": {"name": "harvester.sim.harvest:algorithm1", "params": {"harvesting": dict(harvesting)}},
        "controller": {"factory": "harvester.sim.live:loops", "period_s": period_s, "offset_s": 1.0,
                       "include_containers": False},
        "substrate": {"primary_weight": 1},
        "outputs": {"plots": False, "csv": False},
    }

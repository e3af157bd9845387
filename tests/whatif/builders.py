"""A small synthetic history store for the whatif tests, written through the store's own APIs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harvester.config_harvesting import HarvestingSettings
from harvester.domain import NodeBaseline, Resources
from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.job_history import JobRun, RunUsage
from harvester.models.tenant_slots import TenantSlot

STEP = 120.0
DAY = 86400.0
START = 1_790_000_000.0 - (1_790_000_000.0 % DAY)


@dataclass
class Built:
    store: SqliteHistoryStore
    ids: list[str]
    util: np.ndarray          # [slot, node] as written (one poll per slot)
    jobs: list[JobRun]
    harvesting: HarvestingSettings
    end: float


def settings(tenants: int = 2) -> HarvestingSettings:
    return HarvestingSettings.model_validate({
        "node_resources": {"physical_cores": 8},
        "tenants": [{"tenant": f"t{t}", "hostname_pattern": f"^t{t}-"} for t in range(tenants)],
    })


def build(path: str = ":memory:", *, nodes_per_tenant: int = 3, tenants: int = 2, days: float = 2.0,
          vector_days: float | None = None, jobs_per_hour: float = 6.0, seed: int = 3,
          job_seconds: float = 900.0, containers: int = 4) -> Built:
    """`days` of tenant slots; primary vectors (one per slot) over the last `vector_days` (default all);
    jobs with skylines over the whole span; node baselines of 16 vcores / 32 GB."""
    rng = np.random.default_rng(seed)
    store = SqliteHistoryStore(path)
    ids = [f"t{t}-n{i}.test:8041" for t in range(tenants) for i in range(nodes_per_tenant)]
    store.record_node_baselines([NodeBaseline(n, n.rsplit(":", 1)[0], Resources(32768, 16), START) for n in ids])
    steps = int(days * DAY / STEP)
    t = np.arange(steps) * STEP
    util = np.empty((steps, len(ids)), dtype=np.float32)
    for k in range(tenants):
        base = 0.3 + 0.2 * np.sin(2 * np.pi * t / DAY + k)
        cols = slice(k * nodes_per_tenant, (k + 1) * nodes_per_tenant)
        util[:, cols] = np.clip(base[:, None] + rng.normal(0, 0.02, (steps, nodes_per_tenant)), 0, 1)
        avg = util[:, cols].mean(axis=1)
        store.add_tenant_slots([TenantSlot(f"t{k}", START + i * STEP, float(avg[i]), 1, nodes_per_tenant)
                                for i in range(steps)])
    first = 0 if vector_days is None else max(0, steps - int(vector_days * DAY / STEP))
    times = START + np.arange(first, steps) * STEP + 5.0
    store.append_primary_vectors(times.tolist(), ids, util[first:])
    jobs = []
    n_jobs = int(days * 24 * jobs_per_hour)
    for i in range(n_jobs):
        submit = START + float(rng.uniform(0, days * DAY - 2 * job_seconds))
        name = f"daily-{i % 3}" if i % 2 == 0 else f"adhoc-{i}"
        steps_u = int(np.ceil(job_seconds / 60.0))
        usage = RunUsage(60.0, submit + 5, tuple([containers * 1024] * steps_u), tuple([containers] * steps_u), 0.0,
                         (steps_u - 1) * 60.0)
        jobs.append(JobRun(name, f"application_1_{i:05d}", submit, submit + 5 + job_seconds, containers,
                           containers * job_seconds, submit + 5, "SUCCEEDED", "default", "rm", usage))
    store.append_job_runs(jobs)
    return Built(store, ids, util, sorted(jobs, key=lambda j: j.started_at), settings(tenants), START + steps * STEP)

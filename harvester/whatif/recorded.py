"""What the history store recorded, read once for `harvester whatif` (issue 28).

The HistoryStore port (history/store.py) holds what a simulation needs: the NodeManagers (their
first-seen size, `node_baselines`, and their raw samples), every harvested node's primary
utilization per poll (`primary_vectors`), each tenant's 2-minute "average server" (`tenant_slots`,
OSDI'16 §3.2), the finished jobs with their skylines (`job_runs`), the SLO contracts (Morpheus
§4), the DataNodes and their reimages (OSDI'16 §3.3). `read_recorded` gathers them for a time
range; everything downstream (inputs.py) is pure.

Per node, the primary load on the slot grid (`step_s`, 2 minutes) comes from, in order: the mean
of its polls in the slot (primary vectors, read for the replay and the `RAW_DAYS` before it that the
simulated loops start with), else its tenant's average server in that slot (tenant
slots: the embedded default's synthesized month has only these), else a gap, filled by the
nearest known value of the node (counted, and said in the report).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.strategy import NodeIdentity, configured_physical_cores, resolve_tenant
from harvester.domain import Resources
from harvester.history.store import HistoryStore
from harvester.models.hdfs_grid_model import GridModel
from harvester.models.job_history import JobRun, RunningApp
from harvester.models.reimage_detection import DataNodeObservation, ReimageEvent
from harvester.models.slo_contract import SloContract
from harvester.sim.live import RAW_DAYS
from harvester.whatif.running import still_running

DAY_S = 86400.0


class WhatifInputError(ValueError):
    """The store cannot feed a what-if run (missing, empty, too little history): one line, exit 2."""


@dataclass(frozen=True)
class Node:
    node_id: str
    hostname: str
    tenant: str
    environment: str
    total: Resources
    physical_cores: float
    rack: str


@dataclass
class Recorded:
    """The store's contents for [past_start, end): nodes, primary matrix, jobs, SLOs, DataNodes."""

    nodes: list[Node]
    step_s: float
    past_start: float                 # first slot of the matrix (history before the replay)
    replay_start: float               # first slot replayed
    end: float                        # end of the replay (exclusive, on the slot grid)
    util: np.ndarray                  # float32[node, slot] primary utilization, NaN = unknown
    from_vectors: np.ndarray          # bool[node, slot]: from the node's own polls
    from_slots: np.ndarray            # bool[node, slot]: from its tenant's average server
    jobs: list[JobRun]
    slos: dict[str, SloContract]
    datanodes: dict[str, DataNodeObservation]
    reimages: list[ReimageEvent]
    grid: GridModel | None
    notes: list[str] = field(default_factory=list)
    running: list[RunningApp] = field(default_factory=list)  # alive at the last poll (whatif/running.py)

    @property
    def history_slots(self) -> int:
        return int(round((self.replay_start - self.past_start) / self.step_s))

    @property
    def replay_slots(self) -> int:
        return int(round((self.end - self.replay_start) / self.step_s))


def _nodes(store: HistoryStore, h: HarvestingSettings, vector_ids: set[str], since: float) -> tuple[list[Node], int]:
    """Every NodeManager the store knows, with its first-seen size and the tenant rules' tenant
    (a node's last raw sample since `since` fills what the baseline and settings lack), and how
    many were left out (size, cores or tenant unknown)."""
    baselines = store.node_baselines()
    ids = sorted(set(baselines) | vector_ids | set(store.node_ids()))
    out = []
    left_out = 0
    for nid in ids:
        b = baselines.get(nid)
        host = b.hostname if b is not None else nid.rsplit(":", 1)[0]
        sample = None
        if b is None or configured_physical_cores(h, nid, host) is None:
            recent = store.node_samples(since=since, node_ids=[nid])
            sample = recent[-1] if recent else None
        cores = configured_physical_cores(h, nid, host)
        if cores is None and sample is not None:
            cores = sample.physical_cores
        total = b.resources if b is not None else (sample.total if sample is not None else None)
        owner = None if total is None or not cores else resolve_tenant(h, NodeIdentity(nid, host, total, cores))
        if owner is None or total is None or not cores:
            left_out += 1
            continue
        out.append(Node(nid, host, owner[0], owner[1], total, float(cores),
                        sample.rack if sample is not None and sample.rack else "/default-rack"))
    return out, left_out


def data_span(store: HistoryStore, slots: list | None = None) -> tuple[float, float] | None:
    """(first, last) time of primary data: the tenant slots (every poll is folded into them, and
    they outlive raw vectors; `slots`: already read), else the primary vectors; None if none."""
    slots = store.tenant_slots(since=0.0) if slots is None else slots
    if slots:
        return slots[0].start, slots[-1].start
    lo, hi = math.inf, -math.inf
    for block in store.primary_vectors(since=0.0):
        if block.times.size:
            lo, hi = min(lo, float(block.times[0])), max(hi, float(block.times[-1]))
    return None if lo == math.inf else (lo, hi)


def read_recorded(store: HistoryStore, h: HarvestingSettings, *, days: float, history_days: float | None = None,
                  progress: Callable[[float, str], None] | None = None) -> Recorded:
    """Read the last `days` of the store as the replay and up to `history_days` (default:
    `h.window_days`, the class model's window) before it as the past the loops start with."""
    step = float(h.sample_step_s)
    all_slots = store.tenant_slots(since=0.0)
    span = data_span(store, all_slots)
    if span is None:
        raise WhatifInputError("the history store holds no primary load (no tenant slots, no primary vectors): "
                               "run the sidecar first (make run), or pass --store PATH of one that ran")
    end = math.floor(span[1] / step) * step + step
    replay_start = max(math.floor(span[0] / step) * step, end - days * DAY_S)
    past_days = h.window_days if history_days is None else history_days
    past_start = max(math.floor(span[0] / step) * step, replay_start - past_days * DAY_S)
    if end - replay_start < 3600.0:
        raise WhatifInputError(f"the history store covers {(end - replay_start) / 3600:.2f} h of primary load: "
                               "a what-if needs at least one hour")
    slots = int(round((end - past_start) / step))
    vector_ids: set[str] = set()
    blocks = []
    # per-node detail is needed for the replay and the raw days the loops start with (sim/live.py
    # backfills RAW_DAYS of primary vectors); earlier slots are the tenant's average server anyway
    for block in store.primary_vectors(since=max(past_start, replay_start - RAW_DAYS * DAY_S), until=end):
        vector_ids.update(block.node_ids)
        blocks.append(block)
    nodes, left_out = _nodes(store, h, vector_ids, since=replay_start - RAW_DAYS * DAY_S)
    if not nodes:
        raise WhatifInputError("the history store knows no NodeManager with a size and a tenant "
                               "(node baselines / samples, harvesting.tenants / node_resources)")
    index = {n.node_id: i for i, n in enumerate(nodes)}
    total = np.zeros((len(nodes), slots), dtype=np.float32)
    count = np.zeros((len(nodes), slots), dtype=np.uint16)
    for bi, block in enumerate(blocks):
        cols = np.asarray([index.get(n, -1) for n in block.node_ids])
        keep = cols >= 0
        if not keep.any():
            continue
        k = np.floor((block.times - past_start) / step).astype(np.int64)
        vals = block.values[:, keep]
        ok = ~np.isnan(vals)
        rows = np.broadcast_to(cols[keep][None, :], vals.shape)
        kk = np.broadcast_to(k[:, None], vals.shape)
        np.add.at(total, (rows[ok], kk[ok]), vals[ok])
        np.add.at(count, (rows[ok], kk[ok]), 1)
        if progress is not None:
            progress(0.5 * (bi + 1) / len(blocks), "reading primary vectors")
    del blocks
    from_vectors = count > 0
    util = np.full((len(nodes), slots), np.nan, dtype=np.float32)
    np.divide(total, count, out=util, where=from_vectors)
    del total, count
    tenant_rows: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        tenant_rows.setdefault(n.tenant, []).append(i)
    from_slots = np.zeros_like(from_vectors)
    names = sorted(tenant_rows)
    t_of = {t: i for i, t in enumerate(names)}
    pick = [(t_of[x.tenant], x.start, x.util_sum / x.polls) for x in all_slots if x.polls > 0 and x.tenant in t_of]
    del all_slots
    if pick:
        cols = np.asarray(pick, dtype=np.float64).T
        k = np.rint((cols[1] - past_start) / step).astype(np.int64)
        ok = (k >= 0) & (k < slots)
        tenant_util = np.full((len(names), slots), np.nan, dtype=np.float32)
        tenant_util[cols[0][ok].astype(np.int64), k[ok]] = cols[2][ok]
        for t, name in enumerate(names):
            rows = np.asarray(tenant_rows[name])
            fill = ~from_vectors[rows] & ~np.isnan(tenant_util[t])[None, :]
            util[rows] = np.where(fill, tenant_util[t][None, :], util[rows])
            from_slots[rows] = fill
    jobs = [r for r in store.job_runs(since=replay_start, until=end + DAY_S, with_usage=True)
            if replay_start <= r.started_at < end]
    running = still_running(store.running_apps(since=replay_start), {r.app_id for r in jobs},
                            replay_start=replay_start, end=end)
    return Recorded(nodes, step, past_start, replay_start, end, util, from_vectors, from_slots, jobs,
                    store.slo_contracts(), store.hdfs_datanodes(),
                    store.hdfs_reimages(since=past_start, until=end), store.hdfs_grid(),
                    [f"{left_out} NodeManagers left out: size, physical cores or tenant unknown "
                     "(node_resources, tenant rules with unmatched_nodes: ignore)"] if left_out else [],
                    running=running)

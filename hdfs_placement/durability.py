"""Durability and availability of harvested HDFS storage over time (OSDI'16 §4.2, §6) — pure.

A discrete-event model of one cluster: blocks are written over time with replication R, disk
reimages (``reimage.ReimageLog``, correlated per tenant) destroy every replica on the reimaged
servers and wipe their harvested space, and the NameNode re-replicates a lost replica after
``rereplication_delay_s``. A block is LOST when its last live replica is destroyed before a
re-replication completes (a copy needs a live source when it completes). A block is
UNAVAILABLE while it has live replicas and all of them are on busy servers
(``availability``). Placement policies (``policies.SimPolicy``) choose every target, for
writes and for re-replications, from the free space and busy flags of that moment.

Re-replication delay. HDFS notices a reimaged DataNode when it stops heartbeating: it is
declared dead after 2 x ``dfs.namenode.heartbeat.recheck-interval`` (5 min) + 10 x
``dfs.heartbeat.interval`` (3 s) = 10.5 min. The RedundancyMonitor then schedules work every
``dfs.namenode.redundancy.interval.seconds`` (3 s), up to
``dfs.namenode.replication.work.multiplier.per.iteration`` (2) blocks per live DataNode per
round, with ``dfs.namenode.replication.max-streams`` (2) copies per source; a 128 MiB copy
takes seconds. The default ``rereplication_delay_s`` = 900 s (15 min) is the dead-node
timeout plus a few minutes of queueing and copying; sweep it (e.g. 5 min to 1 h) in
evaluations, since big correlated reimages queue more work than that.

Modelling choices (documented approximations):
- A replica dies at the first reimage of its server strictly after the replica was created;
  events at the same instant are applied reimages first, then completed re-replications,
  then writes (so a write at the very instant of a reimage survives it).
- A re-replication that finds no eligible server is dropped (counted in
  ``rereplication_failures``): the block keeps fewer replicas until it is lost or the run
  ends. Blocks are never deleted by users; there is no over-replication.
- Free space: each replica takes ``block_bytes``; a reimage restores the server's
  ``free_bytes``. Busy flags follow the tenant utilization series at its step.
- Policies refresh their tables every ``refresh_interval_s`` (the plug-in's long-poll).

Data structures (a month of 10,000 servers and 1,000,000 blocks fits in ~0.5 GB): flat
``array`` slots of ``block * R + k`` (server, alive), per reimage event an ``array`` of the
replica slots it will destroy (computed when a replica is created, from each server's sorted
reimage times), and an append-only log of availability segments evaluated with bit-packed
busy flags at the end. Only events are visited; time between them costs nothing.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from hdfs_placement.availability import PackedBusy, busy_matrix, segment_busy_steps
from hdfs_placement.index import LiveState
from hdfs_placement.policies import SimCluster, SimPolicy
from hdfs_placement.reimage import MONTH_S, ReimageLog, monthly_tenant_rates

BLOCK_BYTES = 128 * 1024 * 1024  # dfs.blocksize default


@dataclass(frozen=True)
class Workload:
    """Blocks to write: time (sorted, seconds) and writer server (-1 = off-cluster client)."""

    write_times_s: np.ndarray
    writers: np.ndarray
    block_bytes: int = BLOCK_BYTES

    def __post_init__(self) -> None:
        if len(self.write_times_s) != len(self.writers):
            raise ValueError("Workload: write_times_s and writers differ in length")
        if np.any(np.diff(self.write_times_s) < 0):
            raise ValueError("Workload: write_times_s must be sorted")


def uniform_workload(n_blocks: int, horizon_s: float, n_servers: int, rng: np.random.Generator | int, *,
                     on_cluster_writers: float = 1.0, block_bytes: int = BLOCK_BYTES) -> Workload:
    """Writes at uniform random times; a share ``on_cluster_writers`` written by a random server."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    times = np.sort(gen.uniform(0.0, horizon_s, n_blocks))
    writers = np.where(gen.random(n_blocks) < on_cluster_writers, gen.integers(0, n_servers, n_blocks), -1)
    return Workload(times, writers.astype(np.int64), block_bytes)


@dataclass(frozen=True)
class DurabilityConfig:
    replication: int = 3
    rereplication_delay_s: float = 900.0
    busy_cpu_threshold: float = 0.9
    util_step_s: float = 120.0  # AutoPilot samples every 2 minutes (§3.2)
    refresh_interval_s: float = 3600.0

    def __post_init__(self) -> None:
        if not 1 <= self.replication <= 8:
            raise ValueError("replication must be within 1..8")
        if self.rereplication_delay_s < 0 or self.util_step_s <= 0 or self.refresh_interval_s <= 0:
            raise ValueError("delays and steps must be positive")


@dataclass(frozen=True)
class DurabilityResult:
    policy: str
    replication: int
    horizon_s: float
    blocks_written: int
    blocks_lost: int
    write_failures: int
    under_replicated_writes: int
    replicas_destroyed: int
    rereplications: int
    rereplication_failures: int
    unavailable_block_seconds: float
    blocks_ever_unavailable: int
    lost_blocks: np.ndarray
    lost_times_s: np.ndarray

    @property
    def block_unavailable_minutes(self) -> float:
        return self.unavailable_block_seconds / 60.0

    @property
    def loss_fraction(self) -> float:
        return self.blocks_lost / self.blocks_written if self.blocks_written else 0.0


def tenant_history(reimages: ReimageLog, cluster: SimCluster, tenant_util: np.ndarray,
                   month_s: float = MONTH_S) -> tuple[np.ndarray, np.ndarray]:
    """(reimages per server per month, peak CPU) per tenant, from a PAST period's log and series."""
    rates = monthly_tenant_rates(reimages, cluster.server_tenant, month_s)
    months = max(reimages.horizon_s / month_s, 1e-9)
    reimage_rate = rates.sum(axis=1) / months
    if len(reimage_rate) < cluster.n_tenants:
        reimage_rate = np.pad(reimage_rate, (0, cluster.n_tenants - len(reimage_rate)))
    peak = np.fmax.reduce(np.asarray(tenant_util), axis=1)  # fmax skips NaN samples
    return reimage_rate[: cluster.n_tenants], np.clip(np.nan_to_num(peak, nan=0.0), 0.0, 1.0)


def simulate(cluster: SimCluster, workload: Workload, reimages: ReimageLog, tenant_util: np.ndarray,
             policy: SimPolicy, config: DurabilityConfig, rng: np.random.Generator | int) -> DurabilityResult:
    """Run the model over [0, reimages.horizon_s); see the module docstring."""
    return _Run(cluster, workload, reimages, tenant_util, policy, config, rng).run()


class _Run:
    """One simulation; the state lives here so that ``simulate`` stays a pure function."""

    def __init__(self, cluster, workload, reimages, tenant_util, policy, config, rng) -> None:
        self.c, self.w, self.log, self.p, self.cfg = cluster, workload, reimages, policy, config
        self.gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.R, self.H, self.bytes = config.replication, reimages.horizon_s, workload.block_bytes
        n, b = cluster.n_servers, len(workload.write_times_s)
        self.tenant_of = cluster.server_tenant.astype(np.int64).tolist()
        self.ev_times = reimages.times_s.tolist()
        ev_of = reimages.event_of_server_reimage()
        order = np.lexsort((ev_of, reimages.servers))
        bounds = np.searchsorted(reimages.servers[order], np.arange(n + 1))
        ev_sorted = ev_of[order]
        self.srv_events = [ev_sorted[bounds[s]:bounds[s + 1]].tolist() for s in range(n)]
        self.srv_times = [[self.ev_times[e] for e in evs] for evs in self.srv_events]
        util = np.asarray(tenant_util)
        if util.ndim != 2 or util.shape[0] != cluster.n_tenants:
            raise ValueError(f"tenant_util must be (tenants={cluster.n_tenants}, steps), got {util.shape}")
        self.busy_tm = busy_matrix(util, config.busy_cpu_threshold)
        steps = self.busy_tm.shape[1]
        first = self.busy_tm[:, 0] if steps else np.zeros(cluster.n_tenants, dtype=bool)
        self.state = LiveState(cluster.free_bytes.astype(np.int64).copy(), first[cluster.server_tenant].copy())
        # Busy flips as two sorted arrays (a noisy series can flip millions of times).
        flip_t, flip_step = np.nonzero(self.busy_tm[:, 1:] != self.busy_tm[:, :-1])
        by_step = np.argsort(flip_step, kind="stable")
        self.flip_step, self.flip_tenant = flip_step[by_step] + 1, flip_t[by_step]
        self.flip_pos, self.step = 0, 0
        members = np.argsort(cluster.server_tenant, kind="stable")
        tb = np.searchsorted(cluster.server_tenant[members], np.arange(cluster.n_tenants + 1))
        self.members = [members[tb[t]:tb[t + 1]] for t in range(cluster.n_tenants)]
        self.srv = array("i", [-1]) * (b * self.R)
        self.alive = bytearray(b * self.R)
        self.n_alive = array("i", [0]) * b
        self.lost_at = array("d", [-1.0]) * b
        self.seg_start = array("d", [0.0]) * b
        self.written = bytearray(b)
        self.bucket: list[array | None] = [None] * len(self.ev_times)
        self.rerep: list[array | None] = [None] * len(self.ev_times)
        self.seg_b, self.seg_t0, self.seg_t1, self.seg_ten = array("q"), array("d"), array("d"), array("i")
        self.counts = dict(written=0, write_failures=0, under=0, destroyed=0, rereps=0, rerep_failures=0)
        self.next_refresh = 0.0

    # -- per-time bookkeeping ------------------------------------------------------------
    def _advance(self, t: float) -> None:
        """Apply busy flips up to time t and refresh the policy's table when due."""
        step = min(int(t // self.cfg.util_step_s), self.busy_tm.shape[1] - 1)
        if step > self.step:
            end = int(np.searchsorted(self.flip_step, step, side="right"))
            for tenant in np.unique(self.flip_tenant[self.flip_pos:end]).tolist():
                self.state.busy[self.members[tenant]] = self.busy_tm[tenant, step]
            self.flip_pos, self.step = end, step
        if t >= self.next_refresh:
            self.p.refresh(self.state)
            self.next_refresh = t + self.cfg.refresh_interval_s

    def _emit(self, b: int, t: float) -> None:
        """Close block b's availability segment at t (its live set is about to change)."""
        if t > self.seg_start[b]:
            self.seg_b.append(b)
            self.seg_t0.append(self.seg_start[b])
            self.seg_t1.append(t)
            base = b * self.R
            for k in range(self.R):
                self.seg_ten.append(self.tenant_of[self.srv[base + k]] if self.alive[base + k] else -1)
        self.seg_start[b] = t

    def _create(self, b: int, k: int, s: int, t: float) -> None:
        code = b * self.R + k
        self.srv[code] = s
        self.alive[code] = 1
        self.n_alive[b] += 1
        self.state.remaining[s] -= self.bytes
        times = self.srv_times[s]
        p = bisect_right(times, t)
        if p < len(times):
            e = self.srv_events[s][p]
            if self.bucket[e] is None:
                self.bucket[e] = array("q")
            self.bucket[e].append(code)

    # -- the three kinds of events -------------------------------------------------------
    def _write(self, b: int) -> None:
        t = float(self.w.write_times_s[b])
        self._advance(t)
        nodes = self.p.choose(self.R, int(self.w.writers[b]), (), self.state, self.bytes, self.gen)
        if not nodes:
            self.counts["write_failures"] += 1
            return
        self.written[b] = 1
        self.counts["written"] += 1
        self.counts["under"] += len(nodes) < self.R
        self.seg_start[b] = t
        for k, s in enumerate(nodes):
            self._create(b, k, s, t)

    def _reimage(self, e: int) -> None:
        t = self.ev_times[e]
        lo, hi = self.log.offsets[e], self.log.offsets[e + 1]
        wiped = self.log.servers[lo:hi]
        self.state.remaining[wiped] = self.c.free_bytes[wiped]  # the disks are wiped
        dying, self.bucket[e] = self.bucket[e], None
        if dying is None:
            return
        pending = array("q")
        for code in dying:
            b = code // self.R
            if self.lost_at[b] >= 0:
                continue
            self.counts["destroyed"] += 1
            self._emit(b, t)
            self.alive[code] = 0
            self.n_alive[b] -= 1
            if self.n_alive[b] == 0:
                self.lost_at[b] = t
            else:
                pending.append(code)
        self.rerep[e] = pending

    def _rereplicate(self, e: int) -> None:
        t = self.ev_times[e] + self.cfg.rereplication_delay_s
        pending, self.rerep[e] = self.rerep[e], None
        if not pending:
            return
        self._advance(t)
        for code in pending:
            b, k = divmod(code, self.R)
            if self.lost_at[b] >= 0:
                continue
            base = b * self.R
            existing = [self.srv[base + j] for j in range(self.R) if self.alive[base + j]]
            nodes = self.p.choose(1, -1, existing, self.state, self.bytes, self.gen)
            if not nodes:
                self.counts["rerep_failures"] += 1
                continue
            self.counts["rereps"] += 1
            self._emit(b, t)
            self._create(b, k, nodes[0], t)

    # -- driver --------------------------------------------------------------------------
    def run(self) -> DurabilityResult:
        inf = float("inf")
        times, ev, d = self.w.write_times_s.tolist(), self.ev_times, self.cfg.rereplication_delay_s
        n_w, n_e = len(times), len(ev)
        i_w = i_e = i_r = 0
        while True:
            te = ev[i_e] if i_e < n_e else inf
            tr = ev[i_r] + d if i_r < i_e else inf
            tw = times[i_w] if i_w < n_w else inf
            if min(te, tr, tw) >= self.H:
                break
            if te <= tr and te <= tw:
                self._reimage(i_e)
                i_e += 1
            elif tr <= tw:
                self._rereplicate(i_r)
                i_r += 1
            else:
                limit = min(te, tr, self.H)
                while i_w < n_w and times[i_w] < limit:
                    self._write(i_w)
                    i_w += 1
        return self._result()

    def _result(self) -> DurabilityResult:
        n_blocks, r = len(self.written), self.R
        alive = np.frombuffer(self.alive, dtype=np.uint8).reshape(n_blocks, r).astype(bool)
        srv = np.frombuffer(self.srv, dtype=np.int32).reshape(n_blocks, r)
        lost_at = np.frombuffer(self.lost_at, dtype=np.float64)
        open_ = np.flatnonzero(np.frombuffer(self.written, dtype=np.uint8).astype(bool) & (lost_at < 0))
        tenants = np.where(alive[open_], self.c.server_tenant[np.maximum(srv[open_], 0)], -1)
        seg_ten = np.concatenate((np.frombuffer(self.seg_ten, dtype=np.int32).reshape(-1, r), tenants))
        t0 = np.concatenate((np.frombuffer(self.seg_t0, dtype=np.float64), np.frombuffer(self.seg_start, dtype=np.float64)[open_]))
        seg_b = np.concatenate((np.frombuffer(self.seg_b, dtype=np.int64), open_))
        packed = PackedBusy.pack(self.busy_tm, self.cfg.util_step_s)
        t1 = np.concatenate((np.frombuffer(self.seg_t1, dtype=np.float64), np.full(open_.size, self.H)))
        busy_steps = segment_busy_steps(packed, seg_ten, packed.step_at(t0), packed.step_at(t1))
        lost = np.flatnonzero(lost_at >= 0)
        return DurabilityResult(
            policy=self.p.name, replication=r, horizon_s=self.H,
            blocks_written=self.counts["written"], blocks_lost=int(lost.size),
            write_failures=self.counts["write_failures"], under_replicated_writes=self.counts["under"],
            replicas_destroyed=self.counts["destroyed"], rereplications=self.counts["rereps"],
            rereplication_failures=self.counts["rerep_failures"],
            unavailable_block_seconds=float(busy_steps.sum() * self.cfg.util_step_s),
            blocks_ever_unavailable=int(np.unique(seg_b[busy_steps > 0]).size),
            lost_blocks=lost, lost_times_s=lost_at[lost],
        )

"""Placement policies: the pluggable scheduler brain of the simulated YARN substrate.

The substrate calls a policy; the policy never changes the cluster. Interface (what Harvester's
history-based policy implements, e.g. OSDI'16 Algorithm 1 class selection):

    class PlacementPolicy(Protocol):
        name: str
        def capacity(self, view: ClusterView) -> CapacityUpdate | None
        def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray
        def job_finished(self, outcome: JobOutcome) -> None

- `capacity` runs after every primary-utilization step (and once at start): return the
  schedulable capacity of every node (what live Harvester sends as node resource updates),
  or None to leave capacities as they are (as set at start, or by a controller's
  SetNodeCapacity actions).
- `place` returns node indexes, one per container to start now (at most `request.count`;
  repeats allowed; fewer = the rest wait for the next scheduling pass). Each chosen node must
  have room in `view.free_vcores` / `view.free_memory_mb` for all containers placed on it;
  the substrate raises `PolicyError` otherwise. Work on the numpy arrays: never loop over
  all nodes in Python. The substrate builds one view per scheduling pass (its free arrays
  shrink as containers are placed in that pass), so a policy may cache per-pass work keyed
  on the view object.
- `job_finished` is told every finished job (its run time, kills): a policy's own history,
  e.g. "the job's last run" of Algorithm 1, line 3.
- Optional `wake_at(now) -> float | None`: passes run only when work or capacity changed; a
  policy whose answer changes with time alone (a job told to ask again later) returns when it
  wants the next pass, and the substrate schedules one at the first heartbeat from then.
- Optional `report() -> dict`: JSON-friendly facts about its own run (e.g. how often Algorithm 1
  found no class); sweeps and evaluations keep it in the run's row as `policy_report`.

A policy is built by a factory `factory(params: Mapping, context: SimContext) -> policy`;
scenario files name a built-in (`stock-yarn`, `primary-aware`) or `package.module:factory`.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from harvester.sim.plugins import load_callable


class PolicyError(Exception):
    """A policy asked for something the cluster cannot do (a bug in the policy)."""


@dataclass(frozen=True, slots=True)
class TenantInfo:
    """What a policy may know about a primary tenant (not its generated pattern label)."""

    index: int
    name: str
    environment: str
    machine_function: str
    servers: int


@dataclass(frozen=True, slots=True, eq=False)
class SimContext:
    """Static facts given to policy and controller factories."""

    node_ids: tuple[str, ...]
    tenant_of: np.ndarray
    tenants: tuple[TenantInfo, ...]
    physical_cores: np.ndarray
    total_vcores: np.ndarray
    total_memory_mb: np.ndarray
    step_s: float
    start_s: float
    seed: int


@dataclass(frozen=True, slots=True, eq=False)
class ClusterView:
    """Read-only arrays (indexed by node) a policy decides from, valid during one call.

    `free_*` = schedulable capacity − allocated, 0 on nodes that are down, never negative.
    `tenant_history` is [tenants × samples] of past average-server utilization (the paper's
    "average server", §3.2) at `step_s`, oldest first, ending at the current step: the
    policy sees the past only. `allocated_vcores` / `allocated_memory_mb` are what containers
    hold on each node now (the scheduler's own bookkeeping; None when the caller has none).
    `no_room` marks the nodes with no free vcores or no free memory when the caller keeps that
    incrementally (the substrate does: a scan of every node per pass is most of a pass at 50,000
    nodes); None: a policy derives it from the free arrays.
    """

    now: float
    free_vcores: np.ndarray
    free_memory_mb: np.ndarray
    capacity_vcores: np.ndarray
    capacity_memory_mb: np.ndarray
    total_vcores: np.ndarray
    total_memory_mb: np.ndarray
    physical_cores: np.ndarray
    primary_cpu_cores: np.ndarray
    primary_memory_mb: np.ndarray
    batch_cpu_cores: np.ndarray
    running: np.ndarray
    tenant_of: np.ndarray
    tenant_history: np.ndarray
    step_s: float
    rng: np.random.Generator
    allocated_vcores: np.ndarray | None = None
    allocated_memory_mb: np.ndarray | None = None
    no_room: np.ndarray | None = None  # free_vcores or free_memory_mb is 0 (kept up to date by the caller), or None


@dataclass(frozen=True, slots=True)
class PlacementRequest:
    """Containers of one runnable stage of one job, all the same size."""

    job_id: str
    job_name: str
    stage: str
    count: int
    vcores: int
    memory_mb: int
    submitted_at: float
    recurring: bool
    period_s: float | None
    job_tasks: int
    job_max_concurrent: int


@dataclass(frozen=True, slots=True)
class JobOutcome:
    job_id: str
    job_name: str
    submitted_at: float
    finished_at: float
    tasks: int
    kills: int

    @property
    def duration_s(self) -> float:
        return self.finished_at - self.submitted_at


@dataclass(frozen=True, slots=True, eq=False)
class CapacityUpdate:
    """Schedulable capacity per node; `overcommit_timeout_ms` as in a node resource update."""

    vcores: np.ndarray
    memory_mb: np.ndarray
    overcommit_timeout_ms: int = -1


class PlacementPolicy(Protocol):
    name: str

    def capacity(self, view: ClusterView) -> CapacityUpdate | None: ...

    def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray: ...

    def job_finished(self, outcome: JobOutcome) -> None: ...


PolicyFactory = Callable[[Mapping[str, Any], SimContext], PlacementPolicy]


def fill_in_order(order: np.ndarray, slots: np.ndarray, count: int) -> np.ndarray:
    """Fill nodes `order[0], order[1], ...` up to `slots[i]` containers each, `count` at most.

    Returns the chosen node per container (repeats for several on one node). Vectorized: a
    cumulative sum over the slots and one searchsorted.
    """
    if not order.size:
        return np.empty(0, dtype=np.int64)
    cum = np.cumsum(slots)
    k = int(min(count, cum[-1]))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    return order[np.searchsorted(cum, np.arange(1, k + 1), side="left")]


class HeartbeatOrderPolicy:
    """Shared placement of the two baselines: the CapacityScheduler's node-heartbeat order.

    YARN assigns containers when a node heartbeats (every 1 s by default) and, with
    `yarn.scheduler.capacity.per-node-heartbeat.multiple-assignments-enabled=true` and
    `maximum-container-assignments=-1` (the 3.3 defaults), fills that node before the next one
    heartbeats; jobs are served in queue order. Modeled per scheduling pass: the nodes with
    room, in a fixed random heartbeat order rotated to a random start (drawn from the view's
    seeded rng), are filled in that order by each request in turn.
    """

    name = "heartbeat-order"

    def __init__(self, context: SimContext) -> None:
        self._order = np.random.default_rng(context.seed).permutation(len(context.node_ids))
        self._rank = np.empty_like(self._order)  # node -> its place in the heartbeat order
        self._rank[self._order] = np.arange(self._order.size)
        self._twice = np.concatenate((self._order, self._order))  # any rotation is a view of it
        self._view: ClusterView | None = None
        self._pass_order = self._order
        self._cursor = 0

    def _heartbeats(self, view: ClusterView) -> np.ndarray:
        """This pass's order over nodes with room; computed once per view (= per pass).

        The nodes with room at the pass start, in heartbeat order rotated to a random start r.
        Usually almost every node has room: then the pass order is the whole heartbeat order
        rotated to the r-th node with room (a view, no copy); the few nodes without room stay
        in it but offer no slot for the whole pass (free only shrinks within a pass), so every
        placement is the same as over the nodes with room alone, at a cost per pass of a few
        vectorized comparisons instead of a gather over every node."""
        if view is not self._view:
            self._view = view
            n = self._order.size
            no_room = view.no_room
            if no_room is None:
                no_room = (view.free_vcores <= 0) | (view.free_memory_mb <= 0)
            full = no_room.nonzero()[0]  # = flatnonzero (1-D), without its wrappers: once per pass
            size = n - full.size
            if full.size * 8 <= n:  # most nodes have room: rotate the whole order
                r = int(view.rng.integers(0, size)) if size else 0
                skipped = self._rank[full]  # places in the order without room
                skipped.sort()
                # room places before skipped[j]: skipped[j] - j; the r-th room place is r + #{j: that <= r}
                p = r + int(np.searchsorted(skipped - np.arange(skipped.size), r, side="right"))
                self._pass_order = self._twice[p:p + n]
            else:
                room = ~no_room
                if size * 8 < n:  # a busy cluster: order the few nodes with room by rank
                    ranked = self._order[np.sort(self._rank[np.flatnonzero(room)])]
                else:
                    ranked = self._order[room[self._order]]
                r = int(view.rng.integers(0, ranked.size)) if ranked.size else 0
                self._pass_order = np.concatenate((ranked[r:], ranked[:r]))
            self._cursor = 0
        return self._pass_order

    def place(self, request: PlacementRequest, view: ClusterView) -> np.ndarray:
        order = self._heartbeats(view)
        fv, fm = view.free_vcores, view.free_memory_mb
        n, c = order.size, self._cursor
        stop = min(n, c + 8)
        while c < stop and fv[order[c]] == 0:  # skip the nodes earlier requests of this pass filled up
            c += 1
        while c == stop and c < n:  # many: in blocks
            zero = fv[order[c:c + 256]] == 0
            if not zero.all():
                c += int(np.argmin(zero))
                break
            c += zero.size
            stop = c
        self._cursor = c
        if request.count <= 8:
            few = self._first_slots(order, c, request, fv, fm)
            if few is not None:
                return few
        w = max(64, 2 * request.count)  # look at a window just big enough, widen if short
        while True:
            seg = order[c:c + w]
            slots = np.minimum(fv[seg] // request.vcores, fm[seg] // request.memory_mb)
            if c + w >= n or int(slots.sum()) >= request.count:
                return fill_in_order(seg, slots, request.count)
            w *= 4

    @staticmethod
    def _first_slots(order: np.ndarray, c: int, request: PlacementRequest, fv: np.ndarray, fm: np.ndarray,
                     reach: int = 64) -> np.ndarray | None:
        """`fill_in_order` over `order[c:]` for a few containers, node by node in Python (most
        requests take one or two nodes: cheaper than a dozen numpy calls); None if the first
        `reach` nodes do not hold them all and more nodes follow (the caller then widens)."""
        v, m, left = request.vcores, request.memory_mb, request.count
        out: list[int] = []
        end = min(order.size, c + reach)
        for i in range(c, end):
            node = int(order[i])
            k = min(int(fv[node]) // v, int(fm[node]) // m, left)
            if k > 0:
                out.extend([node] * k)
                left -= k
                if not left:
                    break
        if left and end < order.size:
            return None
        return np.array(out, dtype=np.int64)

    def job_finished(self, outcome: JobOutcome) -> None:
        return None


class StockYarnPolicy(HeartbeatOrderPolicy):
    """Stock YARN: ignores primary tenants; each NodeManager offers `static_fraction` of its
    configured resources (1.0: the whole server). Nothing takes cores back for the primary:
    an oversubscribed server shares them (the substrate's CPU sharing), batch slows down and
    the primary is short."""

    name = "stock-yarn"

    def __init__(self, context: SimContext, static_fraction: float = 1.0) -> None:
        super().__init__(context)
        if not 0.0 < static_fraction <= 1.0:
            raise ValueError(f"static_fraction must be in (0, 1], got {static_fraction}")
        self._caps = CapacityUpdate(np.floor(context.total_vcores * static_fraction).astype(np.int64),
                                    np.floor(context.total_memory_mb * static_fraction).astype(np.int64))
        self._sent = False

    def capacity(self, view: ClusterView) -> CapacityUpdate | None:
        if self._sent:
            return None
        self._sent = True
        return self._caps


class PrimaryAwarePolicy(HeartbeatOrderPolicy):
    """Primary-aware YARN without history or a controller (OSDI'16 §4.1 requirement 1, §5): every
    step each node's capacity becomes total − current primary − reserve, in vcores of the node
    (`reserve_fraction` of the physical cores, OSDI'16 §2 "we reserve compute resources that
    cannot be given to batch tasks"); memory likewise. A cut below the allocation carries
    `overcommit_timeout_ms` (default 0: the RM kills the youngest non-AM containers at once).
    Placement as stock YARN. (The evaluation's `fixed-reserve` baseline is the guard loop with a
    fixed reserve instead: same kill rule and timing as the other guarded policies.)"""

    name = "primary-aware"

    def __init__(self, context: SimContext, reserve_fraction: float = 0.1, overcommit_timeout_ms: int = 0) -> None:
        super().__init__(context)
        if not 0.0 <= reserve_fraction < 1.0:
            raise ValueError(f"reserve_fraction must be in [0, 1), got {reserve_fraction}")
        self.reserve_fraction = reserve_fraction
        self.overcommit_timeout_ms = overcommit_timeout_ms
        self._vcores_per_core = context.total_vcores / context.physical_cores

    def capacity(self, view: ClusterView) -> CapacityUpdate:
        keep = 1.0 - self.reserve_fraction
        cores = view.physical_cores * keep - view.primary_cpu_cores
        vcores = np.floor(np.maximum(cores, 0.0) * self._vcores_per_core + 1e-9).astype(np.int64)
        mem = np.floor(np.maximum(view.total_memory_mb * keep - view.primary_memory_mb, 0.0)).astype(np.int64)
        return CapacityUpdate(np.minimum(vcores, view.total_vcores), mem, self.overcommit_timeout_ms)


BUILTIN: dict[str, Callable[..., PlacementPolicy]] = {
    "stock-yarn": StockYarnPolicy,
    "primary-aware": PrimaryAwarePolicy,
}


def _builtin(cls: Callable[..., PlacementPolicy]) -> PolicyFactory:
    def factory(params: Mapping[str, Any], context: SimContext) -> PlacementPolicy:
        try:
            inspect.signature(cls).bind(context, **dict(params))
        except TypeError as exc:
            raise ValueError(f"policy {cls.name!r}: bad params ({exc})") from None
        return cls(context, **dict(params))
    return factory


def resolve_factory(spec: str) -> PolicyFactory:
    """`stock-yarn` / `primary-aware`, or `package.module:callable` taking (params, context)."""
    if spec in BUILTIN:
        return _builtin(BUILTIN[spec])
    if ":" not in spec:
        raise ValueError(f"unknown policy {spec!r}: use {', '.join(BUILTIN)} or package.module:factory")
    return load_callable(spec, "policy")


def build_policy(spec: str, params: Mapping[str, Any], context: SimContext) -> PlacementPolicy:
    return resolve_factory(spec)(params, context)

"""Constraint-aware ordering and placement of a batch of tasks (Phoenix, paper 003) — pure.

`decide(ctx) -> PlacementPlan` orders a batch of constrained task requests and places each
on a node of the current cluster view (decisions/placement_view.py); `order(ctx)` is steps 1-4
alone (vectorized over tasks). Steps, with the paper's mechanisms:

1. **CRV** (§I, contribution 1): for every constraint dimension asked for (e.g. `cores>=16`,
   and `*` = any node), demand = tasks asking for it (this batch plus the recent demand
   window), supply = RUNNING nodes satisfying it; ratio = demand / supply
   (`models.queueing.crv_ratio`). A task's CRV ratio is that of its tightest dimension.
2. **M/G/1 estimate** (contribution 3): the Pollaczek–Khinchine wait of every constraint
   class over overlapping node sets (`models.queueing.class_waits`), with the recent classes'
   rates, this batch's own arrivals, and the nodes' observed used share as a load floor.
3. **Admission control** (contribution 2: "negotiating resources for tasks in which all the
   constraints could not be satisfied"): a task whose full class waits longer than
   max(`max_wait_s`, `max_wait_factor` × its duration) has its SOFT constraints relaxed when
   the hard-only class waits less, or when no RUNNING node satisfies them at all (a soft
   constraint never makes a task unplaceable). Hard constraints are never relaxed.
4. **Reordering** (§I: "reorder tasks based on its CRV ratio values to improve the overall job
   turnaround times"): `contention_key` — most contended class first (log-bucketed M/G/1
   wait in units of the class's service time, then CRV ratio), shortest work first within a
   bucket (Eagle's SRPT, which Phoenix extends). Placing the scarcest tasks first keeps flexible tasks from taking the only nodes
   a constrained task can use (most-constrained-first greedy).
5. **Placement** (decisions/placement_nodes.py): each task takes the best node that satisfies its effective constraints,
   its placement constraints (rack affinity / anti-affinity of its group) and has the free
   memory and vcores; the resources are taken from that node for the rest of the batch, so a
   node is never promised more than it has free. Nodes rank by: satisfies the task's soft
   constraints (matters once relaxed), lowest contention (the highest CRV ratio among the
   dimensions the node serves — keep scarce nodes for the tasks that need them), most free
   vcores; a class's tasks fill that ranking first-fit (the best node until it is full), which
   leaves whole nodes for larger tasks. The next nodes that fit are returned as alternatives
   (not reserved). A task
   no node can take now is queued: its candidates are the best satisfying nodes and its
   expected delay is its class's M/G/1 wait; a task whose hard constraints no RUNNING node
   large enough satisfies is unplaceable.

Every placement carries the formula that produced it in `reason` (DESIGN.md principle 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harvester.decisions.placement_nodes import Placer, node_pressure
from harvester.decisions.placement_view import ClusterView
from harvester.domain import Resources
from harvester.models.constraints import Constraint, PlacementConstraint, Strength
from harvester.models.queueing import ClassLoad, ServiceMoments, class_waits, crv_ratio

ANY = "*"  # the dimension "any node": unconstrained tasks ask for it


def class_key(constraints: Sequence[Constraint]) -> str:
    return "; ".join(sorted({c.key for c in constraints})) or ANY


def contention_bucket(x: float) -> int:
    """log2 bucket of a dimensionless contention: below 1 is bucket 0, then [1, 3), [3, 7), ..."""
    return 1 << 20 if math.isinf(x) else int(math.log2(1.0 + max(0.0, x)))


def contention_buckets(wait_s: float, service_s: float, ratio: float) -> tuple[int, int]:
    """(−bucket of the M/G/1 wait in service times of the class, −bucket of its CRV ratio).

    Both are 0 for a class that waits less than one of its tasks runs and whose demand is
    below its supply: among such classes the order is Eagle's SRPT, unchanged."""
    return (-contention_bucket(wait_s / service_s if service_s > 0 else wait_s), -contention_bucket(ratio))


def contention_key(wait_s: float, service_s: float, ratio: float, remaining_s: float) -> tuple[int, int, float]:
    """Phoenix's queue order: most contended class first (M/G/1 wait, then CRV ratio), then SRPT."""
    return (*contention_buckets(wait_s, service_s, ratio), remaining_s)


@dataclass(frozen=True, slots=True)
class TaskAsk:
    task_id: str
    resources: Resources
    constraints: tuple[Constraint, ...] = ()
    placement: tuple[PlacementConstraint, ...] = ()
    expected_duration_s: float = 0.0

    @property
    def hard(self) -> tuple[Constraint, ...]:
        return tuple(c for c in self.constraints if c.strength is Strength.HARD)

    @property
    def soft(self) -> tuple[Constraint, ...]:
        return tuple(c for c in self.constraints if c.strength is Strength.SOFT)


@dataclass(frozen=True, slots=True)
class RecentClass:
    """Arrivals of one constraint class in the demand window (before this batch)."""

    constraints: tuple[Constraint, ...]
    load: ClassLoad
    tasks: int


@dataclass(frozen=True, slots=True)
class PlacementStrategy:
    candidates: int = 3
    max_wait_s: float = 30.0
    max_wait_factor: float = 2.0
    default_duration_s: float = 60.0
    window_s: float = 300.0


def should_relax(wait_full_s: Any, wait_hard_s: Any, duration_s: Any, s: PlacementStrategy, *,
                 any_node: Any = True, slowdown: Any = 1.0) -> Any:
    """Admission control (paper 003 §I, contribution 2): relax a task's soft constraints when its
    full class waits longer than max(max_wait_s, max_wait_factor × duration) and running it
    elsewhere — hard-only wait plus the extra run time of a slower node, duration × (slowdown − 1)
    — is sooner; or when no node satisfies the full class at all. Scalars or numpy arrays."""
    with np.errstate(invalid="ignore"):
        over = np.asarray(wait_full_s) > np.maximum(s.max_wait_s, s.max_wait_factor * np.asarray(duration_s))
        sooner = np.asarray(wait_hard_s) + np.asarray(duration_s) * (np.asarray(slowdown) - 1.0) < wait_full_s
    return over & (sooner | ~np.asarray(any_node, dtype=bool))


@dataclass(frozen=True, slots=True)
class PlacementContext:
    now: float
    job_id: str
    view: ClusterView
    tasks: tuple[TaskAsk, ...]
    strategy: PlacementStrategy
    recent: tuple[RecentClass, ...] = ()


@dataclass(frozen=True, slots=True)
class CrvDimension:
    key: str
    demand: float
    supply: float
    ratio: float


@dataclass(frozen=True, slots=True)
class TaskPlacement:
    task_id: str
    node_ids: tuple[str, ...]
    fits_now: bool
    expected_wait_s: float
    crv_ratio: float
    relaxed: tuple[str, ...]
    unsatisfied_soft: tuple[str, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class Unplaceable:
    task_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class PlacementPlan:
    placements: tuple[TaskPlacement, ...]
    unplaceable: tuple[Unplaceable, ...]
    crv: tuple[CrvDimension, ...]


def _duration(t: TaskAsk, s: PlacementStrategy) -> float:
    return t.expected_duration_s if t.expected_duration_s > 0 else s.default_duration_s


def crv_dimensions(view: ClusterView, asks: dict[str, tuple[Constraint | None, float]]) -> dict[str, CrvDimension]:
    """`asks`: dimension key -> (a constraint of that key, or None for ANY; tasks asking)."""
    out = {}
    for key, (c, demand) in asks.items():
        mask = view.usable if c is None else view.table.mask(c) & view.usable
        supply = float(np.count_nonzero(mask))
        out[key] = CrvDimension(key, demand, supply, crv_ratio(demand, supply))
    return out


Batch = dict[tuple[Constraint, ...], list[float]]  # the batch by constraints: [tasks, Σd, Σd²]


def _batch(ctx: PlacementContext) -> Batch:
    out: Batch = {}
    for t in ctx.tasks:
        d = _duration(t, ctx.strategy)
        acc = out.get(t.constraints)
        if acc is None:
            acc = out[t.constraints] = [0.0, 0.0, 0.0]
        acc[0] += 1
        acc[1] += d
        acc[2] += d * d
    return out


def _asks(ctx: PlacementContext, batch: Batch) -> dict[str, tuple[Constraint | None, float]]:
    asks: dict[str, list] = {ANY: [None, 0.0]}

    def add(constraints: Sequence[Constraint], n: float) -> None:
        asks[ANY][1] += n
        for c in constraints:
            asks.setdefault(c.key, [c, 0.0])[1] += n

    for r in ctx.recent:
        add(r.constraints, r.tasks)
    for cs, acc in batch.items():
        add(cs, acc[0])
    return {k: (v[0], v[1]) for k, v in asks.items()}


class _Classes:
    """Constraint classes of the batch and the window, their masks and M/G/1 waits."""

    def __init__(self, ctx: PlacementContext, batch: Batch) -> None:
        view, s = ctx.view, ctx.strategy
        self.constraints: dict[str, tuple[Constraint, ...]] = {}
        rates: dict[str, list[float]] = {}  # key -> [rate, rate·E[S], rate·E[S²]]

        def load(cs: tuple[Constraint, ...], rate: float, m: ServiceMoments) -> None:
            key = class_key(cs)
            self.constraints.setdefault(key, cs)
            acc = rates.setdefault(key, [0.0, 0.0, 0.0])
            acc[0] += rate
            acc[1] += rate * m.mean_s
            acc[2] += rate * m.second_moment_s2

        for r in ctx.recent:
            load(r.constraints, r.load.rate_per_s, r.load.moments)
        for cs, (n, s1, s2) in batch.items():
            moments = ServiceMoments(s1 / n, s2 / n)
            load(cs, n / s.window_s, moments)
            soft = tuple(c for c in cs if c.strength is Strength.SOFT)
            if soft:
                load(tuple(c for c in cs if c.strength is Strength.HARD), 0.0, moments)  # "what if relaxed?"
        self.keys = list(self.constraints)
        self.index = {k: i for i, k in enumerate(self.keys)}
        self._view = view
        self._masks: dict[str, np.ndarray] = {}
        weights = np.empty((len(self.keys), view.size), dtype=np.float32)  # the queueing model's matrix
        for i, k in enumerate(self.keys):
            weights[i] = self.mask(k)
        loads = []
        for k in self.keys:
            rate, r1, r2 = rates[k]
            moments = ServiceMoments(r1 / rate, r2 / rate) if rate > 0 else ServiceMoments(1.0, 1.0)
            loads.append(ClassLoad(rate, moments))
        slots = _slots(view, ctx.tasks)
        self.waits = class_waits(weights, slots, loads, view.busy_fraction) if self.keys else None

    def wait(self, key: str) -> float:
        return float(self.waits.wait_s[self.index[key]]) if self.waits is not None else 0.0

    def mask(self, key: str) -> np.ndarray:
        """RUNNING nodes satisfying every constraint of the class (cached)."""
        m = self._masks.get(key)
        if m is None:
            m = self._masks[key] = self._view.table.mask_all(self.constraints[key]) & self._view.usable
        return m


def _slots(view: ClusterView, tasks: Sequence[TaskAsk]) -> np.ndarray:
    """Task slots per node for the batch's median container (one M/G/1 server per slot)."""
    if not tasks:
        return np.where(view.usable, 1.0, 0.0)
    mem = max(1, int(np.median([t.resources.memory_mb for t in tasks])))
    vc = max(1, int(np.median([t.resources.vcores for t in tasks])))
    slots = np.minimum(view.total_mb // mem, view.total_vcores // vc).astype(float)
    return np.where(view.usable, np.maximum(slots, 1.0), 0.0)


@dataclass(frozen=True, slots=True)
class _Signature:
    """What every task with the same constraints shares: class keys, CRV ratios, M/G/1 waits."""

    full: str
    hard: str
    soft: tuple[str, ...]
    ratio_full: float
    ratio_hard: float
    supply_full: float
    supply_hard: float
    wait_full: float
    wait_hard: float
    bucket_wait_full: int
    bucket_ratio_full: int
    bucket_wait_hard: int
    bucket_ratio_hard: int
    any_node_full: bool

    @property
    def has_soft(self) -> bool:
        return bool(self.soft)

    @staticmethod
    def of(cs: tuple[Constraint, ...], classes: _Classes, dims: dict[str, CrvDimension], service_s: float) -> _Signature:
        hard = tuple(c for c in cs if c.strength is Strength.HARD)
        soft = tuple(sorted(c.key for c in cs if c.strength is Strength.SOFT))

        def tightest(group: tuple[Constraint, ...]) -> tuple[float, float]:
            if not group:
                return dims[ANY].ratio, dims[ANY].supply
            return max(dims[c.key].ratio for c in group), min(dims[c.key].supply for c in group)

        (rf, sf), (rh, sh) = tightest(cs), tightest(hard)
        full, hkey = class_key(cs), class_key(hard)
        wf = classes.wait(full)
        wh = classes.wait(hkey) if soft else wf
        return _Signature(full, hkey, soft, rf, rh, sf, sh, wf, wh, *contention_buckets(wf, service_s, rf),
                          *contention_buckets(wh, service_s, rh), bool(classes.mask(full).any()))


@dataclass(frozen=True, slots=True, eq=False)
class Ordering:
    """Steps 1-4 for a batch: its CRV, classes, and the tasks in placement order."""

    dims: dict[str, CrvDimension]
    asks: dict[str, tuple[Constraint | None, float]]
    classes: _Classes
    order: list[int]                 # task indices, most contended first
    signatures: list[_Signature]     # per task
    relaxed: list[bool]              # per task: admission control relaxed its soft constraints
    durations: list[float]           # per task (the default where a task gave none)


def order(ctx: PlacementContext) -> Ordering:
    """CRV, M/G/1 per class, admission control and the `contention_key` order of `ctx.tasks`,
    vectorized over tasks (one Python step per task: finding its signature)."""
    s, view = ctx.strategy, ctx.view
    batch = _batch(ctx)
    asks = _asks(ctx, batch)
    dims = crv_dimensions(view, asks)
    classes = _Classes(ctx, batch)
    index: dict[tuple[Constraint, ...], int] = {}
    sigs: list[_Signature] = []
    for cs, (n, s1, _) in batch.items():
        index[cs] = len(sigs)
        sigs.append(_Signature.of(cs, classes, dims, s1 / n))
    of = np.fromiter((index[t.constraints] for t in ctx.tasks), dtype=np.int64, count=len(ctx.tasks))
    d = np.fromiter((_duration(t, s) for t in ctx.tasks), dtype=float, count=len(ctx.tasks))

    def per_sig(attr: str) -> np.ndarray:
        return np.array([getattr(g, attr) for g in sigs], dtype=float)[of] if sigs else np.zeros(0)

    w_full, w_hard = per_sig("wait_full"), per_sig("wait_hard")
    can = per_sig("has_soft") > 0
    relaxed = can & should_relax(w_full, w_hard, d, s, any_node=per_sig("any_node_full") > 0)
    b1 = np.where(relaxed, per_sig("bucket_wait_hard"), per_sig("bucket_wait_full"))
    b2 = np.where(relaxed, per_sig("bucket_ratio_hard"), per_sig("bucket_ratio_full"))
    supply = np.where(relaxed, per_sig("supply_hard"), per_sig("supply_full"))
    ordered = np.lexsort((np.arange(len(ctx.tasks)), supply, d, b2, b1)).tolist()
    return Ordering(dims, asks, classes, ordered, [sigs[k] for k in of.tolist()], relaxed.tolist(), d.tolist())


def decide(ctx: PlacementContext) -> PlacementPlan:
    """Order and place `ctx.tasks` (module docstring); deterministic for a given context."""
    s, view = ctx.strategy, ctx.view
    o = order(ctx)
    classes = o.classes
    ratios = {o.asks[k][0]: d.ratio for k, d in o.dims.items() if o.asks[k][0] is not None}
    placer = Placer(view, ctx.job_id, node_pressure(view, ratios))
    placed: list[TaskPlacement] = []
    unplaceable: list[Unplaceable] = []
    want = max(1, s.candidates)
    for i in o.order:
        t, sig = ctx.tasks[i], o.signatures[i]
        r = t.resources
        relaxed: tuple[str, ...] = sig.soft if o.relaxed[i] else ()
        eff, ratio = (sig.hard, sig.ratio_hard) if relaxed else (sig.full, sig.ratio_full)
        why = ""
        if relaxed:
            d = o.durations[i]
            why = (f"relaxed soft {', '.join(relaxed)}: M/G/1 wait {sig.wait_full:.3g} s > bound max({s.max_wait_s:g}, "
                   f"{s.max_wait_factor:g}×{d:.3g}) = {max(s.max_wait_s, s.max_wait_factor * d):.3g} s, "
                   f"hard-only waits {sig.wait_hard:.3g} s; ")
        w = placer.walk(eff, sig.full, classes.mask(eff), classes.mask(sig.full), r)
        if not w.has(0) and sig.soft and not relaxed:  # a soft constraint never makes a task unplaceable
            relaxed, eff, ratio = sig.soft, sig.hard, sig.ratio_hard
            why = (f"relaxed soft {', '.join(relaxed)}: no RUNNING node satisfying them has {r.memory_mb} MB / "
                   f"{r.vcores} vcores in total; ")
            w = placer.walk(eff, sig.full, classes.mask(eff), classes.mask(sig.full), r)
        if not w.has(0):
            need = eff if eff != ANY else "any RUNNING node"
            unplaceable.append(Unplaceable(t.task_id, f"{why}no RUNNING node satisfies {need} with at least "
                                                     f"{r.memory_mb} MB / {r.vcores} vcores in total"))
            continue
        nodes, fits = placer.choose(r, t.placement, w, want)
        if not nodes:
            unplaceable.append(Unplaceable(t.task_id, f"{why}placement constraints exclude every node satisfying {eff}"))
            continue
        ids = tuple(view.table.node_ids[n] for n in nodes)
        unsatisfied = tuple(sorted(c.key for c in t.soft if not view.table.mask(c)[nodes[0]])) if relaxed else ()
        wait = 0.0 if fits else classes.wait(eff)
        where = (f"placed on {ids[0]} (free after: {placer.free_mb[nodes[0]]} MB / {placer.free_vc[nodes[0]]} vcores)"
                 if fits else f"queued: no satisfying node has {r.memory_mb} MB / {r.vcores} vcores "
                              f"free; M/G/1 wait of {eff} = {wait:.3g} s")
        placed.append(TaskPlacement(t.task_id, ids, fits, wait, ratio, relaxed, unsatisfied,
                                    f"{why}CRV ratio {ratio:.3g} (tightest of {eff}); {where}"))
    return PlacementPlan(tuple(placed), tuple(unplaceable), tuple(o.dims.values()))


@dataclass(frozen=True, slots=True)
class DimensionEstimate:
    """One CRV entry with the M/G/1 wait a task asking only for that dimension would see."""

    dimension: CrvDimension
    constraint: Constraint | None
    wait_s: float


def constraint_resource_vector(view: ClusterView, recent: Sequence[RecentClass]) -> tuple[DimensionEstimate, ...]:
    """The CRV over the demand window: demand / supply and M/G/1 wait of every dimension asked for.

    The window's classes load the nodes (rows with their rates); each dimension is an extra row
    with rate 0 that only measures the wait (models.queueing.class_waits)."""
    ctx = PlacementContext(view.time, "", view, (), PlacementStrategy(), tuple(recent))
    asks = _asks(ctx, {})
    dims = crv_dimensions(view, asks)
    rows = [view.table.mask_all(r.constraints) & view.usable for r in recent]
    rows += [(view.usable if asks[k][0] is None else view.table.mask(asks[k][0]) & view.usable) for k in dims]
    loads = [r.load for r in recent] + [ClassLoad(0.0, ServiceMoments(1.0, 1.0))] * len(dims)
    slots = _slots(view, ())  # no containers known: one server per node
    if rows:
        waits = class_waits(np.array(rows, dtype=bool).reshape(len(rows), view.size), slots, loads,
                            view.busy_fraction).wait_s[len(recent):]
    else:
        waits = np.zeros(0)
    return tuple(DimensionEstimate(d, asks[k][0], float(w)) for (k, d), w in zip(dims.items(), waits))

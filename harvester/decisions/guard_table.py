"""The guard decision's per-node tables, columnar: memos and views built on read — pure.

A guard tick over 50,000 nodes (issue 29) decides on arrays (decisions/guard.py); a Python
object per node is made only where one is read: `NodeViews[i]` builds the `NodeView` of one
node (ListNodeCapacities, `harvester explain node`, the action log), `MemoTable[node_id]` the
`NodeMemo` the next decision of that node needs. The aggregates the loop publishes every
period (vcores per node and class, outcome counts, class utilization) are read off the
columns without building any view.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Callable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from harvester.domain import Resources


class NodeMemo(NamedTuple):
    """What one decision saw of a node, kept by the loop for the next (confirmation, coverage,
    how long its utilization has been unknown)."""

    target: Resources           # the capacity this decision allowed (a later increase needs it)
    primary_cpu_cores: float    # NaN: utilization unknown at this decision
    allocated: Resources
    seen_at: float = -math.inf  # time of the node's newest sample WITH utilization (-inf: long ago)


class NodeView(NamedTuple):
    """The guard's view of one node (served by ListNodeCapacities); `reason` is rendered on read.
    (A NamedTuple: built on read from `NodeViews`.)"""

    node_id: str
    tenant: str
    class_id: str
    total: Resources
    harvestable: Resources | None
    primary_cpu_cores: float | None
    reserve_cpu_cores: float
    stale: bool
    why: str | tuple   # the reason, or the formula's numbers (rendered on read: thousands per tick)
    outcome: str
    capacity_after: Resources | None = None
    kills: int = 0

    @property
    def reason(self) -> str:
        return self.why if isinstance(self.why, str) else render(self.why)


def render(why: tuple) -> str:
    """The formula's text from the capacity formula's numbers (decisions/guard.py), then what was
    appended to it."""
    cores, primary, reserve, frac, class_id, ratio, vcores, host, p_mem, r_mem, free, mem = why[:12]
    text = (f"cpu {cores:g} cores − primary {primary:.2f} − reserve {reserve:.2f} ({frac:.2f} × {cores:g}, class "
            f"{class_id or 'none'}) = {cores - primary - reserve:.2f} cores × {ratio:.3g} vc/core → {vcores} vcores")
    if host is None:
        text += f"; memory not harvested → {mem} MB"
    else:
        text += f"; mem {host} − primary {p_mem:.0f} − reserve {r_mem:.0f} = {free:.0f} → {mem} MB"
    return text + "".join(why[12:])


class MemoTable(Mapping[str, NodeMemo]):
    """`NodeMemo` per node id over arrays (one row per node the decision saw fresh)."""

    def __init__(self, node_ids: Sequence[str], target_mb: np.ndarray, target_vc: np.ndarray, primary: np.ndarray,
                 allocated_mb: np.ndarray, allocated_vc: np.ndarray, seen_at: np.ndarray) -> None:
        self.node_ids = tuple(node_ids)
        self.columns = (target_mb, target_vc, primary, allocated_mb, allocated_vc, seen_at)
        self._index: dict[str, int] | None = None

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.node_ids)}
        return self._index

    def __getitem__(self, node_id: str) -> NodeMemo:
        i = self.index[node_id]
        t_mb, t_vc, p, a_mb, a_vc, seen = self.columns
        return NodeMemo(Resources(int(t_mb[i]), int(t_vc[i])), float(p[i]), Resources(int(a_mb[i]), int(a_vc[i])),
                        float(seen[i]))

    def __iter__(self) -> Iterator[str]:
        return iter(self.node_ids)

    def __len__(self) -> int:
        return len(self.node_ids)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.index


def gather_memos(previous: Mapping[str, NodeMemo], node_ids: Sequence[str]) -> tuple[np.ndarray, ...]:
    """The previous decision's memo of each node as columns: (has, target MB, target vcores,
    primary (NaN: unknown), allocated vcores, seen_at); rows without a memo hold has = False."""
    n = len(node_ids)
    if not previous:  # a first decision: no memo anywhere
        z = np.zeros(n, np.int64)
        return np.zeros(n, bool), z, z, np.full(n, np.nan), z, np.full(n, -np.inf)
    if isinstance(previous, MemoTable) and previous.node_ids == tuple(node_ids):  # the same nodes: the columns
        t_mb, t_vc, p, _, a_vc, seen = previous.columns
        return np.ones(n, bool), t_mb, t_vc, p, a_vc, seen
    if isinstance(previous, MemoTable):
        index = previous.index
        pos = np.fromiter((index.get(x, -1) for x in node_ids), np.int64, n)
        has = pos >= 0
        at = np.where(has, pos, 0)
        t_mb, t_vc, p, _, a_vc, seen = previous.columns
        return has, t_mb[at], t_vc[at], p[at], a_vc[at], seen[at]
    memos = [previous.get(x) for x in node_ids]
    has = np.fromiter((m is not None for m in memos), bool, n)
    none = NodeMemo(Resources(0, 0), math.nan, Resources(0, 0))
    memos = [none if m is None else m for m in memos]
    return (has, np.fromiter((m.target.memory_mb for m in memos), np.int64, n),
            np.fromiter((m.target.vcores for m in memos), np.int64, n),
            np.fromiter((m.primary_cpu_cores for m in memos), np.float64, n),
            np.fromiter((m.allocated.vcores for m in memos), np.int64, n),
            np.fromiter((m.seen_at for m in memos), np.float64, n))


class NodeColumns(NamedTuple):
    """The decided nodes' sizes and this snapshot's numbers (`fresh` False: zeros), one row per view."""

    tenants: tuple[str, ...]
    physical_cores: np.ndarray
    capacity_mb: np.ndarray
    capacity_vc: np.ndarray
    fresh: np.ndarray
    used_mb: np.ndarray
    used_vc: np.ndarray


class NodeViews(Sequence[NodeView]):
    """Every node's `NodeView` in the decision's order, built on read by `build(row)`.

    Columns kept for the loop's aggregates, in view order: node id, class id, primary cores (NaN:
    none), capacity after (`has_after`: the node had a proposal the arbiter ruled on), and each
    view's outcome as (kind, label) where kind is "sent", "skipped" or "stale"."""

    def __init__(self, node_ids: Sequence[str], class_ids: Sequence[str], primary: np.ndarray, has_after: np.ndarray,
                 after_mb: np.ndarray, after_vc: np.ndarray, outcome_counts: Mapping[str, int],
                 build: Callable[[int], NodeView], *, dry: bool = False, source: object = None,
                 nodes: NodeColumns | None = None, stale: np.ndarray | None = None,
                 harvestable_vc: np.ndarray | None = None) -> None:
        self.node_ids = tuple(node_ids)
        self.class_ids = tuple(class_ids)
        self.primary, self.has_after, self.after_mb, self.after_vc = primary, has_after, after_mb, after_vc
        self._counts = dict(outcome_counts)
        self._build = build
        self._dry = dry
        self._index: dict[str, int] | None = None
        self.source = source      # the `nodes` mapping the decision was made over (its views cover exactly it)
        self.nodes = nodes        # those nodes' sizes and fresh samples, in view order
        # `NodeView.stale` and the formula's harvestable vcores (0 where none), in view order:
        # the node-ordering loop reads these instead of building every view (issue 29)
        self.stale, self.harvestable_vc = stale, harvestable_vc

    def __len__(self) -> int:
        return len(self.node_ids)

    def __getitem__(self, i):  # type: ignore[no-untyped-def,override]
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        v = self._build(i)
        if self._dry and v.outcome.startswith("sent:"):
            v = v._replace(outcome="would_send:" + v.outcome.removeprefix("sent:"))
        return v

    def __iter__(self) -> Iterator[NodeView]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def row(self, node_id: str) -> int | None:
        """The view index of a node (None: the decision has no view of it)."""
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.node_ids)}
        return self._index.get(node_id)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(primary cores, NaN: none; has a capacity after; memory after) in view order."""
        return self.primary, self.has_after, self.after_mb

    def get(self, node_id: str) -> NodeView | None:
        i = self.row(node_id)
        return None if i is None else self[i]

    def dry_run(self) -> NodeViews:
        """The same views told as a dry run ("sent:" outcomes read "would_send:")."""
        counts: Counter[str] = Counter()
        for k, n in self._counts.items():
            counts["would_send:" + k.removeprefix("sent:") if k.startswith("sent:") else k] += n
        return NodeViews(self.node_ids, self.class_ids, self.primary, self.has_after, self.after_mb, self.after_vc,
                         counts, self._build, dry=True, source=self.source, nodes=self.nodes, stale=self.stale,
                         harvestable_vc=self.harvestable_vc)

    def outcomes(self) -> dict[str, int]:
        return dict(self._counts)

    def harvested_vcores_by_node(self) -> dict[str, int]:
        rows = np.flatnonzero(self.has_after).tolist()
        vc = self.after_vc.tolist()
        return {self.node_ids[i]: vc[i] for i in rows}

    def harvested_vcores_by_class(self) -> dict[str, int]:
        out: dict[str, int] = {}
        get, names, vc = out.get, self.class_ids, self.after_vc.tolist()
        for i in np.flatnonzero(self.has_after).tolist():
            k = names[i]
            out[k] = get(k, 0) + vc[i]
        return out

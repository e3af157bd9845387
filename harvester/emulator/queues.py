"""The CapacityScheduler queue tree of the emulated RM and its naming rules.

Configured leaves hang under `root`. A reservable leaf (the recorded cluster's `root.default`,
deploy/hadoop/capacity-scheduler.xml) becomes a plan queue: apps submitted to it run in its
auto-created child `root.default-default`, apps of a reservation in a child named after the
reservation. Rules recorded on the live RM (fixtures README, scenarios/queue-move-and-priority):

- submit to `root.default` -> runs in `root.default-default`, REST `queue` shows "root.default";
- submit to `root.default-default` -> runs there (a reservation id with it is ignored);
- submit to the short name `default` -> FAILED "... to unknown queue: default-default";
- move to `default` -> 200 and the app shows "default"; move to `root.default` or
  `root.default-default` -> 500 UndeclaredThrowableException;
- priority above the cluster maximum (0 by default) is clamped, negative values are accepted,
  and a priority change of an app in a reservation queue fails with 500 ClassCastException.

At run time every leaf the scheduler places apps in is a `Leaf`: its capacity and maximum
capacity (percent of its parent: configured, or set by the plan follower for the plan queue's
children) and its effective min/max resource, which `QueueTree.update_cluster_resource`
recomputes from the percentages only when the cluster resource changes (capacity.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harvester.domain import Resources
from harvester.emulator.capacity import ZERO, effective

PLAN_DEFAULT_SUFFIX = "-default"

#: ParentQueue.PRECISION (0.0005f, "0.05% precision"): the CapacityScheduler accepts children
#: whose capacities, as fractions of the parent, sum to 1 within it. A live RM reports float32
#: percentages (a 30 % queue shows 30.000002), so an exact check would refuse real layouts.
CAPACITY_SUM_PRECISION = 0.0005


@dataclass(frozen=True, slots=True)
class QueueConfig:
    """One leaf under root (capacity-scheduler.xml names in comments)."""

    name: str                                  # root.<name>
    capacity: float                            # .capacity (percent of root)
    max_capacity: float = 100.0                # .maximum-capacity
    reservable: bool = False                   # .reservable
    average_capacity: float = 100.0            # .average-capacity (reservation quota, percent)
    instantaneous_max_capacity: float = 100.0  # .instantaneous-max-capacity (percent)
    reservation_window_ms: int = 86_400_000    # .reservation-window
    max_am_resource_percent: float = 0.5       # maximum-am-resource-percent
    max_applications: int = 10_000
    user_limit_percent: float = 100.0          # .minimum-user-limit-percent
    user_limit_factor: float = 1.0             # .user-limit-factor

    @property
    def path(self) -> str:
        return f"root.{self.name}"

    @property
    def default_leaf(self) -> str:
        """Where plain apps of this queue run: itself, or the plan queue's `-default` child."""
        return self.path + PLAN_DEFAULT_SUFFIX if self.reservable else self.path


DEFAULT_QUEUES: tuple[QueueConfig, ...] = (QueueConfig("default", 100.0, reservable=True),)


class QueueError(Exception):
    """A queue name the RM refuses; `kind` selects the recorded answer form."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(eq=False)
class Leaf:
    """A leaf queue apps run in: a configured leaf, a plan queue's `-default` child, or a
    reservation queue (named by the reservation id). Percentages are of the parent."""

    name: str
    config: QueueConfig            # the configured queue under root it belongs to
    capacity: float
    max_capacity: float
    parent_abs: float = 100.0      # the parent's absolute capacity (root: 100; a plan queue: its own)
    eff_min: Resources = ZERO      # recomputed only when the cluster resource changes
    eff_max: Resources = ZERO

    @property
    def absolute_capacity(self) -> float:
        return self.capacity * self.parent_abs / 100.0

    @property
    def absolute_max_capacity(self) -> float:
        return self.max_capacity * self.parent_abs / 100.0

    @property
    def is_reservation(self) -> bool:
        return self.name.startswith("reservation_")


class QueueTree:
    def __init__(self, configs: tuple[QueueConfig, ...] = DEFAULT_QUEUES, max_priority: int = 0) -> None:
        check_child_capacities("root", [c.capacity for c in configs])
        self.configs = {c.name: c for c in configs}
        self.max_priority = max_priority
        self.cluster = ZERO
        self.leaves: dict[str, Leaf] = {}
        for c in configs:  # a plan queue's default child starts with all of it (no reservation yet)
            if c.reservable:
                self.leaves[c.default_leaf] = Leaf(c.default_leaf, c, 100.0, 100.0, c.capacity)
            else:
                self.leaves[c.path] = Leaf(c.path, c, c.capacity, c.max_capacity, 100.0)

    # --- run-time leaves ------------------------------------------------------------------

    def leaf(self, name: str) -> Leaf | None:
        return self.leaves.get(name)

    def add_reservation_leaf(self, rid: str, plan: QueueConfig) -> Leaf:
        """The plan follower creates a reservation queue: 0/0 effective until the next change."""
        leaf = Leaf(rid, plan, 0.0, 0.0, plan.capacity)
        self.leaves[rid] = leaf
        return leaf

    def remove_leaf(self, name: str) -> None:
        self.leaves.pop(name, None)

    def reservation_leaves(self) -> list[Leaf]:
        return [x for x in self.leaves.values() if x.is_reservation]

    def update_cluster_resource(self, cluster: Resources) -> None:
        """CapacityScheduler.updateClusterResource: every queue's effective resources follow
        its current percentages (the only moment they do)."""
        self.cluster = cluster
        for leaf in self.leaves.values():
            leaf.eff_min = effective(cluster, leaf.absolute_capacity)
            leaf.eff_max = effective(cluster, leaf.absolute_max_capacity)

    def parent_effective(self, cfg: QueueConfig) -> Resources:
        return effective(self.cluster, cfg.capacity)

    def config(self, name: str) -> QueueConfig | None:
        short = name[5:] if name.startswith("root.") else name
        return self.configs.get(short)

    def reservable(self, name: str) -> QueueConfig | None:
        """The plan queue a reservation request names (`default` or `root.default`), if any."""
        cfg = self.config(name)
        return cfg if cfg is not None and cfg.reservable else None

    def plan_queue(self) -> QueueConfig | None:
        return next((c for c in self.configs.values() if c.reservable), None)

    def leaf_for_submit(self, queue: str) -> str:
        """The leaf a new (non-reservation) app runs in; QueueError('unknown', diagnostics) else."""
        if queue.startswith("root."):
            cfg = self.configs.get(queue[5:])
            if cfg is not None:
                return cfg.default_leaf
            for c in self.configs.values():  # the plan's own default leaf, by its full name
                if c.reservable and queue == c.default_leaf:  # (captures/apps-submit-rest-reservation-queue-*)
                    return queue
        else:
            cfg = self.configs.get(queue)
            if cfg is not None and not cfg.reservable:
                return cfg.path
            if cfg is not None:
                # the short name of a plan queue resolves to a `-default` child that does not exist
                raise QueueError("unknown", f"{queue}{PLAN_DEFAULT_SUFFIX}")
        raise QueueError("unknown", queue)

    def leaf_for_move(self, target: str) -> str:
        """The leaf a move lands in; QueueError('undeclared') for the recorded 500 cases."""
        if target.startswith("root."):
            cfg = self.configs.get(target[5:])
            if cfg is not None and not cfg.reservable:
                return cfg.path
            raise QueueError("undeclared", target)
        cfg = self.configs.get(target)
        if cfg is None:
            raise QueueError("undeclared", target)
        return cfg.default_leaf

    def clamp_priority(self, requested: int) -> int:
        return min(requested, self.max_priority)


def check_child_capacities(parent: str, percents: list[float]) -> None:
    """ParentQueue.setChildQueues for percentage children of a parent with a positive capacity
    (3.3.6): |1 - sum of fractions| must be within CAPACITY_SUM_PRECISION; ValueError with the
    RM's own wording otherwise. (A sum of 0, which the RM allows only with
    allow-zero-capacity-sum, is refused: the emulator has no such setting.)"""
    fractions = sum(p / 100.0 for p in percents)
    if abs(1.0 - fractions) > CAPACITY_SUM_PRECISION:
        raise ValueError(f"Illegal capacity sum of {fractions:g} for children of queue {parent} for label=. "
                         f"It should be either 0 or 1.0 (capacities {', '.join(f'{p:g}' for p in percents)} %)")


def _listed(value: Any, key: str) -> list[Any]:
    """A 3.3.6 JSON list that may be absent, one bare object, or a list."""
    got = (value or {}).get(key) or []
    return [got] if isinstance(got, Mapping) else list(got)


def queues_from_scheduler(doc: Mapping[str, Any]) -> tuple[QueueConfig, ...]:
    """The queues under root of a live RM's `GET /ws/v1/cluster/scheduler` answer, as the
    emulator's QueueConfigs (capacities as the RM reports them, float noise included).

    A reservable queue is a parent with `hideReservationQueues` true (or a `-default` child);
    any other queue with children is a layout the emulator does not model: ValueError names it.
    """
    info = (doc.get("scheduler") or {}).get("schedulerInfo") or {}
    if info.get("type") != "capacityScheduler":
        raise ValueError(f"not a CapacityScheduler answer (schedulerInfo.type {info.get('type')!r})")
    out = []
    for q in _listed(info.get("queues"), "queue"):
        name = str(q["queueName"])
        children = {str(c.get("queueName")) for c in _listed(q.get("queues"), "queue")}
        reservable = bool(q.get("hideReservationQueues")) or f"root.{name}{PLAN_DEFAULT_SUFFIX}" in children
        if children and not reservable:
            raise ValueError(f"queue root.{name} has child queues ({', '.join(sorted(children))}): the emulator "
                             "models leaf queues and plan queues under root only")
        out.append(QueueConfig(name, float(q["capacity"]), float(q.get("maxCapacity", 100.0)), reservable=reservable))
    return tuple(out)

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

from dataclasses import dataclass

from harvester.domain import Resources
from harvester.emulator.capacity import ZERO, effective

PLAN_DEFAULT_SUFFIX = "-default"


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
        total = sum(c.capacity for c in configs)
        if abs(total - 100.0) > 1e-6:
            raise ValueError(f"leaf capacities under root must sum to 100, got {total}")
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

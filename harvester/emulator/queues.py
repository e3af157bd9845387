"""The CapacityScheduler queue tree of the emulated RM and its naming rules.

Configured leaves hang under `root`. A reservable leaf (the recorded cluster's `root.default`,
deploy/hadoop/capacity-scheduler.xml) becomes a plan queue: apps submitted to it run in its
auto-created child `root.default-default`, apps of a reservation in a child named after the
reservation. Rules recorded on the live RM (fixtures README, scenarios/queue-move-and-priority):

- submit to `root.default` -> runs in `root.default-default`, REST `queue` shows "root.default";
- submit to the short name `default` -> FAILED "... to unknown queue: default-default";
- move to `default` -> 200 and the app shows "default"; move to `root.default` or
  `root.default-default` -> 500 UndeclaredThrowableException;
- priority above the cluster maximum (0 by default) is clamped, negative values are accepted,
  and a priority change of an app in a reservation queue fails with 500 ClassCastException.
"""

from __future__ import annotations

from dataclasses import dataclass

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


class QueueTree:
    def __init__(self, configs: tuple[QueueConfig, ...] = DEFAULT_QUEUES, max_priority: int = 0) -> None:
        total = sum(c.capacity for c in configs)
        if abs(total - 100.0) > 1e-6:
            raise ValueError(f"leaf capacities under root must sum to 100, got {total}")
        self.configs = {c.name: c for c in configs}
        self.max_priority = max_priority

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

    def is_reservation_leaf(self, leaf: str | None) -> bool:
        return leaf is not None and leaf.startswith("reservation_")

    def clamp_priority(self, requested: int) -> int:
        return min(requested, self.max_priority)

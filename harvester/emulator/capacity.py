"""The CapacityScheduler's arithmetic for one leaf queue (Hadoop 3.3.6, DominantResourceCalculator).

Pure functions, each naming the 3.3.6 code it follows; the recordings they reproduce:

- `user_limit` (UsersManager.computeUserLimit): an app in a reservation queue gets its queue's
  effective capacity plus one container (recurring-reservation: 3 x 1024 MB in a 2048 MB queue,
  5 in 4096, recurring-reservation-update: 7 in 6144), and in a 0 % queue its AM plus one
  container (2048 MB), because the queue's capacity is raised to at least the minimum
  allocation ("allow progress for queues with miniscule capacity") and a user may be assigned
  while its usage is not ABOVE the limit (LeafQueue.canAssignToUser).
- `fits_queue` (AbstractCSQueue.canAssignToThisQueue + the allocator's headroom check): the
  queue's usage plus the request stays within its effective MAXIMUM resource (a reservation
  queue with effective 0/0 gets nothing; default-default 16 x 1 GB on a 16 GB cluster).
- `am_limit` (LeafQueue.getAMResourceLimitPerPartition): maximum-am-resource-percent of the
  queue's usable resource, rounded up to the minimum allocation.
- `effective` (percentage queues' effectiveMin/MaxResource): absolute capacity x the cluster,
  computed only when the cluster resource changes (the recorded "stale until a nudge").

Comparisons use dominant shares of the cluster resource like `Resources.greaterThan(rc, ...)`.
"""

from __future__ import annotations

import math

from harvester.domain import Resources

ZERO = Resources(0, 0)


def share(r: Resources, cluster: Resources) -> float:
    """DominantResourceCalculator: the larger of the two shares of the cluster."""
    def one(x: int, whole: int) -> float:
        if whole > 0:
            return x / whole
        return math.inf if x > 0 else (-math.inf if x < 0 else 0.0)
    return max(one(r.memory_mb, cluster.memory_mb), one(r.vcores, cluster.vcores))


def greater(a: Resources, b: Resources, cluster: Resources) -> bool:
    return share(a, cluster) > share(b, cluster)


def dmax(a: Resources, b: Resources, cluster: Resources) -> Resources:
    return a if share(a, cluster) >= share(b, cluster) else b


def dmin(a: Resources, b: Resources, cluster: Resources) -> Resources:
    return a if share(a, cluster) <= share(b, cluster) else b


def round_up(r: Resources, step: Resources) -> Resources:
    def up(x: int, s: int) -> int:
        return x if s <= 0 else -(-x // s) * s
    return Resources(up(r.memory_mb, step.memory_mb), up(r.vcores, step.vcores))


def normalize(ask: Resources, minimum: Resources) -> Resources:
    """SchedulerUtils.normalizeRequest: at least the minimum allocation, in its multiples."""
    return round_up(Resources(max(ask.memory_mb, minimum.memory_mb), max(ask.vcores, minimum.vcores)), minimum)


def scaled(r: Resources, factor: float) -> Resources:
    """Resources.multiply: each value times `factor`, rounded down."""
    return Resources(int(r.memory_mb * factor), int(r.vcores * factor))


def effective(cluster: Resources, absolute_pct: float) -> Resources:
    """Effective resource of a percentage-configured queue: its absolute share of the cluster."""
    return scaled(cluster, absolute_pct / 100.0)


def user_limit(*, eff_min: Resources, minimum: Resources, queue_used: Resources, active_used: Resources,
               active_users: int, user_limit_pct: float, user_limit_factor: float,
               cluster: Resources) -> Resources:
    """UsersManager.computeUserLimit (3.3.6, RESPECT_PARTITION_EXCLUSIVITY)."""
    queue_cap = dmax(eff_min, minimum, cluster)  # "allow progress for queues with miniscule capacity"
    current = queue_cap if share(queue_used, cluster) < share(queue_cap, cluster) else queue_used + minimum
    users = max(active_users, 1)
    used = active_used + minimum
    by_users = Resources(-(-used.memory_mb // users), -(-used.vcores // users))
    by_pct = scaled(current, user_limit_pct / 100.0)
    limit = dmax(by_users, by_pct, cluster)
    max_user = scaled(queue_cap, user_limit_factor)
    return round_up(dmin(limit, max_user, cluster), minimum)


def may_assign_to_user(user_used: Resources, limit: Resources, cluster: Resources) -> bool:
    """LeafQueue.canAssignToUser: refused only once the user's usage is ABOVE the limit."""
    return not greater(user_used, limit, cluster)


def fits_queue(queue_used: Resources, request: Resources, eff_max: Resources, cluster: Resources) -> bool:
    """Queue headroom (effective max - used) must cover the request (and be positive at all)."""
    headroom = eff_max - queue_used
    if headroom.memory_mb <= 0 and headroom.vcores <= 0:
        return False
    return request.fits_in(headroom)


def am_limit(*, eff_min: Resources, current_limit: Resources, am_pct: float, minimum: Resources) -> Resources:
    """LeafQueue.getAMResourceLimitPerPartition: the usable resource is the queue's current
    limit when its guarantee fits in it, else the guarantee; times the AM percent, rounded up."""
    usable = current_limit if eff_min.fits_in(current_limit) else eff_min
    return round_up(scaled(usable, am_pct), minimum)

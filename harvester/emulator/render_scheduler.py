"""GET /ws/v1/cluster/scheduler in the CapacityScheduler's shape (captures/scheduler*).

Written from rm_client.wire.scheduler's field table. root -> configured queues; a reservable
queue is a parent ("plan queue", `hideReservationQueues` true, ordering "utilization") whose
children are `root.default-default` and one leaf per reservation queue the plan follower
created, named by the reservation id. Every leaf shows its run-time state (queues.Leaf):
capacity and maximum capacity as percentages of its parent, and effective min/max resources
that change only with the cluster resource (the recorded "stale until a nudge"). A user is
listed while it has an app in the leaf (UsersManager drops it with its last app). Percentages
are Java floats.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from harvester.domain import Resources
from harvester.emulator.lifecycle import APP_TERMINAL
from harvester.emulator.queues import Leaf, QueueConfig
from harvester.emulator.records import App
from harvester.emulator.render_common import ZERO, dominant_pct, java_float, ms, res
from rm_client.wire.resources import PartitionResourceUsage
from rm_client.wire.scheduler import (
    HealthOperation,
    HealthRunDetail,
    Queue,
    QueueAcl,
    QueueCapacities,
    QueueUser,
    SchedulerHealth,
    SchedulerInfo,
    encode_scheduler,
)

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

Z = Resources(0, 0)
LEAF_TYPE = "capacitySchedulerLeafQueueInfo"


def _acls(submit: str) -> tuple[QueueAcl, ...]:
    return (QueueAcl("SUBMIT_APP", submit), QueueAcl("ADMINISTER_QUEUE", submit),
            QueueAcl("APPLICATION_MAX_PRIORITY", "*"))


def _capacities(cap: float, used: float, maxc: float, abs_cap: float, abs_used: float, abs_max: float,
                conf: Resources, eff_min: Resources, eff_max: Resources) -> tuple[QueueCapacities, ...]:
    return (QueueCapacities("", java_float(cap), java_float(used), java_float(maxc), java_float(abs_cap),
                            java_float(abs_used), java_float(abs_max), 0.0, res(conf), res(conf), res(eff_min),
                            res(eff_max)),)


class SchedulerView:
    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.cluster = emu.cluster_resource()
        self.sched = emu.scheduler
        self.apps_by_leaf: defaultdict[str, list[App]] = defaultdict(list)
        for app in emu.apps.values():
            if app.leaf is not None and app.state not in APP_TERMINAL:
                self.apps_by_leaf[app.leaf].append(app)

    def _pending(self, leaf: str) -> tuple[Resources, int]:
        mem = vc = n = 0
        for app in self.apps_by_leaf[leaf]:
            for ask in app.asks:
                mem += ask.resources.memory_mb * ask.count
                vc += ask.resources.vcores * ask.count
                n += ask.count
        return Resources(mem, vc), n

    def _users(self, leaf: Leaf) -> tuple[QueueUser, ...]:
        limit = self.sched.user_limit(leaf)
        out = []
        for name in sorted({a.spec.user for a in self.apps_by_leaf[leaf.name]}):
            apps = [a for a in self.apps_by_leaf[leaf.name] if a.spec.user == name]
            used = self.sched.user_used[(leaf.name, name)]
            am = sum((a.am_resource for a in apps if a.activated), Z)
            out.append(QueueUser(
                username=name, resources_used=res(used), num_pending_applications=sum(1 for a in apps if not a.activated),
                num_active_applications=sum(1 for a in apps if a.activated), am_resource_used=res(am),
                user_resource_limit=res(limit),
                partition_usage=(PartitionResourceUsage("", res(used), ZERO, ZERO, res(am), ZERO, ZERO),),
                user_weight=1.0, is_active=any(a.asks for a in apps)))
        return tuple(out)

    def leaf(self, leaf: Leaf) -> Queue:
        used = self.sched.used[leaf.name]
        am_used = self.sched.am_used[leaf.name]
        pending, n_pending = self._pending(leaf.name)
        apps = self.apps_by_leaf[leaf.name]
        n_cont = sum(len(self.emu.live_containers(a)) for a in apps)
        used_pct = dominant_pct(used, leaf.eff_min, self.cluster)
        abs_used = dominant_pct(used, self.cluster, self.cluster)
        am_limit = self.sched.am_limit(leaf) if leaf.eff_max.memory_mb else Z
        am_pct = leaf.config.max_am_resource_percent
        name = leaf.name if leaf.is_reservation or leaf.config.reservable else leaf.config.name
        return Queue(
            type=LEAF_TYPE, name=name, capacity_percent=java_float(leaf.capacity), used_capacity_percent=used_pct,
            max_capacity_percent=java_float(leaf.max_capacity), absolute_capacity_percent=java_float(leaf.absolute_capacity),
            absolute_max_capacity_percent=java_float(leaf.absolute_max_capacity), absolute_used_capacity_percent=abs_used,
            num_applications=len(apps), is_absolute_resource=False, state="RUNNING", resources_used=res(used),
            hide_reservation_queues=False, node_labels=("*",), allocated_containers=n_cont, reserved_containers=0,
            pending_containers=n_pending,
            capacities=_capacities(leaf.capacity, used_pct, leaf.max_capacity, leaf.absolute_capacity, abs_used,
                                   leaf.absolute_max_capacity, Z, leaf.eff_min, leaf.eff_max),
            partition_usage=(PartitionResourceUsage("", res(used), ZERO, res(pending), res(am_used), res(am_limit),
                                                    res(am_limit)),),
            min_effective_capacity=res(leaf.eff_min), max_effective_capacity=res(leaf.eff_max),
            maximum_allocation=res(self.max_allocation()), acls=_acls(" "), queue_priority=0,
            ordering_policy="fifo", auto_create_child_queue_enabled=False, leaf_queue_template={},
            num_active_applications=sum(1 for a in apps if a.activated),
            num_pending_applications=sum(1 for a in apps if not a.activated), num_containers=n_cont,
            max_applications=10000, max_applications_per_user=10000, user_limit_percent=100,
            users=self._users(leaf), user_limit_factor=leaf.config.user_limit_factor,
            configured_max_am_resource_limit=am_pct, am_resource_limit=res(am_limit), used_am_resource=res(am_used),
            user_am_resource_limit=res(am_limit), preemption_disabled=True, intra_queue_preemption_disabled=True,
            default_priority=0, is_auto_created_leaf_queue=False, max_application_lifetime_s=-1,
            default_application_lifetime_s=-1)

    def max_allocation(self) -> Resources:
        m = self.emu.model
        if len(m) == 0:
            return Z
        return Resources(int(m.total_mem.max()), int(m.total_vcores.max()))

    def plan_queue(self, cfg: QueueConfig) -> Queue:
        queues = self.emu.queues
        plan_res = queues.parent_effective(cfg)
        leaves = [x for x in queues.leaves.values() if x.config is cfg]
        leaves.sort(key=lambda x: (x.is_reservation, x.name))  # the -default queue first
        children = tuple(self.leaf(x) for x in leaves)
        used = sum((self.sched.used[x.name] for x in leaves), Z)
        pending, n_pending = Z, 0
        for x in leaves:
            p, n = self._pending(x.name)
            pending, n_pending = pending + p, n_pending + n
        used_pct = dominant_pct(used, plan_res, self.cluster)
        abs_used = dominant_pct(used, self.cluster, self.cluster)
        return Queue(
            name=cfg.name, capacity_percent=java_float(cfg.capacity), used_capacity_percent=used_pct,
            max_capacity_percent=java_float(cfg.max_capacity), absolute_capacity_percent=java_float(cfg.capacity),
            absolute_max_capacity_percent=java_float(cfg.max_capacity), absolute_used_capacity_percent=abs_used,
            num_applications=sum(len(self.apps_by_leaf[x.name]) for x in leaves), is_absolute_resource=False,
            state="RUNNING", children=children, resources_used=res(used), hide_reservation_queues=True,
            node_labels=("*",), allocated_containers=sum(c.allocated_containers or 0 for c in children),
            reserved_containers=0, pending_containers=n_pending,
            capacities=_capacities(cfg.capacity, used_pct, cfg.max_capacity, cfg.capacity, abs_used, cfg.max_capacity,
                                   Z, plan_res, plan_res),
            partition_usage=(PartitionResourceUsage("", res(used), ZERO, res(pending)),),
            min_effective_capacity=res(plan_res), max_effective_capacity=res(plan_res),
            maximum_allocation=res(self.max_allocation()), acls=_acls("*"), queue_priority=0,
            ordering_policy="utilization", auto_create_child_queue_enabled=False, leaf_queue_template={})

    def render(self) -> dict:  # type: ignore[type-arg]
        emu = self.emu
        queues = []
        for cfg in emu.queues.configs.values():
            if cfg.reservable:
                queues.append(self.plan_queue(cfg))
            else:
                leaf = emu.queues.leaf(cfg.path)
                assert leaf is not None
                queues.append(self.leaf(leaf))
        used = emu.cluster_allocated()
        used_pct = dominant_pct(used, self.cluster, self.cluster)
        health = SchedulerHealth(ms(emu.now), tuple(HealthOperation(op) for op in (
            "last-allocation", "last-release", "last-preemption", "last-reservation")),
            tuple(HealthRunDetail(op, 0, ZERO) for op in ("releases", "allocations", "reservations")))
        root = Queue(
            type="capacityScheduler", name="root", capacity_percent=100.0, used_capacity_percent=used_pct,
            max_capacity_percent=100.0, is_absolute_resource=False, children=tuple(queues),
            capacities=_capacities(100.0, used_pct, 100.0, 100.0, used_pct, 100.0, self.cluster, self.cluster,
                                   self.cluster),
            health=health, maximum_allocation=res(self.max_allocation()), acls=_acls("*"), queue_priority=0,
            ordering_policy="utilization")
        return encode_scheduler(SchedulerInfo("capacityScheduler", root))

"""GET /ws/v1/cluster/scheduler in the CapacityScheduler's shape (captures/scheduler*).

root -> configured leaves; a reservable leaf is a parent ("plan queue", `hideReservationQueues`
true, ordering "utilization") whose children are `root.default-default` and one leaf per
active reservation, named by the reservation id. A reservation queue's capacity is its
allocation now as a percentage of the plan queue; its effective resource is 0 until the
cluster resource changes (recorded quirk, plan.py). Percentages are Java floats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harvester.domain import Resources
from harvester.emulator.jsonfmt import jfloat
from harvester.emulator.lifecycle import APP_TERMINAL, AppState
from harvester.emulator.render_common import ms, res, zero

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

Z = Resources(0, 0)


def _acls(submit: str) -> dict[str, Any]:
    return {"queueAcl": [{"accessType": "SUBMIT_APP", "accessControlList": submit},
                         {"accessType": "ADMINISTER_QUEUE", "accessControlList": submit},
                         {"accessType": "APPLICATION_MAX_PRIORITY", "accessControlList": "*"}]}


def _pct(part: int, whole: int) -> float:
    return jfloat(100.0 * part / whole) if whole > 0 else 0.0


def _capacities(cap: float, used: float, maxc: float, abs_cap: float, abs_used: float, abs_max: float,
                conf_min: Resources, conf_max: Resources, eff_min: Resources, eff_max: Resources) -> dict[str, Any]:
    return {"queueCapacitiesByPartition": [{
        "partitionName": "", "capacity": jfloat(cap), "usedCapacity": jfloat(used), "maxCapacity": jfloat(maxc),
        "absoluteCapacity": jfloat(abs_cap), "absoluteUsedCapacity": jfloat(abs_used),
        "absoluteMaxCapacity": jfloat(abs_max), "maxAMLimitPercentage": 0.0,
        "configuredMinResource": res(conf_min), "configuredMaxResource": res(conf_max),
        "effectiveMinResource": res(eff_min), "effectiveMaxResource": res(eff_max)}]}


class SchedulerView:
    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.cluster = emu.cluster_resource()
        self.used, self.am_used = emu.scheduler.leaf_usage()
        self.apps_by_leaf: dict[str, list] = {}
        for app in emu.apps.values():
            if app.leaf is not None and app.state not in APP_TERMINAL:
                self.apps_by_leaf.setdefault(app.leaf, []).append(app)

    def _pending(self, leaf: str) -> tuple[Resources, int]:
        mem = vc = n = 0
        for app in self.apps_by_leaf.get(leaf, []):
            for ask in app.asks:
                mem += ask.resources.memory_mb * ask.count
                vc += ask.resources.vcores * ask.count
                n += ask.count
        return Resources(mem, vc), n

    def _users(self, leaf: str, limit: Resources) -> dict[str, Any]:
        by_user: dict[str, list] = {}
        for app in self.apps_by_leaf.get(leaf, []):
            by_user.setdefault(app.spec.user, []).append(app)
        if not by_user:
            return {}
        users = []
        for name, apps in sorted(by_user.items()):
            used = am = Z
            for app in apps:
                for rec in self.emu.live_containers(app):
                    used = used + rec.resources
                am = am + app.spec.am
            active = sum(1 for a in apps if a.state in (AppState.RUNNING, AppState.ACCEPTED))
            users.append({
                "username": name, "resourcesUsed": res(used), "numPendingApplications": 0,
                "numActiveApplications": active, "AMResourceUsed": res(am), "userResourceLimit": res(limit),
                "resources": {"resourceUsagesByPartition": [{
                    "partitionName": "", "used": res(used), "reserved": zero(), "pending": zero(), "amUsed": res(am),
                    "amLimit": zero(), "userAmLimit": zero()}]},
                "userWeight": 1.0, "isActive": True})
        return {"user": users}

    def leaf(self, leaf: str, name: str, cap_pct: float, abs_cap_pct: float, eff: Resources,
             am_pct: float) -> dict[str, Any]:
        used = self.used.get(leaf, Z)
        am_used = self.am_used.get(leaf, Z)
        pending, n_pending = self._pending(leaf)
        apps = self.apps_by_leaf.get(leaf, [])
        n_cont = sum(len(self.emu.live_containers(a)) for a in apps)
        used_pct = _pct(used.memory_mb, eff.memory_mb)
        abs_used = _pct(used.memory_mb, self.cluster.memory_mb)
        am_limit = Resources(int(eff.memory_mb * am_pct), int(eff.vcores * am_pct)) if eff.memory_mb else Z
        return {
            "type": "capacitySchedulerLeafQueueInfo", "capacity": jfloat(cap_pct), "usedCapacity": used_pct,
            "maxCapacity": 100.0, "absoluteCapacity": jfloat(abs_cap_pct), "absoluteMaxCapacity": 100.0,
            "absoluteUsedCapacity": abs_used, "numApplications": len(apps), "queueName": name,
            "isAbsoluteResource": False, "state": "RUNNING", "resourcesUsed": res(used),
            "hideReservationQueues": False, "nodeLabels": ["*"], "allocatedContainers": n_cont,
            "reservedContainers": 0, "pendingContainers": n_pending,
            "capacities": _capacities(cap_pct, used_pct, 100.0, abs_cap_pct, abs_used, 100.0, Z, Z, eff, eff),
            "resources": {"resourceUsagesByPartition": [{
                "partitionName": "", "used": res(used), "reserved": zero(), "pending": res(pending),
                "amUsed": res(am_used), "amLimit": res(am_limit), "userAmLimit": res(am_limit)}]},
            "minEffectiveCapacity": res(eff), "maxEffectiveCapacity": res(eff),
            "maximumAllocation": res(self.max_allocation()), "queueAcls": _acls(" "), "queuePriority": 0,
            "orderingPolicyInfo": "fifo", "autoCreateChildQueueEnabled": False, "leafQueueTemplate": {},
            "numActiveApplications": sum(1 for a in apps if a.attempt and a.attempt.am_container_id),
            "numPendingApplications": sum(1 for a in apps if not (a.attempt and a.attempt.am_container_id)),
            "numContainers": n_cont, "maxApplications": 10000, "maxApplicationsPerUser": 10000, "userLimit": 100,
            "users": self._users(leaf, eff), "userLimitFactor": 1.0, "configuredMaxAMResourceLimit": am_pct,
            "AMResourceLimit": res(am_limit), "usedAMResource": res(am_used), "userAMResourceLimit": res(am_limit),
            "preemptionDisabled": True, "intraQueuePreemptionDisabled": True, "defaultPriority": 0,
            "isAutoCreatedLeafQueue": False, "maxApplicationLifetime": -1, "defaultApplicationLifetime": -1,
        }

    def max_allocation(self) -> Resources:
        m = self.emu.model
        if len(m) == 0:
            return Z
        return Resources(int(m.total_mem.max()), int(m.total_vcores.max()))

    def plan_queue(self, cfg: Any) -> dict[str, Any]:
        emu = self.emu
        share = cfg.capacity / 100.0
        plan_res = Resources(int(self.cluster.memory_mb * share), int(self.cluster.vcores * share))
        reserved = emu.plan.reserved_now()
        children = []
        res_total = 0.0
        for rid, r in sorted(reserved.items()):
            pct = _pct(r.memory_mb, plan_res.memory_mb)
            res_total += pct
            eff = emu.plan.leaf_limit(rid)
            children.append(self.leaf(rid, rid, pct, pct * share, eff, cfg.max_am_resource_percent))
        default_pct = max(0.0, 100.0 - res_total)
        children.insert(0, self.leaf(cfg.default_leaf, cfg.default_leaf, default_pct, default_pct * share, plan_res,
                                     cfg.max_am_resource_percent))
        used = Z
        for leaf_name, u in self.used.items():
            if leaf_name == cfg.default_leaf or leaf_name in reserved:
                used = used + u
        pending = Z
        n_pending = 0
        for leaf_name in [cfg.default_leaf, *reserved]:
            p, n = self._pending(leaf_name)
            pending, n_pending = pending + p, n_pending + n
        used_pct = _pct(used.memory_mb, plan_res.memory_mb)
        abs_used = _pct(used.memory_mb, self.cluster.memory_mb)
        n_apps = sum(len(self.apps_by_leaf.get(x, [])) for x in [cfg.default_leaf, *reserved])
        n_cont = sum(c["allocatedContainers"] for c in children)
        return {
            "capacity": jfloat(cfg.capacity), "usedCapacity": used_pct, "maxCapacity": jfloat(cfg.max_capacity),
            "absoluteCapacity": jfloat(cfg.capacity), "absoluteMaxCapacity": jfloat(cfg.max_capacity),
            "absoluteUsedCapacity": abs_used, "numApplications": n_apps, "queueName": cfg.name,
            "isAbsoluteResource": False, "state": "RUNNING", "queues": {"queue": children},
            "resourcesUsed": res(used), "hideReservationQueues": True, "nodeLabels": ["*"],
            "allocatedContainers": n_cont, "reservedContainers": 0, "pendingContainers": n_pending,
            "capacities": _capacities(cfg.capacity, used_pct, cfg.max_capacity, cfg.capacity, abs_used,
                                      cfg.max_capacity, Z, Z, plan_res, plan_res),
            "resources": {"resourceUsagesByPartition": [{
                "partitionName": "", "used": res(used), "reserved": zero(), "pending": res(pending)}]},
            "minEffectiveCapacity": res(plan_res), "maxEffectiveCapacity": res(plan_res),
            "maximumAllocation": res(self.max_allocation()), "queueAcls": _acls("*"), "queuePriority": 0,
            "orderingPolicyInfo": "utilization", "autoCreateChildQueueEnabled": False, "leafQueueTemplate": {},
        }

    def render(self) -> dict[str, Any]:
        emu = self.emu
        queues = []
        for cfg in emu.queues.configs.values():
            if cfg.reservable:
                queues.append(self.plan_queue(cfg))
            else:
                share = cfg.capacity / 100.0
                eff = Resources(int(self.cluster.memory_mb * share), int(self.cluster.vcores * share))
                q = self.leaf(cfg.path, cfg.name, cfg.capacity, cfg.capacity, eff, cfg.max_am_resource_percent)
                queues.append(q)
        used = emu.cluster_allocated()
        used_pct = _pct(used.memory_mb, self.cluster.memory_mb)
        na = {"nodeId": "N/A", "containerId": "N/A", "queue": "N/A"}
        return {"scheduler": {"schedulerInfo": {
            "type": "capacityScheduler", "capacity": 100.0, "usedCapacity": used_pct, "maxCapacity": 100.0,
            "queueName": "root", "isAbsoluteResource": False, "queues": {"queue": queues},
            "capacities": _capacities(100.0, used_pct, 100.0, 100.0, used_pct, 100.0, self.cluster, self.cluster,
                                      self.cluster, self.cluster),
            "health": {"lastrun": ms(emu.now), "operationsInfo": [
                {"operation": op, **na} for op in ("last-allocation", "last-release", "last-preemption",
                                                   "last-reservation")],
                "lastRunDetails": [{"operation": op, "count": 0, "resources": zero()}
                                   for op in ("releases", "allocations", "reservations")]},
            "maximumAllocation": res(self.max_allocation()), "queueAcls": _acls("*"), "queuePriority": 0,
            "orderingPolicyInfo": "utilization",
        }}}

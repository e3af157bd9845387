"""Container placement of the emulated CapacityScheduler (one pass per NM heartbeat tick).

Simplified but faithful where the recordings are: apps are served in priority then
submission order; an AM starts only if its leaf queue's AM limit (maximum-am-resource-percent
of the leaf's effective resource) leaves room, and a reservation queue's effective resource is
0 until the cluster resource changes (plan.py). Allocation is node-heartbeat driven as in the
CapacityScheduler: within a 1 s tick nodes heartbeat in the order of their phase, and each
heartbeat places at most one container (overcommit-timeout: four workers on one node arrived
one per second) on the first node where both dimensions fit (DominantResourceCalculator:
memory AND vcores). A node's free space excludes containers the RM killed but the NM has not
yet reported (the node's `usedResource` still counts them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from harvester.domain import Resources
from harvester.emulator.applications import activation_diagnostics
from harvester.emulator.lifecycle import APP_TERMINAL
from harvester.emulator.records import AmKind, App, Ask

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator


class Scheduler:
    def __init__(self, emu: Emulator) -> None:
        self.emu = emu

    def leaf_limit(self, leaf: str) -> Resources:
        """The most the leaf may hold now (its effective max resource)."""
        emu = self.emu
        if emu.queues.is_reservation_leaf(leaf):
            return emu.plan.leaf_limit(leaf)
        cfg = emu.queues.config(leaf.removesuffix("-default"))
        cluster = emu.cluster_resource()
        pct = (cfg.max_capacity if cfg is not None else 100.0) / 100.0
        return Resources(int(cluster.memory_mb * pct), int(cluster.vcores * pct))

    def leaf_usage(self) -> tuple[dict[str, Resources], dict[str, Resources]]:
        """Per leaf: resources held by live containers, and by live AM containers."""
        used: dict[str, Resources] = {}
        am: dict[str, Resources] = {}
        for app in self.emu.apps.values():
            if app.state in APP_TERMINAL or app.leaf is None:
                continue
            for rec in self.emu.live_containers(app):
                used[app.leaf] = used.get(app.leaf, Resources(0, 0)) + rec.resources
                if rec.is_am:
                    am[app.leaf] = am.get(app.leaf, Resources(0, 0)) + rec.resources
        return used, am

    def schedule(self, t: float) -> None:
        emu = self.emu
        waiting = [a for a in emu.apps.values() if a.asks and a.state not in APP_TERMINAL]
        if not waiting:
            return
        waiting.sort(key=lambda a: (-a.priority, a.submitted_at, a.seq))
        used, am_used = self.leaf_usage()
        m = emu.model
        free_mem = np.where(m.running, m.cap_mem - m.alloc_mem - emu.lag_mem, -1)
        free_vc = np.where(m.running, m.cap_vcores - m.alloc_vcores - emu.lag_vc, -1)
        for app in waiting:
            if app.stuck_until_resource_change or app.leaf is None:
                continue
            limit = self.leaf_limit(app.leaf)
            for ask in list(app.asks):
                if ask.is_am:
                    cfg = emu.queues.config(app.leaf.removesuffix("-default"))
                    pct = cfg.max_am_resource_percent if cfg is not None else 0.5
                    am_limit = Resources(int(limit.memory_mb * pct), int(limit.vcores * pct))
                    if not (am_used.get(app.leaf, Resources(0, 0)) + ask.resources).fits_in(am_limit):
                        if emu.queues.is_reservation_leaf(app.leaf):
                            cap = emu.plan.plan_capacity()
                            pct_q = 100.0 * emu.plan.reservations[app.leaf].reserved_at(emu.now_ms()).memory_mb / max(
                                cap.memory_mb, 1)
                            app.diagnostics = activation_diagnostics(app, emu, pct_q, limit)
                        continue
                while ask.count > 0:
                    if not (used.get(app.leaf, Resources(0, 0)) + ask.resources).fits_in(limit):
                        break
                    node = self._pick(free_mem, free_vc, ask.resources, emu.hb_phase)
                    if node is None:
                        break
                    self._start(app, ask, node)
                    # one assignment per node heartbeat: the node is done for this tick
                    free_mem[node] = -1
                    free_vc[node] = -1
                    used[app.leaf] = used.get(app.leaf, Resources(0, 0)) + ask.resources
                    if ask.is_am:
                        am_used[app.leaf] = am_used.get(app.leaf, Resources(0, 0)) + ask.resources
                if ask.count == 0:
                    app.asks.remove(ask)

    @staticmethod
    def _pick(free_mem: np.ndarray, free_vc: np.ndarray, res: Resources, phase: np.ndarray) -> int | None:
        """The first node to heartbeat this tick that fits `res` (and got nothing yet)."""
        ok = (free_mem >= res.memory_mb) & (free_vc >= res.vcores)
        if not ok.any():
            return None
        return int(np.argmin(np.where(ok, phase, np.inf)))

    def _start(self, app: App, ask: Ask, node: int) -> None:
        spec = app.spec
        if ask.is_am:
            cpu, mem = spec.am_cpu_cores, spec.am_mem_used_mb
        else:
            cpu, mem = spec.worker_cpu_cores, spec.worker_mem_used_mb
        if spec.kind is AmKind.COMMAND and ask.is_am:
            mem = 6.0
        rec = self.emu.start_container(app, node, ask.resources, is_am=ask.is_am, priority=ask.priority,
                                       allocation_request_id=ask.allocation_request_id, cpu_cores=cpu,
                                       mem_used_mb=mem)
        ask.count -= 1
        self.emu.apps_mgr.on_allocated(app, rec)

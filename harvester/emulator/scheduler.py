"""Container placement of the emulated CapacityScheduler, at NodeManager heartbeats.

As in the CapacityScheduler (no asynchronous scheduling), containers are placed when a node
heartbeats, one per heartbeat (the RM logs of every scenario: a node gets its next container
at its next heartbeat), on a node where both dimensions fit (DominantResourceCalculator). A
NodeManager that reports a finished container beats out of band, so its space is reused at
once (recurring-reservation: map _000003 COMPLETED 07:23:33.887, _000004 assigned 2 ms later).
A node's free space excludes containers the RM killed that the NM has not reported yet.

Which request may take a container follows the leaf queue's rules (capacity.py): the queue's
effective maximum, the user limit, and the AM limit at activation (the first app of a queue is
always activated). Apps are served by priority, then submission.

Instead of stepping every heartbeat of every node, `next_time` finds the earliest heartbeat of
a node that fits a request the queue rules allow now; nothing is stepped while every waiting
request is blocked, until something changes (`touch`).

The `Emulator` (state.py) owns this component; it is not imported here so imports stay one-way.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from harvester.domain import Resources
from harvester.emulator import capacity as cap
from harvester.emulator.applications import activation_diagnostics
from harvester.emulator.dynamics import next_beats
from harvester.emulator.lifecycle import APP_TERMINAL
from harvester.emulator.queues import Leaf
from harvester.emulator.records import AmKind, App, Ask, ContainerRecord

Z = Resources(0, 0)


class Scheduler:
    def __init__(self, emu: Any) -> None:
        self.emu = emu
        self.used: defaultdict[str, Resources] = defaultdict(lambda: Z)          # leaf -> live containers
        self.am_used: defaultdict[str, Resources] = defaultdict(lambda: Z)       # leaf -> live AM containers
        self.user_used: defaultdict[tuple[str, str], Resources] = defaultdict(lambda: Z)
        self.last_beat = np.zeros(0)
        self._dirty = True
        self._oob: list[int] = []
        self._next = math.inf
        self._next_node = -1
        self._plan_used: dict[str, Resources] = {}
        self._live: list[App] = []   # the apps not terminal, in submission order (`live_apps`)
        self._seen = 0               # how many of emu.apps (insertion-ordered, never removed) were looked at

    # --- bookkeeping ----------------------------------------------------------------------

    def grow(self, k: int) -> None:
        self.last_beat = np.concatenate([self.last_beat, np.full(k, -np.inf)])

    def touch(self, node: int | None = None) -> None:
        """Something changed: recompute the next allocation (and beat `node` out of band now)."""
        self._dirty = True
        if node is not None and node not in self._oob:
            self._oob.append(node)

    def account(self, app: App, rec: ContainerRecord, sign: int) -> None:
        """A container of `app` started (+1) or ended (-1) in its leaf."""
        if app.leaf is None:
            return
        r = rec.resources if sign > 0 else Resources(-rec.resources.memory_mb, -rec.resources.vcores)
        self.used[app.leaf] = self.used[app.leaf] + r
        self.user_used[(app.leaf, app.spec.user)] = self.user_used[(app.leaf, app.spec.user)] + r
        if rec.is_am:
            self.am_used[app.leaf] = self.am_used[app.leaf] + r

    def move(self, app: App, leaf: str) -> None:
        """Move `app` with its running containers to `leaf` (queue move, reservation end)."""
        for rec in self.emu.live_containers(app):
            self.account(app, rec, -1)
        app.leaf = leaf
        for rec in self.emu.live_containers(app):
            self.account(app, rec, +1)
        self.touch()

    # --- time -----------------------------------------------------------------------------

    def next_time(self) -> float:
        if self._oob:
            return self.emu.now
        if self._dirty:
            self._dirty = False
            self._next, self._next_node = self._earliest()
        return self._next

    def beat(self, t: float) -> None:
        """A heartbeat (regular or out of band) of the node `next_time` named: place one container."""
        node = self._oob.pop(0) if self._oob else self._next_node
        self._dirty = True
        if node < 0 or not self.emu.model.running[node]:
            return
        self.last_beat[node] = t
        free = self._free(node)
        for app, ask in self._allowed():
            if ask.resources.fits_in(free):
                self._start(app, ask, node)
                return

    def _free(self, node: int) -> Resources:
        m, emu = self.emu.model, self.emu
        return Resources(int(m.cap_mem[node] - m.alloc_mem[node] - emu.lag_mem[node]),
                         int(m.cap_vcores[node] - m.alloc_vcores[node] - emu.lag_vc[node]))

    def _earliest(self) -> tuple[float, int]:
        sizes = {ask.resources for _, ask in self._allowed()}
        if not sizes:
            return math.inf, -1
        emu, m = self.emu, self.emu.model
        free_mem = np.where(m.running, m.cap_mem - m.alloc_mem - emu.lag_mem, -1)
        free_vc = np.where(m.running, m.cap_vcores - m.alloc_vcores - emu.lag_vc, -1)
        ok = np.zeros(len(m), dtype=bool)
        for s in sizes:
            ok |= (free_mem >= s.memory_mb) & (free_vc >= s.vcores)
        cand = np.flatnonzero(ok)
        if len(cand) == 0:
            return math.inf, -1
        # the first beat at or after now that this node has not already used
        after = np.maximum(emu.now - 1e-9, self.last_beat[cand] + 1e-6)
        beats = next_beats(after, emu.hb_phase[cand], emu.timing.heartbeat_s)  # type: ignore[arg-type]
        i = int(np.argmin(beats))
        return float(beats[i]), int(cand[i])

    # --- queue rules ----------------------------------------------------------------------

    def live_apps(self) -> list[App]:
        """The apps not in a terminal state, in `emu.apps` order. Apps are only ever added to
        `emu.apps` and a terminal state is final, so the list is the previous one without the apps
        that ended plus the apps added since: the same apps as a scan of every app ever submitted
        (which grows all week long), without the scan."""
        apps = self.emu.apps
        if len(apps) > self._seen:
            self._live += list(apps.values())[self._seen:]
            self._seen = len(apps)
        self._live = [a for a in self._live if a.state not in APP_TERMINAL]
        return self._live

    def _allowed(self) -> list[tuple[App, Ask]]:
        """Requests the queue rules allow now, in the order the scheduler serves them (at most
        the first allowed request of each app: the rest waits for the next heartbeat)."""
        emu = self.emu
        live = self.live_apps()
        waiting = [a for a in live if a.asks and a.leaf is not None and not a.stuck_until_resource_change]
        waiting.sort(key=lambda a: (-a.priority, a.submitted_at, a.seq))
        out = []
        users: dict[str, set[str]] = {}
        for a in live:
            if a.leaf is not None:
                users.setdefault(a.leaf, set()).add(a.spec.user)
        limits: dict[str, Resources] = {}
        self._plan_used = {c.name: sum((self.used[x.name] for x in emu.queues.leaves.values() if x.config is c), Z)
                           for c in emu.queues.configs.values() if c.reservable}
        for app in waiting:
            leaf = emu.queues.leaf(app.leaf)
            if leaf is None or not self._activate(app, leaf):
                continue
            if leaf.name not in limits:
                limits[leaf.name] = self.user_limit(leaf, users.get(leaf.name, set()))
            for ask in app.asks:
                if self._may_take(app, leaf, ask.resources, limits[leaf.name]):
                    out.append((app, ask))
                    break
                if ask.is_am:
                    self._waiting_for_am(app, leaf)
        return out

    def _may_take(self, app: App, leaf: Leaf, res: Resources, user_limit: Resources) -> bool:
        cluster = self.emu.queues.cluster
        if not cap.fits_queue(self.used[leaf.name], res, leaf.eff_max, cluster):
            return False
        if leaf.config.reservable:  # the plan queue's own maximum bounds all its children
            plan_used = self._plan_used[leaf.config.name]
            if not cap.fits_queue(plan_used, res, cap.effective(cluster, leaf.config.max_capacity), cluster):
                return False
        return cap.may_assign_to_user(self.user_used[(leaf.name, app.spec.user)], user_limit, cluster)

    def user_limit(self, leaf: Leaf, users: set[str] | None = None) -> Resources:
        """The leaf's user limit now; `users` are the users with live apps in it (found if None)."""
        emu = self.emu
        if users is None:
            users = {a.spec.user for a in self.live_apps() if a.leaf == leaf.name}
        active_used = sum((self.user_used[(leaf.name, u)] for u in users), Z)
        return cap.user_limit(eff_min=leaf.eff_min, minimum=emu.config.minimum_allocation,
                              queue_used=self.used[leaf.name], active_used=active_used, active_users=len(users),
                              user_limit_pct=leaf.config.user_limit_percent,
                              user_limit_factor=leaf.config.user_limit_factor, cluster=emu.queues.cluster)

    def am_limit(self, leaf: Leaf) -> Resources:
        return cap.am_limit(eff_min=leaf.eff_min, current_limit=leaf.eff_max,
                            am_pct=leaf.config.max_am_resource_percent, minimum=self.emu.config.minimum_allocation)

    def _activate(self, app: App, leaf: Leaf) -> bool:
        """LeafQueue.activateApplications: within the AM limit, or the queue's first app."""
        if app.activated:
            return True
        emu = self.emu
        active = [a for a in self.live_apps() if a.leaf == leaf.name and a.activated]
        am_used = sum((a.am_resource for a in active), Z)
        limit = self.am_limit(leaf)
        if (am_used + app.am_resource).fits_in(limit) or not active:
            app.activated = True
            return True
        app.diagnostics = (
            "Application is added to the scheduler and is not yet activated. Queue's AM resource limit exceeded.  "
            f"Details : AM Partition = <DEFAULT_PARTITION>; AM Resource Request = {_res(app.am_resource)}; "
            f"Queue Resource Limit for AM = {_res(limit)}; User AM Resource Limit of the queue = {_res(limit)}; "
            f"Queue AM Resource Usage = {_res(am_used)}; ")
        return False

    def _waiting_for_am(self, app: App, leaf: Leaf) -> None:
        """An activated app whose AM the queue cannot take yet (apps-id-in-active-reservation)."""
        app.diagnostics = activation_diagnostics(self.emu, leaf)

    # --- allocation -----------------------------------------------------------------------

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
        if ask.count == 0:
            app.asks.remove(ask)
        self.account(app, rec, +1)
        self.emu.apps_mgr.on_allocated(app, rec)


def _res(r: Resources) -> str:
    return f"<memory:{r.memory_mb}, vCores:{r.vcores}>"

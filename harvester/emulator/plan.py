"""The reservation system's operations and its plan follower (fixtures README, scenarios).

- submit -> 202 with an empty body; update / delete -> 200 `{}`; list -> mapped JSON.
- The plan follower (1 s) creates a reservation's queue under the plan queue when its
  allocation starts and removes it when the allocation ends or the reservation was deleted
  (scenarios/reservation-lifecycle: deleted reservations' queues still listed 0.07 s later).
  Apps can only be submitted into a reservation whose queue exists.
- A new reservation queue has effective resource 0 (recorded: maxAMLimitPercentage 0,
  effectiveMaxResource 0), so its apps wait in ACCEPTED until the cluster resource changes:
  any node-resource update releases them ~2 s later.
- When a reservation ends its apps move (with their containers) to `root.default-default`
  and continue; when it is deleted they move too but stay ACCEPTED ("Queue's AM resource
  limit exceeded ... <memory:0, vCores:0>") until the cluster resource changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harvester.domain import Resources
from harvester.emulator import errors
from harvester.emulator.bodies import ensure_object
from harvester.emulator.lifecycle import APP_TERMINAL, ReservationState
from harvester.emulator.planner import Commitment, Planner, PlanningError, check_quota
from harvester.emulator.queues import QueueConfig
from harvester.emulator.records import App
from harvester.emulator.reservations import (
    Definition,
    Reservation,
    new_reservation_lifecycle,
    parse_definition,
    parse_reservation_id,
    state_at,
    to_offsets,
    validate_definition,
)

if TYPE_CHECKING:
    from harvester.emulator.state import Emulator

NUDGE_DELAY_S = 2.0
DEF_NULL = "Input ReservationDefinition should not be null"


class ReservationSystem:
    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.reservations: dict[str, Reservation] = {}
        self.seq = 0

    # --- capacity -------------------------------------------------------------------------

    def plan_config(self) -> QueueConfig | None:
        return self.emu.queues.plan_queue()

    def plan_capacity(self) -> Resources:
        cfg = self.plan_config()
        cluster = self.emu.cluster_resource()
        if cfg is None:
            return Resources(0, 0)
        return Resources(int(cluster.memory_mb * cfg.capacity / 100), int(cluster.vcores * cfg.capacity / 100))

    def live(self) -> list[Reservation]:
        return [r for r in self.reservations.values() if r.lifecycle.state is not ReservationState.DELETED]

    def with_queue(self) -> list[Reservation]:
        """Reservations whose queue exists under the plan queue now."""
        return [r for r in self.reservations.values() if r.has_queue]

    def leaf_limit(self, leaf: str) -> Resources:
        """Effective resource of a reservation queue: its allocation now, once nudged."""
        res = self.reservations.get(leaf)
        if res is None or not res.has_queue or not res.queue_nudged:
            return Resources(0, 0)
        return res.reserved_at(self.emu.now_ms())

    def app_leaf(self, rid: str) -> str | None:
        res = self.reservations.get(rid)
        if res is None or not res.has_queue or res.lifecycle.state is ReservationState.DELETED:
            return None
        return rid

    # --- REST operations ------------------------------------------------------------------

    def new_reservation_id(self) -> str:
        self.seq += 1
        return f"reservation_{self.emu.cluster_ts_ms}_{self.seq:04d}"

    def submit(self, body: Any, user: str) -> None:
        doc = ensure_object(body)
        rid = parse_reservation_id(doc.get("reservation-id"))
        definition = parse_definition(doc.get("reservation-definition"))
        if definition is None:
            raise errors.bad_request_wrapped(DEF_NULL)
        if rid is None:
            raise errors.bad_request_wrapped("Reservation id cannot be null. Please try again specifying  a valid "
                                             "reservation id by creating a new reservation id.")
        existing = self.reservations.get(rid)
        if existing is not None and existing.lifecycle.state is not ReservationState.DELETED:
            if existing.definition == definition:
                return  # a resubmission of the same definition is accepted again
            raise errors.bad_request_wrapped(
                f"Reservation allocation already exists with the reservation id {rid}, but a different reservation "
                "definition was provided. Please try again with a new reservation id, or consider updating the "
                "reservation instead.")
        cfg = self._queue(doc.get("queue"))
        validate_definition(definition, self.emu.now_ms())
        intervals = self._admit(rid, user, definition, cfg)
        self.reservations[rid] = Reservation(rid, cfg.name, user, definition, self.emu.now_ms(), intervals,
                                             new_reservation_lifecycle(rid, self.emu.now))

    def update(self, body: Any, user: str) -> None:
        doc = ensure_object(body)
        definition = parse_definition(doc.get("reservation-definition"))
        if definition is None:
            raise errors.bad_request_wrapped(DEF_NULL)
        rid = parse_reservation_id(doc.get("reservation-id"))
        if rid is None:
            raise errors.bad_request_wrapped("Update operations must specify an existing ReservaitonId")
        res = self._existing(rid)
        validate_definition(definition, self.emu.now_ms())
        cfg = self.emu.queues.config(res.queue)
        assert cfg is not None
        res.intervals = self._admit(rid, res.user, definition, cfg)
        res.definition = definition
        res.accepted_at_ms = self.emu.now_ms()

    def delete(self, body: Any) -> None:
        rid = parse_reservation_id(ensure_object(body).get("reservation-id"))
        if rid is None:
            raise errors.bad_request_wrapped("Missing reservation id. Please try again by specifying a reservation id.")
        res = self._existing(rid)
        res.lifecycle.to(ReservationState.DELETED, self.emu.now, "deleted")  # its queue goes at the next follow

    def listing(self, queue: str, rid_text: str, start_ms: int, end_ms: int) -> list[Reservation]:
        self._queue(queue)
        rid = parse_reservation_id(rid_text)
        if rid is not None:
            res = self.reservations.get(rid)
            return [res] if res is not None and res.lifecycle.state is not ReservationState.DELETED else []
        end = end_ms if end_ms >= 0 else 2**62
        out = []
        for res in self.live():
            if res.definition.period > 0:
                out.append(res)
                continue
            first = min(iv.start for iv in res.intervals)
            last = max(iv.end for iv in res.intervals)
            if first <= end and last >= start_ms:
                out.append(res)
        return sorted(out, key=lambda r: r.accepted_at_ms, reverse=True)

    def _queue(self, name: Any) -> QueueConfig:
        if not name:
            raise errors.bad_request_wrapped("The queue is not specified. Please try again with a valid reservable queue.")
        cfg = self.emu.queues.reservable(str(name))
        if cfg is None:
            raise errors.bad_request_wrapped(f"The specified queue: {name} is not managed by reservation system. "
                                             "Please try again with a valid reservable queue.")
        return cfg

    def _existing(self, rid: str) -> Reservation:
        res = self.reservations.get(rid)
        if res is None or res.lifecycle.state is ReservationState.DELETED:
            raise errors.bad_request_wrapped(f"The specified reservation with ID: {rid} is unknown. Please try again "
                                             "with a valid reservation.")
        return res

    def _admit(self, rid: str, user: str, d: Definition, cfg: QueueConfig) -> tuple:  # type: ignore[type-arg]
        cap = self.plan_capacity()
        commitments = [r.commitment() for r in self.live()]
        try:
            placed = Planner(cap, commitments, user, cfg.instantaneous_max_capacity / 100, exclude=rid).place(
                d.stages, d.interpreter, d.arrival, d.deadline)
            intervals = to_offsets(placed, d.period)
            check_quota(cap, commitments, Commitment(rid, user, intervals, d.period),
                        cfg.instantaneous_max_capacity / 100, cfg.average_capacity / 100, cfg.reservation_window_ms)
        except PlanningError as exc:
            raise errors.bad_request_wrapped(exc.java_text()) from None
        return intervals

    # --- over time ------------------------------------------------------------------------

    def follow(self, t: float) -> None:
        """The plan follower (each 1 s tick): reservation queues follow their allocations."""
        t_ms = int(round(t * 1000))
        for res in self.reservations.values():
            if res.lifecycle.state is ReservationState.DELETED:
                if res.has_queue:
                    self._release_apps(res, stuck=True)
                    res.has_queue = False
                continue
            new = state_at(res, t_ms)
            if new is not res.lifecycle.state:
                res.lifecycle.to(new, t, "plan follower")
            if new is ReservationState.ACTIVE and not res.has_queue:
                res.has_queue, res.queue_nudged = True, False
            elif new is not ReservationState.ACTIVE and res.has_queue:
                self._release_apps(res, stuck=False)
                res.has_queue = False

    def _release_apps(self, res: Reservation, *, stuck: bool) -> None:
        """Move the reservation's live apps to the plan queue's default leaf (move-on-expiry)."""
        cfg = self.emu.queues.config(res.queue)
        assert cfg is not None
        for app_id in res.apps:
            app = self.emu.apps[app_id]
            if app.state in APP_TERMINAL or app.leaf != res.reservation_id:
                continue
            app.leaf = cfg.default_leaf
            if stuck and not app.registered:
                app.stuck_until_resource_change = True
                app.diagnostics = ("Application is added to the scheduler and is not yet activated. Queue's AM resource "
                                   "limit exceeded.  Details : AM Partition = <DEFAULT_PARTITION>; AM Resource Request = "
                                   f"<memory:{app.spec.am.memory_mb}, vCores:{app.spec.am.vcores}>; Queue Resource Limit "
                                   "for AM = <memory:0, vCores:0>; User AM Resource Limit of the queue = <memory:0, "
                                   "vCores:0>; Queue AM Resource Usage = <memory:0, vCores:0>; ")

    def on_cluster_resource_change(self, now: float) -> None:
        """Any change of the cluster resource releases waiting reservation apps ~2 s later."""
        self.emu.events.at(now + NUDGE_DELAY_S, self._nudge)

    def _nudge(self, _t: float) -> None:
        for res in self.with_queue():
            res.queue_nudged = True
        for app in self.emu.apps.values():
            app.stuck_until_resource_change = False

    def on_app_finished(self, app: App) -> None:
        """Nothing to release: the reservation's allocation is kept until it ends or is deleted."""
        return None

    def reserved_now(self) -> dict[str, Resources]:
        """Reservation queues and their allocation now (a deleted one's queue lingers until the next follow)."""
        now_ms = self.emu.now_ms()
        return {r.reservation_id: r.reserved_at(now_ms) for r in self.with_queue()}

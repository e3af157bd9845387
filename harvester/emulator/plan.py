"""The reservation system's operations and its plan follower (fixtures README, scenarios).

- submit -> 202 with an empty body; update / delete -> 200 `{}`; list -> mapped JSON.
- Update is an internal delete + add (RM log "Sucessfully deleted reservation ... Successfully
  added ... Successfully updated"): the reservation keeps its id and queue, its running apps
  are not disturbed, the new allocation is what the follower uses from its next step.
- Delete of an id the reservation system never accepted: 400 "... is unknown"; of one it
  accepted and already deleted: 400 IllegalArgumentException "The specified Reservation with
  ID ... does not exist in the plan" (captures err-reservation-delete-already-deleted,
  scenarios/recurring-reservation-update). (Update of a deleted id answers the same plan error
  here; that answer was not recorded.)
- The plan follower (AbstractSchedulerPlanFollower.synchronizePlan, every plan step, "now"
  rounded up to the step): creates the queue of every current reservation, removes the queues
  of the others (their apps move with their containers to the plan's `-default` queue),
  sets each reservation queue's capacity to its entitlement / the plan's resources with
  maximum 100 %, and gives the `-default` queue the rest. It only sets percentages: effective
  resources follow at the next cluster resource change (queues.py, capacity.py).
- An app moved out of a DELETED reservation before its AM started stays ACCEPTED with "Queue's
  AM resource limit exceeded ... <memory:0, vCores:0>" until the cluster resource changes
  (reservation-lifecycle, R1); the mechanism behind that limit was not pinned down, so the
  recorded behaviour is reproduced as such. An app whose AM runs (recurring-reservation, app2)
  continues in the `-default` queue at once.
"""

from __future__ import annotations

import math
from typing import Any

from harvester.domain import Resources
from harvester.emulator import errors
from harvester.emulator.bodies import ensure_object
from harvester.emulator.capacity import effective, share
from harvester.emulator.lifecycle import APP_TERMINAL, ReservationState
from harvester.emulator.planner import Commitment, Planner, PlanIndex, PlanningError, check_quota
from harvester.emulator.queues import QueueConfig
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

DEF_NULL = "Input ReservationDefinition should not be null"


class ReservationSystem:
    """The `Emulator` (state.py) owns this component; not imported here so imports stay one-way."""

    def __init__(self, emu: Any) -> None:
        self.emu = emu
        self.reservations: dict[str, Reservation] = {}
        self.seq = 0
        self.index = PlanIndex()  # the live reservations' commitments, kept in step with them

    # --- capacity -------------------------------------------------------------------------

    def plan_config(self) -> QueueConfig | None:
        return self.emu.queues.plan_queue()

    def plan_capacity(self) -> Resources:
        cfg = self.plan_config()
        if cfg is None:
            return Resources(0, 0)
        return effective(self.emu.cluster_resource(), cfg.capacity)

    def live(self) -> list[Reservation]:
        return [r for r in self.reservations.values() if r.lifecycle.state is not ReservationState.DELETED]

    def with_queue(self) -> list[Reservation]:
        """Reservations whose queue exists under the plan queue now."""
        return [r for r in self.reservations.values() if r.has_queue]

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
        validate_definition(definition, self.emu.now_ms(), self.plan_capacity())
        placed = self._admit(rid, user, definition, cfg)
        res = Reservation(rid, cfg.name, user, definition, self.emu.now_ms(), to_offsets(placed, definition.period),
                          new_reservation_lifecycle(rid, self.emu.now))
        res.start_ms, res.end_ms = placed[0].start, max(iv.end for iv in placed)
        self.reservations[rid] = res
        self.index.put(res.commitment())

    def update(self, body: Any, user: str) -> None:
        doc = ensure_object(body)
        definition = parse_definition(doc.get("reservation-definition"))
        if definition is None:
            raise errors.bad_request_wrapped(DEF_NULL)
        rid = parse_reservation_id(doc.get("reservation-id"))
        if rid is None:
            raise errors.bad_request_wrapped("Update operations must specify an existing ReservaitonId")
        res = self._existing(rid)
        validate_definition(definition, self.emu.now_ms(), self.plan_capacity())
        cfg = self.emu.queues.config(res.queue)
        assert cfg is not None
        placed = self._admit(rid, res.user, definition, cfg)  # delete + add: planned without itself
        res.intervals = to_offsets(placed, definition.period)
        res.start_ms, res.end_ms = placed[0].start, max(iv.end for iv in placed)
        res.definition = definition
        res.accepted_at_ms = self.emu.now_ms()
        self.index.put(res.commitment())

    def delete(self, body: Any) -> None:
        rid = parse_reservation_id(ensure_object(body).get("reservation-id"))
        if rid is None:
            raise errors.bad_request_wrapped("Missing reservation id. Please try again by specifying a reservation id.")
        res = self._existing(rid)
        res.lifecycle.to(ReservationState.DELETED, self.emu.now, "deleted")  # its queue goes at the next follow
        self.index.drop(rid)

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
        if res is None:  # the reservation system never accepted it
            raise errors.bad_request_wrapped(f"The specified reservation with ID: {rid} is unknown. Please try again "
                                             "with a valid reservation.")
        if res.lifecycle.state is ReservationState.DELETED:  # known to the system, gone from the plan
            raise errors.remote(400, "java.lang.IllegalArgumentException",
                                f"The specified Reservation with ID {rid} does not exist in the plan")
        return res

    def _admit(self, rid: str, user: str, d: Definition, cfg: QueueConfig) -> list:  # type: ignore[type-arg]
        """Place `d` and check the quota; the absolute first-occurrence allocation."""
        cap = self.plan_capacity()
        try:
            placed = Planner(cap, self.index, user, cfg.instantaneous_max_capacity / 100, exclude=rid).place(
                d.stages, d.interpreter, d.arrival, d.deadline)
            check_quota(cap, self.index, Commitment(rid, user, to_offsets(placed, d.period), d.period),
                        cfg.instantaneous_max_capacity / 100, cfg.average_capacity / 100, cfg.reservation_window_ms)
        except PlanningError as exc:
            raise errors.bad_request_wrapped(exc.java_text()) from None
        return sorted(placed, key=lambda iv: iv.start)

    # --- over time ------------------------------------------------------------------------

    def follow(self, t: float) -> None:
        """One plan-follower step at `t` (see the module docstring)."""
        cfg = self.plan_config()
        if cfg is None:
            return
        step_ms = int(round(self.emu.timing.plan_step_s * 1000))
        now_ms = int(math.ceil(round(t * 1000) / step_ms) * step_ms)  # aligned UP to the plan step
        queues, cluster = self.emu.queues, self.emu.queues.cluster
        current = []
        for res in self.reservations.values():
            if res.lifecycle.state is ReservationState.DELETED:
                continue
            new = state_at(res, now_ms)
            if new is not res.lifecycle.state:
                res.lifecycle.to(new, t, "plan follower")
            if new is ReservationState.ACTIVE:
                current.append(res)
        names = {r.reservation_id for r in current}
        for leaf in queues.reservation_leaves():
            if leaf.name not in names:
                self._expire(leaf.name, cfg)
        plan_res = self.plan_capacity()
        total = 0.0
        for res in current:
            leaf = queues.leaf(res.reservation_id) or queues.add_reservation_leaf(res.reservation_id, cfg)
            res.has_queue = True
            got = res.entitled_at(now_ms)
            ratio = share(got, cluster) / share(plan_res, cluster) if share(plan_res, cluster) > 0 else 0.0
            leaf.capacity, leaf.max_capacity = 100.0 * ratio, 100.0
            total += leaf.capacity
        default = queues.leaf(cfg.default_leaf)
        if default is not None:
            default.capacity = max(0.0, 100.0 - total)

    def _expire(self, rid: str, cfg: QueueConfig) -> None:
        """cleanupExpiredQueues: entitlement 0, apps to the `-default` queue, queue removed."""
        res = self.reservations.get(rid)
        deleted = res is not None and res.lifecycle.state is ReservationState.DELETED
        target = cfg.default_leaf
        busy = any(a.leaf == target and a.activated and a.state not in APP_TERMINAL for a in self.emu.apps.values())
        for app in list(self.emu.apps.values()):
            if app.state in APP_TERMINAL or app.leaf != rid:
                continue
            self.emu.scheduler.move(app, target)
            attempt = app.attempt
            if deleted and busy and (attempt is None or attempt.am_container_id is None):
                app.activated = False
                app.stuck_until_resource_change = True
                app.diagnostics = ("Application is added to the scheduler and is not yet activated. Queue's AM resource "
                                   "limit exceeded.  Details : AM Partition = <DEFAULT_PARTITION>; AM Resource Request = "
                                   f"<memory:{app.am_resource.memory_mb}, vCores:{app.am_resource.vcores}>; Queue "
                                   "Resource Limit for AM = <memory:0, vCores:0>; User AM Resource Limit of the queue = "
                                   "<memory:0, vCores:0>; Queue AM Resource Usage = <memory:0, vCores:0>; ")
        self.emu.queues.remove_leaf(rid)
        if res is not None:
            res.has_queue = False

    def on_cluster_resource_change(self) -> None:
        """Apps held back since their reservation was deleted may be activated again."""
        for app in self.emu.apps.values():
            app.stuck_until_resource_change = False

    def reserved_now(self) -> dict[str, Resources]:
        """Reservation queues and what the plan holds for them now."""
        now_ms = self.emu.now_ms()
        return {r.reservation_id: r.entitled_at(now_ms) for r in self.with_queue()}

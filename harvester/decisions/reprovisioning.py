"""Dynamic reprovisioning, DRA (Morpheus §7, paper 002) — pure: running jobs' demand and the
reservations that hold them in, grants (reservation updates with their reasons) out.

§7: "Reprovisioning is triggered when a job resource demand (used containers plus pending ask)
exceeds the resources allocated in the skyline. Extra resources are granted for up to T
seconds (default 1min), after which DRA is reevaluated again. The amount of extra resources is
based on the job's instantaneous demand, but capped at ρ · max(R_recent) where R_recent is the
amount of resources allocated in the skyline in the last few minutes (default 2min), and ρ is
a fudge factor (default value 2) ...; DRA verifies that the job does not get more resources
than it requests. Given this proposed reprovisioning, DRA updates the current instance of the
periodic reservation (by increasing it locally). This is done by invoking LowCost, which
ensures the update is accepted only if enough resources exist in the plan."

Here, for each ACTIVE one-off reservation without an unexpired grant and with a running app of
its job (apps are matched to the reservation by their recurring job name: the RM's REST `queue`
of an app in a reservation stays the plan queue):
- demand = used + pending (the RM's allocatedMB/VCores and the asks of `resourceRequests`),
  in containers of the plan's size (the larger of memory and vcores);
- the allocation now is the reservation's current definition at this instant; R_recent the
  largest allocation of the PLANNED skyline (without earlier grants, so grants do not compound)
  over the last `recent_window_s`;
- level = min(demand, ⌊ρ · max(R_recent)⌋); a grant only when level > the allocation now;
- the grant holds `level` containers from the current step for ⌈T / step⌉ steps;
- extension (§7, Fig. 8: the skyline is stretched, "extending ... by an extra minute"): when the
  reservation would run out before DRA looks again (its end <= the grant's end) and the job still
  has work (demand > 0), the grant also holds min(demand, ρ·max(R_recent)) containers for one
  more grant span past that end, even when the demand does not exceed the allocation. DRA then
  looks again one span BEFORE the new end (the record's `grant_until`), while the reservation is
  still ACTIVE and can be updated (the RM archives an ended one). R_recent is then taken over the
  planned skyline's last `recent_window_s`. Bounded: never past the planned end +
  `max_extension_s`, only with room in the plan, never above the demand;
- room: the extra containers are admitted into the plan LowCost packs into (Plan.add: never
  above capacity at any of those steps, so later LowCost placements see them); with less room
  the level is lowered to what fits, and no grant is made when nothing fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from harvester.decisions.reservation_actions import UpdateReservation, spec_from_steps
from harvester.decisions.reservation_lifecycle import ManagedReservation, ReservationState
from harvester.decisions.reservation_plan import MEM, VC, Placement, Plan
from harvester.domain import Resources


@dataclass(frozen=True)
class DraParams:
    rho: float = 2.0
    recent_window_s: float = 120.0
    grant_s: float = 60.0
    max_extension_s: float = 1800.0           # how far past its planned end a reservation may be stretched


@dataclass(frozen=True)
class JobDemand:
    """A recurring job's running apps and what they hold and ask for now."""

    job: str
    apps: tuple[str, ...]
    used: Resources
    pending: Resources


@dataclass(frozen=True)
class DraContext:
    now: float
    as_of: float                              # when the demand was observed
    records: Sequence[ManagedReservation]
    demands: Mapping[str, JobDemand]
    plan: Plan
    plan_origin_s: float                      # epoch s of plan step 0 (the SLO grid origin)
    container: Resources
    params: DraParams = DraParams()
    stimulus_id: str = ""


@dataclass(frozen=True)
class DraGrant:
    key: str
    job: str
    level: int
    until: float                              # the end of the placement (it leaves the plan then)
    placement: Placement                      # the extra containers, admitted into the plan
    action: UpdateReservation


@dataclass(frozen=True)
class DraDecision:
    grants: tuple[DraGrant, ...]
    skipped: tuple[tuple[str, str], ...]      # (reservation key, why no grant)
    plan: Plan                                # with the grants admitted


def containers(r: Resources, container: Resources) -> int:
    """Whole containers that cover `r` in both dimensions."""
    return max(math.ceil(r.memory_mb / container.memory_mb), math.ceil(r.vcores / container.vcores), 0)


def decide_reprovisioning(ctx: DraContext) -> DraDecision:
    plan = ctx.plan
    grants: list[DraGrant] = []
    skipped: list[tuple[str, str]] = []
    for r in ctx.records:
        why, grant, plan = _one(ctx, r, plan)
        if grant is not None:
            grants.append(grant)
        elif why:
            skipped.append((r.key, why))
    return DraDecision(tuple(grants), tuple(skipped), plan)


def _one(ctx: DraContext, r: ManagedReservation, plan: Plan) -> tuple[str, DraGrant | None, Plan]:
    p, now = ctx.params, ctx.now
    if r.state is not ReservationState.ACTIVE or r.reservation_id is None:
        return "", None, plan
    if r.spec.recurrence_ms > 0:
        return "recurring: an update would change every period", None, plan
    if r.grant_until is not None and r.grant_until > now:
        return f"grant until {r.grant_until:.0f} still running", None, plan
    d = ctx.demands.get(r.job)
    if d is None or not d.apps:
        return "no running app of the job", None, plan
    step_ms = int(round(plan.step_s * 1000))
    now_ms = int(now * 1000)
    want = containers(d.used + d.pending, ctx.container)
    have = r.spec.containers_at(now_ms)
    arrival = r.spec.arrival_ms
    k0 = (now_ms - arrival) // step_ms
    k1 = max(k0 + 1, math.ceil((now_ms + p.grant_s * 1000 - arrival) / step_ms))
    old = r.spec.per_step(step_ms)
    span = max(1, math.ceil(p.grant_s * 1000 / step_ms))
    k_max = (r.base.deadline_ms + int(p.max_extension_s * 1000) - arrival) // step_ms
    k1 = max(k0 + 1, min(k1, max(k_max, len(old))))  # a grant's rounding up never passes the bound either
    k_end = min(k1 + span, k_max) if want > 0 and arrival + k1 * step_ms >= r.spec.deadline_ms else k1
    extend = k_end > len(old)
    if want <= have and not extend:
        return f"demand {want} <= allocation {have} containers", None, plan
    hi = min(now_ms, r.base.deadline_ms - 1)  # past the planned end: the skyline's last minutes
    lo = hi - int(p.recent_window_s * 1000)
    recent = max(r.base.containers_at(t) for t in list(range(lo, hi, step_ms)) + [hi])
    cap = math.floor(p.rho * recent)
    level = min(want, cap)
    if level <= have and not extend:
        return f"cap ρ·max(R_recent) = {p.rho:g}×{recent} = {cap} <= allocation {have}", None, plan
    if level <= 0:
        return f"cap ρ·max(R_recent) = {p.rho:g}×{recent} = 0: nothing to extend with", None, plan
    k1 = max(k1, k_end)
    old += [0] * max(0, k1 - len(old))
    steps = np.array([((arrival + k * step_ms) / 1000.0 - ctx.plan_origin_s) // plan.step_s for k in range(k0, k1)],
                     dtype=np.int64) % plan.lcm_steps
    free = plan.capacity[:, steps] - plan.load[:, steps]
    room = np.minimum(free[MEM] // ctx.container.memory_mb, free[VC] // ctx.container.vcores)
    fits = int(min(old[k] + int(room[i]) for i, k in enumerate(range(k0, k1))))
    granted = min(level, fits)
    new = list(old)
    for k in range(k0, k1):
        new[k] = max(old[k], granted)
    if new == old or granted <= 0 or (granted <= have and not extend):
        return f"no room in the plan: {level} containers wanted, at most {fits} fit over the grant's steps", None, plan
    extra = tuple(new[k] - old[k] for k in range(k0, k1))
    gkey = f"dra:{r.key}:{k0}"
    until = (arrival + k1 * step_ms) / 1000.0
    placement = Placement(gkey, ctx.container, plan.lcm_steps, int(steps[0]), extra,
                          f"DRA grant of {r.key} until {until:.0f}")
    plan = plan.add(placement)
    # look again while a span of the stretched window remains (an ended reservation cannot be updated)
    look = max(now, (arrival + (k_end - span if extend else k1) * step_ms) / 1000.0)
    stretched = f"; window stretched to {until:.0f} (planned end {r.base.deadline_ms / 1000:.0f})" if extend else ""
    reason = (f"DRA §7: {r.job} demands {want} containers (used <{d.used.memory_mb} MB, {d.used.vcores} vc> + "
              f"pending <{d.pending.memory_mb} MB, {d.pending.vcores} vc>), {have} reserved; cap ρ·max(R_recent) = "
              f"{p.rho:g}×{recent} = {cap}; grant {granted} containers for {(k1 - k0) * plan.step_s:.0f}s"
              + (f" (room for {fits} only)" if granted < level else "") + stretched)
    spec = spec_from_steps(r.spec.name, arrival, new, step_ms, ctx.container)
    action = UpdateReservation(key=r.key, as_of=ctx.as_of, reservation_id=r.reservation_id, spec=spec,
                               grant_until=look, reason=reason, stimulus_id=ctx.stimulus_id)
    return "", DraGrant(r.key, r.job, granted, until, placement, action), plan

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
its job inside it (apps are matched to the reservation by their recurring job name; the RM's
REST `queue` of an app in a reservation stays the plan queue, so where the apps are known one by
one (`JobDemand.per_app`) only those in the plan queue that arrived inside the reservation's
window count — 3.3.6 refuses an app submitted to a reservation before it opens, so an app of the
job from before, or in its own queue, runs without the reservation and is left alone:
decisions/static_fallback.py):
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
  `max_extension_s` (one plan LCM when the job's static share is known: the stretch then holds
  no more than that share would, below), only with room in the plan, never above the demand;
- never worse than static (decisions/static_fallback.py): where the job's static share is known
  (`static`, containers: what it holds without Morpheus), the cap is max(⌊ρ·max(R_recent)⌋,
  static) — a job whose run needs more than its reservation may grow to what its static share
  would give it (room permitting), even when the skyline planned it thinner (LowCost stretches
  a wide step over the window, §5/§6, which a DAG's later stages then wait for);
- room: the extra containers are admitted into the plan LowCost packs into (Plan.add: never
  above capacity at any of those steps, so later LowCost placements see them); with less room
  the level is lowered to what fits, and no grant is made when nothing fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
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
class AppDemand:
    """One running app: where the RM lists it, when it was submitted, what it holds and asks for."""

    app_id: str
    queue: str
    submitted_at: float
    used: Resources
    pending: Resources


@dataclass(frozen=True)
class JobDemand:
    """A recurring job's running apps and what they hold and ask for now (`per_app`: the same,
    app by app, where known)."""

    job: str
    apps: tuple[str, ...]
    used: Resources
    pending: Resources
    per_app: tuple[AppDemand, ...] = ()


def in_plan(queue: str, plan_queue: str) -> bool:
    """An app's REST queue names the plan queue: inside a reservation, or in the plan's default
    queue (3.3.6 shows both as the plan queue's path; `<plan>-default` when submitted there)."""
    short = plan_queue.rsplit(".", 1)[-1]
    return queue in (plan_queue, short, f"{plan_queue}-default", f"{short}-default")


def inside(d: JobDemand, r: ManagedReservation, plan_queue: str) -> JobDemand:
    """The part of `d` that can be inside reservation `r` (module docstring); `d` as it is when
    its apps are not known one by one."""
    if not d.per_app:
        return d
    apps = [a for a in d.per_app if (not plan_queue or in_plan(a.queue, plan_queue))
            and r.spec.arrival_ms <= a.submitted_at * 1000 < r.spec.deadline_ms]
    zero = Resources(0, 0)
    used, pending = zero, zero
    for a in apps:
        used, pending = used + a.used, pending + a.pending
    return JobDemand(d.job, tuple(a.app_id for a in apps), used, pending, tuple(apps))


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
    static: Mapping[str, int] = field(default_factory=dict)   # job → its static share in containers, where known
    plan_queue: str = ""                      # apps listed elsewhere are not in a reservation ("": no check)


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
    d = inside(d, r, ctx.plan_queue)
    if not d.apps:
        return "no app of the job inside its reservation (apps submitted before it opened, or in another queue, " \
               "run without it: left alone)", None, plan
    step_ms = int(round(plan.step_s * 1000))
    now_ms = int(now * 1000)
    want = containers(d.used + d.pending, ctx.container)
    have = r.spec.containers_at(now_ms)
    arrival = r.spec.arrival_ms
    k0 = (now_ms - arrival) // step_ms
    k1 = max(k0 + 1, math.ceil((now_ms + p.grant_s * 1000 - arrival) / step_ms))
    old = r.spec.per_step(step_ms)
    span = max(1, math.ceil(p.grant_s * 1000 / step_ms))
    # with its static share known, a stretch (at most min(demand, max(ρ·R_recent, static))) is never
    # worse for the job nor bigger than that share, so it is bounded only by the plan's day
    bound_ms = plan.lcm_steps * step_ms if ctx.static.get(r.job) else int(p.max_extension_s * 1000)
    k_max = (r.base.deadline_ms + bound_ms - arrival) // step_ms
    k1 = max(k0 + 1, min(k1, max(k_max, len(old))))  # a grant's rounding up never passes the bound either
    k_end = min(k1 + span, k_max) if want > 0 and arrival + k1 * step_ms >= r.spec.deadline_ms else k1
    extend = k_end > len(old)
    hi = min(now_ms, r.base.deadline_ms - 1)  # past the planned end: the skyline's last minutes
    lo = hi - int(p.recent_window_s * 1000)
    recent = max(r.base.containers_at(t) for t in list(range(lo, hi, step_ms)) + [hi])
    cap = math.floor(p.rho * recent)
    static = ctx.static.get(r.job, 0)
    cap = max(cap, static)
    level = min(want, cap)
    if want <= have and not extend:
        return f"demand {want} <= allocation {have} containers", None, plan
    capped = f"cap max(ρ·max(R_recent), static share) = max({p.rho:g}×{recent}, {static}) = {cap}"
    if level <= have and not extend:
        return f"{capped} <= allocation {have}", None, plan
    if level <= 0:
        return f"{capped}: nothing to extend with", None, plan
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
              f"pending <{d.pending.memory_mb} MB, {d.pending.vcores} vc>), {have} reserved; {capped}; "
              f"grant {granted} containers for {(k1 - k0) * plan.step_s:.0f}s"
              + (f" (room for {fits} only)" if granted < level else "") + stretched)
    spec = spec_from_steps(r.spec.name, arrival, new, step_ms, ctx.container)
    action = UpdateReservation(key=r.key, as_of=ctx.as_of, reservation_id=r.reservation_id, spec=spec,
                               grant_until=look, reason=reason, stimulus_id=ctx.stimulus_id)
    return "", DraGrant(r.key, r.job, granted, until, placement, action), plan

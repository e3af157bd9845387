"""Jockey's allocation as the job's YARN reservation (EuroSys'12 §4.3 live; scenarios/
recurring-reservation*) — pure.

Jockey's "a guaranteed tokens" is, in YARN, the container count of the job's reservation at the
moment: its queue's capacity is the reservation's current stage (the plan follower sets it each
second). Resizing it is `POST /reservation/update` with a new definition: 3.3.6 deletes and adds
the reservation in one step and running apps keep their containers (scenarios/
recurring-reservation at A+215 s, recurring-reservation-update at A+74 s: 200 `{}`, capacity
changed at the next plan-follower tick).

`resized(spec, cut_ms, n)`: the same window and arrival, the stages before `cut_ms` unchanged
(the past and the part already being followed), and from `cut_ms` to the window's end one stage
of `n` containers (a gang of all of them, as Morpheus pins its stages: R_ORDER_NO_GAP over a
window that is exactly the stages, so the RM's agent has only this plan). The window is not
moved: the guarantee ends where the reservation ends (at its end the app moves to
`root.default-default` with its containers, scenarios/recurring-reservation).
`cut_at(spec, now_ms, lead_ms)`: now + lead, rounded up to the plan follower's 1-second step.
`max_per_step`: containers per plan step (the most within the step), for LowCost's admission of
a resize in Morpheus's plan.
"""

from __future__ import annotations

from dataclasses import replace

from harvester.decisions.reservation_actions import ReservationSpec, SpecStage

PLAN_FOLLOWER_STEP_MS = 1000  # yarn.resourcemanager.reservation-system.planfollower.time-step default


def occurrence_start(spec: ReservationSpec, t_ms: int) -> int:
    """Arrival of the occurrence of `spec` that covers (or last started before) `t_ms`."""
    if spec.recurrence_ms <= 0 or t_ms < spec.arrival_ms:
        return spec.arrival_ms
    return spec.arrival_ms + (t_ms - spec.arrival_ms) // spec.recurrence_ms * spec.recurrence_ms


def is_open(spec: ReservationSpec, t_ms: int) -> bool:
    start = occurrence_start(spec, t_ms)
    return start <= t_ms < start + spec.length_ms


def cut_at(now_ms: int, lead_ms: int) -> int:
    t = now_ms + lead_ms
    return -(-t // PLAN_FOLLOWER_STEP_MS) * PLAN_FOLLOWER_STEP_MS


def resized(spec: ReservationSpec, cut_ms: int, containers: int) -> ReservationSpec | None:
    """`spec` holding `containers` from `cut_ms` to its window's end (module docstring); None when
    `cut_ms` is not inside an open window of `spec`."""
    if containers < 1:
        raise ValueError(f"a reservation stage needs >= 1 container, got {containers}")
    x = cut_ms - occurrence_start(spec, cut_ms)
    if not 0 <= x < spec.length_ms:
        return None
    kept: list[SpecStage] = []
    t = 0
    for s in spec.stages:
        if t + s.duration_ms <= x:
            kept.append(s)
        elif t < x:
            kept.append(replace(s, duration_ms=x - t))
        t += s.duration_ms
    container = (kept[-1] if kept else spec.stages[0]).container
    tail = spec.length_ms - x
    if kept and kept[-1].containers == containers and kept[-1].container == container:
        kept[-1] = replace(kept[-1], duration_ms=kept[-1].duration_ms + tail)
    else:
        kept.append(SpecStage(container, containers, containers, tail))
    return replace(spec, stages=tuple(kept))


def max_per_step(spec: ReservationSpec, step_ms: int, steps: int) -> tuple[int, ...]:
    """Containers per plan step from the occurrence's arrival: the most held within each step."""
    bounds = [0]
    for s in spec.stages:
        bounds.append(bounds[-1] + s.duration_ms)
    out = []
    for i in range(steps):
        lo, hi = i * step_ms, (i + 1) * step_ms
        inside = [s.containers for s, a, b in zip(spec.stages, bounds, bounds[1:]) if a < hi and b > lo]
        out.append(max(inside, default=0))
    return tuple(out)

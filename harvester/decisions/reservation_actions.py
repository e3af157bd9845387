"""What Morpheus asks of the RM's ReservationSystem: reservation definitions and the actions
that submit, update and delete them (paper 002 §6, §7; DESIGN.md principles 2, 4, 16) — pure.

A `ReservationSpec` is the definition the RM gets, in the RM's units (epoch ms). Morpheus
always pins the RM's agent to the offset LowCost chose: the stages are R_ORDER_NO_GAP
(interpreter ORDINAL 3; the name is silently read as 0 by 3.3.6, fixtures README), each stage
a gang of all its containers (min-concurrency = num-containers), and the window [arrival,
deadline] is exactly the sum of the stage durations, so the only plan the agent can make is
the stages back to back from the arrival (scenarios/recurring-reservation: offsets
20000..200000..320000 for two stages of 180 s and 120 s).

Actions carry, besides their reason, `as_of`: the time of the data they were decided from
(principle 16); the reservation actuator drops one that is older than its staleness limit when
it is about to be sent, and nothing is retried: the next tick decides again.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Sequence

from harvester.domain import Action, Resources

R_ORDER_NO_GAP = 3


@dataclass(frozen=True, slots=True)
class SpecStage:
    """`containers` containers of `container`, all at once (gang), for `duration_ms`."""

    container: Resources
    containers: int
    gang: int
    duration_ms: int


@dataclass(frozen=True, slots=True)
class ReservationSpec:
    name: str
    arrival_ms: int
    deadline_ms: int
    stages: tuple[SpecStage, ...]
    interpreter: int = R_ORDER_NO_GAP
    recurrence_ms: int = 0

    @property
    def length_ms(self) -> int:
        return self.deadline_ms - self.arrival_ms

    def containers_at(self, t_ms: int) -> int:
        """Containers the pinned plan holds at `t_ms` (stages back to back from the arrival;
        every period for a recurring spec)."""
        if t_ms < self.arrival_ms:
            return 0
        x = t_ms - self.arrival_ms
        if self.recurrence_ms > 0:
            x %= self.recurrence_ms
        for s in self.stages:
            if x < s.duration_ms:
                return s.containers
            x -= s.duration_ms
        return 0

    def boundaries(self, lo_ms: int, hi_ms: int) -> list[tuple[int, str]]:
        """Times in [lo_ms, hi_ms) where the reservation's allocation changes: its activation,
        each stage boundary and its end (each period for a recurring spec), with a label."""
        marks = [(0, "activation")]
        t = 0
        for i, s in enumerate(self.stages[:-1], 1):
            t += s.duration_ms
            marks.append((t, f"stage {i}->{i + 1}"))
        marks.append((self.length_ms, "window end"))
        starts = [self.arrival_ms]
        if self.recurrence_ms > 0:
            p = self.recurrence_ms
            first = self.arrival_ms + max(0, -(-(lo_ms - self.deadline_ms) // p)) * p  # windows ending at or after lo
            starts = list(range(first, hi_ms, p))
        return sorted((s + off, label) for s in starts for off, label in marks if lo_ms <= s + off < hi_ms)

    def equivalent(self, other: ReservationSpec) -> bool:
        """Same plan for the RM: stages, interpreter, recurrence and window (a recurring one:
        the same offset in the period)."""
        if (self.stages, self.interpreter, self.recurrence_ms, self.length_ms) != (
                other.stages, other.interpreter, other.recurrence_ms, other.length_ms):
            return False
        if self.recurrence_ms > 0:
            return (self.arrival_ms - other.arrival_ms) % self.recurrence_ms == 0
        return self.arrival_ms == other.arrival_ms

    def per_step(self, step_ms: int) -> list[int]:
        """Containers per step from the arrival over one window (stage durations are whole steps)."""
        out: list[int] = []
        for s in self.stages:
            out.extend([s.containers] * max(1, round(s.duration_ms / step_ms)))
        return out


def spec_from_steps(name: str, arrival_ms: int, alloc: Sequence[int], step_ms: int, container: Resources,
                    recurrence_ms: int = 0) -> ReservationSpec:
    """Containers per step from `arrival_ms` as stages (runs of equal counts; steps with none
    cannot be part of a pinned window and must not occur inside `alloc`)."""
    stages: list[SpecStage] = []
    for n in alloc:
        if n <= 0:
            raise ValueError(f"{name}: an allocation step with {n} containers (a pinned window has no holes)")
        if stages and stages[-1].containers == n:
            last = stages[-1]
            stages[-1] = SpecStage(container, n, n, last.duration_ms + step_ms)
        else:
            stages.append(SpecStage(container, n, n, step_ms))
    if not stages:
        raise ValueError(f"{name}: no allocation")
    return ReservationSpec(name, arrival_ms, arrival_ms + len(alloc) * step_ms, tuple(stages),
                           recurrence_ms=recurrence_ms)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReservationAction(Action):
    """Base: `key` names the managed reservation (job@period), `as_of` the data's time."""

    key: str
    as_of: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SubmitReservation(ReservationAction):
    """new-reservation + submit of `spec` into the plan queue `queue` (full path)."""

    queue: str
    spec: ReservationSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateReservation(ReservationAction):
    """Replace the definition (3.3.6: an internal delete + add; running apps keep their
    containers). `rebase`: the new spec is the new plan (a re-plan), not a DRA grant on top."""

    reservation_id: str
    spec: ReservationSpec
    rebase: bool = False
    grant_until: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteReservation(ReservationAction):
    reservation_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveApp(ReservationAction):
    """Move a running app of the reservation `key` to `queue` (a leaf, full path): its
    reservation ended with it running, and its static share is in its job's own queue
    (decisions/static_fallback.py; PUT /apps/{id}/queue keeps its containers,
    scenarios/queue-move-and-priority)."""

    app_id: str
    queue: str


class Outcome(str, Enum):
    SENT = "sent"          # the RM accepted it
    REFUSED = "refused"    # the RM answered 4xx: nothing changed
    FAILED = "failed"      # transport error or 5xx: the effect is unknown (the next list tells)
    DROPPED = "dropped"    # older than the staleness limit: never sent


@dataclass(frozen=True, slots=True)
class ReservationResult:
    """What became of one action (the reservation actuator's answer, as data)."""

    action: ReservationAction
    outcome: Outcome
    reservation_id: str | None = None
    error: str = ""
    remote_exception: str = ""

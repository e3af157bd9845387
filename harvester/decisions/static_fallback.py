"""Never worse than static: who a reservation serves, and what a recurring job's run holds at
each instant (Morpheus §3, §7, §9.1, paper 002) — pure, the same rule live and in the simulator.

§3: a job whose owner rejects its SLO "runs with standard fair-queueing semantics" — as it does
without Morpheus. The same holds for EVERY recurring job Morpheus does not serve with a
reservation, so Morpheus can only add guarantees, never take one away:

- `job_service`: a job is RESERVED when LowCost placed its terms and the RM has not refused its
  reservation for the period; otherwise it is STATIC, with why (no actionable SLO, waiting for
  or refused its owner's sign-off, a skyline that does not fit its window even compressed, a
  period that does not divide the plan's LCM, no room in the plan, the RM's refusal). A STATIC
  job keeps its user's static request in its own queue: Morpheus never moves it into or holds it
  to the plan queue, and DRA does not count its apps (decisions/reprovisioning.py: only apps in
  the plan queue that arrived inside a reservation's window count).
- `run_share`: what a RESERVED job's run holds at `now`. Inside its reservation, the reservation
  (with DRA's grants and stretch, §7); before the window opens, nothing yet (it waits for the
  window it was planned into; a job whose typical run does not fit its window has no
  reservation, models/skyline_window.py) — unless, judged by the job's longest past run,
  starting now would meet d_j where waiting would not, or would be over before the window even
  opens (`start_at_once`): then its static share from now, as it would have had, and that
  period's reservation is released; once the reservation is over — the input arrived after the
  window, or the run is still going when the reservation, stretched by DRA as far as
  `dra.max_extension_s` and the plan's room allow, ends — its static share again, from then on.
  On YARN the RM moves the apps of an ended reservation to the plan's default queue with their
  containers (fixtures README); the live loop moves them on to the job's own queue
  (`fallback_moves`), where its static share is. In the simulator the run continues at the
  user's static request.

§9.1 counts "worst-case" SLO misses: "if no opportunistic (fair-share) capacity is available".
A job's static share is a guarantee the user had before Morpheus (the static baselines are
counted with it too), not opportunistic capacity, so a run that falls back to it counts as met
when it ends by d_j. The footprint counts it while it is held (sim/morpheus/runner.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Sequence

from harvester.decisions.reprovisioning import JobDemand, in_plan
from harvester.decisions.reservation_actions import ReservationSpec
from harvester.decisions.reservation_lifecycle import ManagedReservation, ReservationState
from harvester.models.job_history import JobRun


class Service(str, Enum):
    RESERVED = "reserved"
    STATIC = "static"


@dataclass(frozen=True)
class JobService:
    """How Morpheus serves one recurring job now, and why."""

    job: str
    service: Service
    why: str


def job_service(job: str, placed: bool, why: str, record: ManagedReservation | None = None) -> JobService:
    """RESERVED when LowCost `placed` the job's terms and the RM did not refuse this period's
    reservation (`record`, the current or next one); STATIC with `why` (the terms' or LowCost's
    reason, or the RM's refusal) otherwise."""
    if not placed:
        return JobService(job, Service.STATIC, f"static fallback (its own queue and static share): {why}")
    if record is not None and record.state is ReservationState.REJECTED:
        return JobService(job, Service.STATIC, "static fallback for this period: the RM refused its reservation"
                          + (f" ({record.last_error})" if record.last_error else ""))
    return JobService(job, Service.RESERVED, f"reserved: {why}")


@dataclass(frozen=True)
class RunShare:
    """What a run holds now: `containers` of the reservation (RESERVED) or of its static share
    (STATIC; `containers` is then the static level), and why."""

    service: Service
    containers: int
    why: str


#: The two reasons a run starts at once (`start_at_once`); the evaluation can turn each off.
EARLY_START = ("cannot-hold", "over-before-window")


def start_by(spec: ReservationSpec, deadline_ms: int, longest_ms: int, rules: Sequence[str] = EARLY_START) -> int | None:
    """The latest instant (epoch ms) a run of this reservation's period may start at once on its
    static share (`start_at_once`), None when never: d_j − longest when the reservation cannot
    hold the longest run ("cannot-hold"), the window's opening − longest ("over-before-window")."""
    if longest_ms <= 0:
        return None
    cuts = []
    if "cannot-hold" in rules and spec.arrival_ms + longest_ms > deadline_ms:
        cuts.append(deadline_ms - longest_ms)
    if "over-before-window" in rules:
        cuts.append(min(spec.arrival_ms, deadline_ms) - longest_ms)
    return max(cuts) if cuts else None


def start_at_once(spec: ReservationSpec, now_ms: int, deadline_ms: int, longest_ms: int,
                  rules: Sequence[str] = EARLY_START, static_level: int | None = None) -> bool:
    """Whether a run that can start at `now_ms`, before its reservation opens, starts on its
    static share at once instead of waiting, judged by the longest run the job had (`longest_ms`;
    0: unknown, then it waits): when such a run, started now, would meet the deadline, and either
    started when the reservation opens would not ("cannot-hold": the reservation cannot hold it)
    or would be over before the reservation even opens ("over-before-window": waiting only
    delays it) — i.e. by `start_by` — and its static share (`static_level`, when given) is at
    least the reservation's largest allocation: on fewer containers the run would be slower than
    the duration judged by. That period's reservation is then released."""
    if now_ms >= spec.arrival_ms:
        return False
    if static_level is not None and static_level < max((s.containers for s in spec.stages), default=0):
        return False
    by = start_by(spec, deadline_ms, longest_ms, rules)
    return by is not None and now_ms <= by


def run_share(spec: ReservationSpec | None, now_ms: int, static_level: int, started: bool,
              deadline_ms: int | None = None, longest_ms: int = 0, early: Sequence[str] = EARLY_START) -> RunShare:
    """The share of a run at `now_ms` (module docstring): `spec` is its reservation as the RM
    holds it now (DRA's grants and stretch included; None: the job is STATIC), `started`
    whether the run has begun, `deadline_ms` its period's d_j and `longest_ms` the job's
    longest training run (`start_at_once` with the `early` rules)."""
    if spec is None:
        return RunShare(Service.STATIC, static_level, "no reservation: its static share")
    if not started and deadline_ms is not None and start_at_once(spec, now_ms, deadline_ms, longest_ms, early, static_level):
        return RunShare(Service.STATIC, static_level, (
            f"it can start {(spec.arrival_ms - now_ms) / 1000:.0f}s before its reservation opens, and its longest "
            f"past run ({longest_ms / 1000:.0f}s) started now would meet d_j where waiting would not, or would end "
            "before the window opens: its static share from now, this period's reservation released"))
    if now_ms >= spec.deadline_ms:
        why = ("its reservation ended with the run unfinished" if started else
               "its input arrived after its reservation ended")
        return RunShare(Service.STATIC, static_level, f"{why}: its static share from then on")
    return RunShare(Service.RESERVED, spec.containers_at(now_ms),
                    "inside its reservation" if now_ms >= spec.arrival_ms else "waiting for its reservation's window")


@dataclass(frozen=True)
class FallbackMove:
    """Move `app_id` to `queue` (the job's own): its reservation is over (`why`)."""

    app_id: str
    job: str
    queue: str
    why: str


def fallback_moves(now: float, demands: Mapping[str, JobDemand], records: Sequence[ManagedReservation],
                   home_queues: Mapping[str, str], plan_queue: str,
                   settle_s: float = 5.0) -> tuple[list[FallbackMove], dict[str, str]]:
    """(the apps to move to their job's own queue, why others stay): an app in the plan queue
    that arrived inside one of its job's one-off reservation windows, when that reservation is
    over (ENDED, DELETING, DELETED: past its end, DRA's stretch included) — the RM put it in
    the plan's default queue — and its job has an own queue (`home_queues`) that is not the
    plan queue. Apps of jobs Morpheus does not reserve are never moved. `settle_s` after the end
    (the RM's plan follower moves the apps within its 1-s step)."""
    moves: list[FallbackMove] = []
    stays: dict[str, str] = {}
    over = (ReservationState.ENDED, ReservationState.DELETING, ReservationState.DELETED)
    for job, app in ((d.job, a) for d in demands.values() for a in d.per_app):
        if not in_plan(app.queue, plan_queue):
            continue
        mine = [r for r in records if r.job == job and r.spec.recurrence_ms == 0
                and r.spec.arrival_ms <= app.submitted_at * 1000 < r.spec.deadline_ms]
        if not mine:
            continue
        r = max(mine, key=lambda r: r.spec.arrival_ms)
        if r.state not in over or now < r.spec.deadline_ms / 1000 + settle_s:
            continue
        home = home_queues.get(job)
        if home is None or in_plan(home, plan_queue):
            stays[app.app_id] = (f"{job}'s reservation {r.reservation_id or r.key} ended with it running: it stays "
                                 f"in {plan_queue}-default" + ("" if home is None else f", its own queue ({home})")
                                 + ("; no own queue known (morpheus.fallback.home_queues)" if home is None else ""))
            continue
        moves.append(FallbackMove(app.app_id, job, home, (
            f"static fallback: {job}'s reservation {r.reservation_id or r.key} ended at "
            f"{r.spec.deadline_ms / 1000:.0f} with the app running; back to its own queue {home}")))
    return moves, stays


def home_queue(runs: list[JobRun], plan_queue: str) -> str | None:
    """A job's own queue: that of its last run outside the plan queue (before Morpheus reserved
    it, or a static fallback), None when every run was in the plan queue."""
    own = [r for r in runs if r.queue and not in_plan(r.queue, plan_queue)]
    if not own:
        return None
    q = max(own, key=lambda r: r.finished_at).queue
    return q if q.startswith("root.") else f"root.{q}"

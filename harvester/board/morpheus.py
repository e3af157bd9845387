"""Morpheus's published results (paper 002): what its loops publish and the SloAdvisor servicer,
the admin routes and `harvester slo` read (board/__init__.py explains the board).

Four items, each written by one side:
- `MODEL` (refit loop, loop/morpheus_refit.py): per recurring job its runs, the inferred SLO
  (or why none), the fitted skyline (or why none) and the proposal built from them;
- `CONTRACTS` (the sign-off routes, advice/morpheus_http.py; loaded from the store at start):
  each job's SLO contract (accepted / overridden / rejected) with its status history;
- `RESERVATIONS` (reservation loop, loop/morpheus_reservations.py): the plan (placements with
  LowCost's reasons, jobs not planned and why), every managed reservation with its state and
  status history, DRA grants, nudges, and how each job is served (reserved, or static fallback
  and why: decisions/static_fallback.py);
- `INGEST` (provenance loop): per source how far it was read and what was found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from harvester.board import Board, Item
from harvester.decisions.nudge import NudgeOutcome
from harvester.decisions.static_fallback import JobService
from harvester.decisions.reservation_lifecycle import ManagedReservation
from harvester.decisions.reservation_plan import Placement
from harvester.models.skyline import SkylineModel
from harvester.models.slo_contract import Proposal, SloContract, Terms
from harvester.models.slo_inference import JobSlo


@dataclass(frozen=True)
class JobModel:
    """One recurring job as the last refit saw it."""

    job: str
    runs: int                    # successful runs in the window
    synthesized: int             # of which made up by the embedded demo (never with a real RM)
    skyline_runs: int            # runs whose polled skyline was used
    slo: JobSlo
    skyline: SkylineModel | None
    proposal: Proposal
    home_queue: str | None = None  # the queue of its last run outside the plan queue (its own, static share)


@dataclass(frozen=True)
class MorpheusModel:
    version: int
    fitted_at: float
    jobs: tuple[JobModel, ...]
    single_runs: int = 0         # names seen once: not recurring (yet), not listed
    provenance_events: int = 0

    def job(self, name: str) -> JobModel | None:
        return next((j for j in self.jobs if j.job == name), None)


@dataclass(frozen=True)
class PlannedEntry:
    job: str
    terms: Terms
    placement: Placement
    why: str                     # whose terms (accepted, override, proposal)


@dataclass(frozen=True)
class GrantEntry:
    at: float
    key: str
    job: str
    level: int
    until: float
    reason: str
    fate: str
    as_of: float | None = None   # time of the data it was decided from (the action's as_of)


@dataclass(frozen=True)
class ActionEntry:
    """One reservation action the loop decided: what, why, and its fate (sent, refused: ...)."""

    at: float
    kind: str
    key: str
    reason: str
    fate: str
    as_of: float | None = None   # time of the data it was decided from (the action's as_of)


@dataclass(frozen=True)
class ReservationsView:
    at: float | None = None
    mode: str = "one_off"
    actuate: bool = False
    planned: tuple[PlannedEntry, ...] = ()
    not_planned: Mapping[str, str] = field(default_factory=dict)
    records: tuple[ManagedReservation, ...] = ()
    grants: tuple[GrantEntry, ...] = ()
    nudges: tuple[NudgeOutcome, ...] = ()
    plan_capacity: tuple[int, int] | None = None        # memory MB, vcores LowCost plans into
    plan_peak_cost: float | None = None
    listed_at: float | None = None
    problems: tuple[str, ...] = ()
    actions: tuple[ActionEntry, ...] = ()
    dra_skipped: Mapping[str, str] = field(default_factory=dict)   # open reservation → why no grant now
    handed_over: Mapping[str, str] = field(default_factory=dict)   # reservation → its owner now (Jockey)
    services: Mapping[str, JobService] = field(default_factory=dict)  # job → reserved / static fallback, why
    fallback_stays: Mapping[str, str] = field(default_factory=dict)   # app → why it stays in the plan's default queue

    def current(self, job: str, now: float) -> ManagedReservation | None:
        """The job's reservation whose window is open at `now`, else its next one."""
        now_ms = int(now * 1000)
        mine = [r for r in self.records if r.job == job and not r.terminal and r.reservation_id]
        open_ = [r for r in mine if r.spec.containers_at(now_ms) > 0]
        later = sorted((r for r in mine if r.spec.arrival_ms > now_ms), key=lambda r: r.spec.arrival_ms)
        return (open_ or later or [None])[0]


@dataclass(frozen=True)
class SourceStatus:
    source: str
    path: str
    offset: int
    read_at: float
    lines: int
    events: int
    problems: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class IngestStatus:
    sources: Mapping[str, SourceStatus] = field(default_factory=dict)


MODEL: Item[MorpheusModel | None] = Item("morpheus.model", None)
CONTRACTS: Item[Mapping[str, SloContract]] = Item("morpheus.contracts", {})
RESERVATIONS: Item[ReservationsView] = Item("morpheus.reservations", ReservationsView())
INGEST: Item[IngestStatus] = Item("morpheus.ingest", IngestStatus())


class MorpheusBoard:
    """Typed, stateless facade of the Morpheus items of one `Board`."""

    def __init__(self, board: Board) -> None:
        self.board = board

    def model(self) -> MorpheusModel | None:
        return self.board.get(MODEL)

    def publish_model(self, model: MorpheusModel) -> None:
        self.board.publish(MODEL, model)

    def contracts(self) -> Mapping[str, SloContract]:
        return self.board.get(CONTRACTS)

    def publish_contracts(self, contracts: Mapping[str, SloContract]) -> None:
        self.board.publish(CONTRACTS, dict(contracts))

    def reservations(self) -> ReservationsView:
        return self.board.get(RESERVATIONS)

    def publish_reservations(self, view: ReservationsView) -> None:
        self.board.publish(RESERVATIONS, view)

    def ingest(self) -> IngestStatus:
        return self.board.get(INGEST)

    def publish_source(self, status: SourceStatus) -> None:
        self.board.update(INGEST, lambda cur: IngestStatus({**cur.sources, status.source: status}))
